"""The catalog: libraries, documents, their lines and errors, in one SQLite database (WAL).

Document text is stored as compressed blocks of lines (`line_blocks`), so
`read` and `grep` never touch the original file (which may have changed or
gone) and always see the exact lines that were indexed. This module holds the
writes and the text; the read queries are in `queries.py`, the tables in
`schema.py`, the record types in `records.py`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path

from linkly_ls.core.store.line_blocks import decode_range, is_blocked
from linkly_ls.core.store.link_rows import LinkReads, drop_links, replace_aliases, replace_anchors, replace_links
from linkly_ls.core.store.line_cache import DocumentText, LineCache
from linkly_ls.core.store.queries import BATCH, CatalogReads, LayoutCache
from linkly_ls.core.store.records import (
    DOC_COLUMNS,
    DocumentRecord,
    DocumentSummary,
    ErrorRecord,
    LibraryRecord,
    LinkRecord,
    SkippedCount,
    document_row,
    library_row,
    make_doc_id,
    name_key,
    title_key,
)
from linkly_ls.core.store.schema import (
    BUSY_TIMEOUT_MS,
    LOG_EMPTYING_WAIT_MS,
    SCHEMA_VERSION,
    Connection,
    StoreError,
    create_catalog_tables,
    open_connection,
)

__all__ = [
    "SCHEMA_VERSION",
    "Catalog",
    "DocumentRecord",
    "DocumentSummary",
    "ErrorRecord",
    "LibraryRecord",
    "LinkRecord",
    "SkippedCount",
    "StoreError",
    "make_doc_id",
]


class Catalog(CatalogReads, LinkReads):
    """Thread-safe access to the catalog database. One connection per thread."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._local = threading.local()
        self._line_cache = LineCache()
        self._layout_cache = LayoutCache()
        if not read_only:
            create_catalog_tables(self.connect())

    def connect(self) -> Connection:
        """This thread's connection (opened on first use). Storage modules alone run SQL on it."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = open_connection(self.path, self.read_only)
            self._local.connection = connection
        return connection

    def empty_log(self) -> None:
        """Write the log of changes (SQLite's WAL) into the file and empty it, when no reader holds it: a
        deleted or edited document's old text stayed in `catalog.sqlite3-wal` while a server ran. Waits
        for readers a moment only; a busy log is emptied after a later run."""
        db = self.connect()
        db.execute(f"PRAGMA busy_timeout={LOG_EMPTYING_WAIT_MS}")
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.OperationalError:
            pass
        finally:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    # libraries

    def upsert_library(self, library: LibraryRecord) -> None:
        with self.connect() as db:
            db.execute(
                "INSERT INTO libraries(name, description, paths, include_globs, exclude_globs, origin, respect_gitignore, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "description=excluded.description, paths=excluded.paths, include_globs=excluded.include_globs, "
                "exclude_globs=excluded.exclude_globs, origin=excluded.origin, "
                "respect_gitignore=excluded.respect_gitignore",
                library_row(library, time.time()),
            )

    def remove_library(self, name: str) -> list[str]:
        """Forget a library in one transaction: its documents (each leaves a tombstone for the keyword
        index) with their links, aliases, anchors and the ids that led to them after a move, its errors,
        its skipped counts and the library itself. Returns the removed doc_ids."""
        with self.connect() as db:
            doc_ids = [row[0] for row in db.execute("SELECT doc_id FROM documents WHERE library = ?", (name,))]
            db.executemany("INSERT OR IGNORE INTO tombstones(doc_id) VALUES (?)", [(doc_id,) for doc_id in doc_ids])
            for table, column in (("aliases", "doc_id"), ("anchors", "doc_id"), ("links", "source_id"), ("moved", "now_id")):
                db.execute(f"DELETE FROM {table} WHERE {column} IN (SELECT doc_id FROM documents WHERE library = ?)", (name,))
            db.execute("DELETE FROM documents WHERE library = ?", (name,))
            db.execute("DELETE FROM errors WHERE library = ?", (name,))
            db.execute("DELETE FROM skipped WHERE library = ?", (name,))
            db.execute("DELETE FROM libraries WHERE name = ?", (name,))
        for doc_id in doc_ids:
            self._forget_lines(doc_id)
        return doc_ids

    def replace_skipped(self, library: str, counts: list[SkippedCount]) -> None:
        """Record what a full walk of the library left out, instead of what the previous one did."""
        with self.connect() as db:
            db.execute("DELETE FROM skipped WHERE library = ?", (library,))
            db.executemany(
                "INSERT INTO skipped(library, folder, reason, count) VALUES (?, ?, ?, ?)",
                [(library, count.folder, count.reason, count.count) for count in counts],
            )

    # documents

    def put_document(self, record: DocumentRecord, lines: list[str]) -> None:
        """Insert or replace a document; its keyword index entry is then pending."""
        self.put_documents([(record, lines)])

    def put_documents(
        self,
        documents: list[tuple[DocumentRecord, list[str]]],
        links: dict[str, list[LinkRecord]] | None = None,
        extractor_versions: Mapping[str, int] | None = None,
        aliases: dict[str, list[str]] | None = None,
        anchors: dict[str, dict[str, int]] | None = None,
    ) -> list[str]:
        """Insert or replace documents, their links, aliases and anchors (`links`, `aliases` and `anchors` by
        doc_id; none when absent), in one transaction (one commit, not one per document); each records the
        version of its type's extractor (`extractor_versions`, 1 for the types not named).

        Returns the doc_ids whose content was already in the catalog: read again, not changed."""
        if not documents:
            return []
        versions = extractor_versions or {}
        rows = [
            (*document_row(record, lines), name_key(record.path), title_key(record.title), versions.get(record.doc_type, 1))
            for record, lines in documents
        ]
        links = links or {}
        with self.connect() as db:
            stored = self._content_hashes(db, [record.doc_id for record, _ in documents])
            read_again = [record.doc_id for record, _ in documents if stored.get(record.doc_id) == record.content_hash]
            for record, _ in documents:
                db.execute("DELETE FROM errors WHERE path = ?", (record.path,))
                db.execute("DELETE FROM tombstones WHERE doc_id = ?", (record.doc_id,))
            db.executemany(
                f"INSERT OR REPLACE INTO documents({DOC_COLUMNS}, keyword_state, lines, name_key, title_key, extractor) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'pending',?,?,?,?)",
                rows,
            )
            for record, _ in documents:
                replace_links(db, record.doc_id, links.get(record.doc_id, []))
                replace_aliases(db, record.doc_id, (aliases or {}).get(record.doc_id, []))
                replace_anchors(db, record.doc_id, (anchors or {}).get(record.doc_id, {}))
        for record, _ in documents:
            self._forget_lines(record.doc_id)
        return read_again

    @staticmethod
    def _content_hashes(db: Connection, doc_ids: list[str]) -> dict[str, str]:
        """doc_id -> content hash of those of `doc_ids` the catalog holds, a query per BATCH."""
        found: dict[str, str] = {}
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            found.update(db.execute(f"SELECT doc_id, content_hash FROM documents WHERE doc_id IN ({marks})", batch))
        return found

    def set_warnings(self, doc_id: str, warnings: list[str], text_missing_reason: str | None) -> None:
        with self.connect() as db:
            db.execute(
                "UPDATE documents SET warnings = ?, text_missing_reason = ? WHERE doc_id = ?",
                (json.dumps(warnings, ensure_ascii=False), text_missing_reason, doc_id),
            )

    def touch_document(self, doc_id: str, mtime_ns: int) -> None:
        """Record a new mtime for a file whose content did not change."""
        with self.connect() as db:
            db.execute("UPDATE documents SET mtime_ns = ? WHERE doc_id = ?", (mtime_ns, doc_id))

    def remove_document(self, doc_id: str) -> None:
        """Drop a document, and the ids that led to it after a move (a new file at its path is another
        document); a tombstone remains until the keyword index forgets it too."""
        with self.connect() as db:
            db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
            db.execute("DELETE FROM moved WHERE now_id = ?", (doc_id,))
            drop_links(db, doc_id)
            replace_aliases(db, doc_id, [])
            replace_anchors(db, doc_id, {})
            db.execute("INSERT OR IGNORE INTO tombstones(doc_id) VALUES (?)", (doc_id,))
        self._forget_lines(doc_id)

    def record_moves(self, moves: dict[str, str]) -> None:
        """Note that each document id of `moves` now names the document of the other (its file moved unchanged):
        an id an agent or a note kept still reaches it (`moved_to`)."""
        if moves:
            with self.connect() as db:
                db.executemany("INSERT OR REPLACE INTO moved(doc_id, now_id) VALUES (?, ?)", moves.items())
                db.executemany("UPDATE moved SET now_id = ? WHERE now_id = ?", [(new, old) for old, new in moves.items()])

    def pending_keyword_work(self) -> tuple[list[str], list[str]]:
        """(doc_ids to (re)add to the keyword index, doc_ids to delete from it)."""
        db = self.connect()
        pending = [row[0] for row in db.execute("SELECT doc_id FROM documents WHERE keyword_state = 'pending'")]
        tombstones = [row[0] for row in db.execute("SELECT doc_id FROM tombstones")]
        return pending, tombstones

    def mark_all_keyword_pending(self) -> None:
        """Queue every document for the keyword index again (its schema changed)."""
        with self.connect() as db:
            db.execute("UPDATE documents SET keyword_state = 'pending' WHERE keyword_state != 'pending'")

    def mark_keyword_done(self, added: list[str], deleted: list[str]) -> None:
        with self.connect() as db:
            db.executemany(
                "UPDATE documents SET keyword_state = 'indexed' WHERE doc_id = ?", [(d,) for d in added]
            )
            db.executemany("DELETE FROM tombstones WHERE doc_id = ?", [(d,) for d in deleted])

    # text

    def lines(self, doc_id: str) -> list[str]:
        """A document's lines (decoded once, then served from the line cache)."""
        document = self.document_text(doc_id)
        return document.lines() if document is not None else []

    def document_text(self, doc_id: str) -> DocumentText | None:
        """A document's whole text, cached while the document's row has the same version."""
        cached, stored = self._cached_or_stored(doc_id)
        if stored is None:
            return cached
        document = DocumentText.from_blob(stored[1], stored[0])
        self._line_cache.put(doc_id, document)
        return document

    def line_range(self, doc_id: str, first: int, count: int) -> list[str]:
        """Lines first .. first+count-1 (1-based): from the line cache when the document is
        there, else decompressing only the blocks that hold them (the cache is not filled)."""
        cached, stored = self._cached_or_stored(doc_id)
        if stored is not None and is_blocked(stored[1]):
            return decode_range(stored[1], first - 1, count)
        if stored is not None:  # stored before blocks existed: decode the whole text once
            cached = DocumentText.from_blob(stored[1], stored[0])
            self._line_cache.put(doc_id, cached)
        return cached.line_range(first, count) if cached is not None else []

    def _cached_or_stored(self, doc_id: str) -> tuple[DocumentText | None, tuple[tuple[float, str], bytes] | None]:
        """(the cached text, None) when the cache has the current version, else (None, (version, blob)),
        or (None, None) when there is no such document."""
        db = self.connect()
        row = db.execute("SELECT indexed_at, content_hash FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        cached = self._line_cache.get(doc_id, (row[0], row[1])) if row is not None else None
        if row is None or cached is not None:
            return cached, None
        row = db.execute(
            "SELECT indexed_at, content_hash, lines FROM documents WHERE doc_id = ?", (doc_id,)
        ).fetchone()
        return None, (((row[0], row[1]), row[2]) if row is not None else None)

    def _forget_lines(self, doc_id: str) -> None:
        self._line_cache.forget(doc_id)

    # errors

    def put_error(self, error: ErrorRecord) -> None:
        with self.connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO errors(path, library, message, size, mtime_ns, at, extractor) VALUES (?,?,?,?,?,?,?)",
                (error.path, error.library, error.message, error.size, error.mtime_ns, time.time(), error.extractor),
            )

    def remove_error(self, path: str) -> None:
        with self.connect() as db:
            db.execute("DELETE FROM errors WHERE path = ?", (path,))
