"""The catalog: one SQLite database (WAL) with libraries, documents, their lines and errors.

Document text is stored as compressed blocks of lines (`line_blocks`), so
`read` and `grep` never touch the original file (which may have changed or
gone) and always see the exact lines that were indexed.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.store.line_blocks import decode_range, encode_lines, is_blocked
from linkly_ls.core.store.line_cache import DocumentText, LineCache

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS libraries (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    paths TEXT NOT NULL,
    include_globs TEXT NOT NULL DEFAULT '[]',
    exclude_globs TEXT NOT NULL DEFAULT '[]',
    origin TEXT NOT NULL DEFAULT 'cli',
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    library TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    doc_type TEXT NOT NULL,
    title TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    word_count INTEGER NOT NULL,
    total_lines INTEGER NOT NULL,
    has_outline INTEGER NOT NULL,
    language TEXT,
    keywords TEXT NOT NULL,
    outline TEXT NOT NULL,
    page_starts TEXT NOT NULL,
    warnings TEXT NOT NULL,
    text_missing_reason TEXT,
    indexed_at REAL NOT NULL,
    keyword_state TEXT NOT NULL DEFAULT 'pending',
    lines BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_library ON documents(library);
CREATE INDEX IF NOT EXISTS documents_state ON documents(keyword_state);
CREATE TABLE IF NOT EXISTS errors (
    path TEXT PRIMARY KEY,
    library TEXT NOT NULL,
    message TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tombstones (doc_id TEXT PRIMARY KEY);
"""

_DOC_COLUMNS = (
    "doc_id, library, path, doc_type, title, size, mtime_ns, content_hash, word_count, "
    "total_lines, has_outline, language, keywords, outline, page_starts, warnings, "
    "text_missing_reason, indexed_at"
)
#: the same without the outline, whose parsing is most of a record's cost for a long book (3 ms for R's manual)
_DOC_COLUMNS_NO_OUTLINE = _DOC_COLUMNS.replace(" outline,", " '[]',")


def make_doc_id(path: str) -> str:
    """A document's id: stable for a path across restarts, re-indexing and rebuilds."""
    return hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]


@dataclass
class LibraryRecord:
    name: str
    paths: list[str]
    description: str = ""
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    origin: str = "cli"


@dataclass
class DocumentRecord:
    """Everything the catalog knows about one document, except its lines."""

    doc_id: str
    library: str
    path: str
    doc_type: str
    title: str
    size: int
    mtime_ns: int
    content_hash: str
    word_count: int
    total_lines: int
    has_outline: bool
    language: str | None
    keywords: list[str]
    outline: list[OutlineNode]
    page_starts: list[int]
    warnings: list[str]
    text_missing_reason: str | None
    indexed_at: float

    @property
    def modified_at(self) -> float:
        return self.mtime_ns / 1e9


@dataclass
class ErrorRecord:
    path: str
    library: str
    message: str
    size: int
    mtime_ns: int


class Catalog:
    """Thread-safe access to the catalog database. One connection per thread."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._local = threading.local()
        self._line_cache = LineCache()
        if not read_only:
            with self.connect() as db:
                db.executescript(_SCHEMA)
                db.execute(
                    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )

    def connect(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            if self.read_only:
                uri = f"file:{self.path}?mode=ro"
                connection = sqlite3.connect(uri, uri=True, timeout=30, check_same_thread=False)
            else:
                connection = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
            connection.execute("PRAGMA busy_timeout=30000")
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    # libraries

    def upsert_library(self, library: LibraryRecord) -> None:
        with self.connect() as db:
            db.execute(
                "INSERT INTO libraries(name, description, paths, include_globs, exclude_globs, origin, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "description=excluded.description, paths=excluded.paths, include_globs=excluded.include_globs, "
                "exclude_globs=excluded.exclude_globs, origin=excluded.origin",
                (
                    library.name,
                    library.description,
                    json.dumps(library.paths),
                    json.dumps(library.include),
                    json.dumps(library.exclude),
                    library.origin,
                    time.time(),
                ),
            )

    def libraries(self) -> list[LibraryRecord]:
        rows = self.connect().execute(
            "SELECT name, description, paths, include_globs, exclude_globs, origin FROM libraries ORDER BY name"
        )
        return [
            LibraryRecord(
                name=row[0],
                description=row[1],
                paths=json.loads(row[2]),
                include=json.loads(row[3]),
                exclude=json.loads(row[4]),
                origin=row[5],
            )
            for row in rows
        ]

    def library(self, name: str) -> LibraryRecord | None:
        return next((lib for lib in self.libraries() if lib.name == name), None)

    def document_counts(self) -> dict[str, int]:
        rows = self.connect().execute("SELECT library, COUNT(*) FROM documents GROUP BY library")
        return {name: count for name, count in rows}

    # documents

    def put_document(self, record: DocumentRecord, lines: list[str]) -> None:
        """Insert or replace a document; its keyword index entry is then pending."""
        self.put_documents([(record, lines)])

    def put_documents(self, documents: list[tuple[DocumentRecord, list[str]]]) -> None:
        """Insert or replace documents in one transaction (one commit, not one per document)."""
        if not documents:
            return
        rows = [_document_row(record, lines) for record, lines in documents]
        with self.connect() as db:
            for record, _ in documents:
                db.execute("DELETE FROM errors WHERE path = ?", (record.path,))
                db.execute("DELETE FROM tombstones WHERE doc_id = ?", (record.doc_id,))
            db.executemany(
                f"INSERT OR REPLACE INTO documents({_DOC_COLUMNS}, keyword_state, lines) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'pending',?)",
                rows,
            )
        for record, _ in documents:
            self._forget_lines(record.doc_id)

    def ocr_pending_paths(self, library: str) -> list[str]:
        """Paths of a library's documents whose OCR was left for a second pass that has not run yet."""
        rows = self.connect().execute(
            "SELECT path FROM documents WHERE library = ? AND warnings LIKE '%\"OCR pending%' ORDER BY path",
            (library,),
        )
        return [row[0] for row in rows]

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
        """Drop a document; a tombstone remains until the keyword index forgets it too."""
        with self.connect() as db:
            db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
            db.execute("INSERT OR IGNORE INTO tombstones(doc_id) VALUES (?)", (doc_id,))
        self._forget_lines(doc_id)

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

    def get(self, doc_id: str, with_outline: bool = True) -> DocumentRecord | None:
        """The document's record; `with_outline=False` leaves its `outline` empty, for callers that
        need the record but not the outline (`grep`, `read`)."""
        columns = _DOC_COLUMNS if with_outline else _DOC_COLUMNS_NO_OUTLINE
        row = self.connect().execute(f"SELECT {columns} FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return _record(row) if row else None

    def get_many(self, doc_ids: list[str]) -> dict[str, DocumentRecord]:
        found: dict[str, DocumentRecord] = {}
        db = self.connect()
        for start in range(0, len(doc_ids), 500):
            batch = doc_ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in db.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE doc_id IN ({marks})", batch):
                record = _record(row)
                found[record.doc_id] = record
        return found

    def by_path(self, path: str) -> DocumentRecord | None:
        row = self.connect().execute(
            f"SELECT {_DOC_COLUMNS} FROM documents WHERE path = ?", (path,)
        ).fetchone()
        return _record(row) if row else None

    def file_states(self, library: str) -> dict[str, tuple[str, int, int, str]]:
        """path -> (doc_id, size, mtime_ns, content_hash) for a library's documents."""
        rows = self.connect().execute(
            "SELECT path, doc_id, size, mtime_ns, content_hash FROM documents WHERE library = ?", (library,)
        )
        return {row[0]: (row[1], row[2], row[3], row[4]) for row in rows}

    def all_documents(self, library: str | None = None) -> list[DocumentRecord]:
        if library is None:
            rows = self.connect().execute(f"SELECT {_DOC_COLUMNS} FROM documents ORDER BY path")
        else:
            rows = self.connect().execute(
                f"SELECT {_DOC_COLUMNS} FROM documents WHERE library = ? ORDER BY path", (library,)
            )
        return [_record(row) for row in rows]

    def count(self) -> int:
        return self.connect().execute("SELECT COUNT(*) FROM documents").fetchone()[0]

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
                "INSERT OR REPLACE INTO errors(path, library, message, size, mtime_ns, at) VALUES (?,?,?,?,?,?)",
                (error.path, error.library, error.message, error.size, error.mtime_ns, time.time()),
            )

    def remove_error(self, path: str) -> None:
        with self.connect() as db:
            db.execute("DELETE FROM errors WHERE path = ?", (path,))

    def errors(self, library: str | None = None) -> list[ErrorRecord]:
        query = "SELECT path, library, message, size, mtime_ns FROM errors"
        rows = (
            self.connect().execute(query + " ORDER BY path")
            if library is None
            else self.connect().execute(query + " WHERE library = ? ORDER BY path", (library,))
        )
        return [ErrorRecord(*row) for row in rows]

    def error_for(self, path: str) -> ErrorRecord | None:
        row = self.connect().execute(
            "SELECT path, library, message, size, mtime_ns FROM errors WHERE path = ?", (path,)
        ).fetchone()
        return ErrorRecord(*row) if row else None


def _document_row(record: DocumentRecord, lines: list[str]) -> tuple:
    blob = encode_lines(lines)
    return (
        record.doc_id,
        record.library,
        record.path,
        record.doc_type,
        record.title,
        record.size,
        record.mtime_ns,
        record.content_hash,
        record.word_count,
        record.total_lines,
        int(record.has_outline),
        record.language,
        json.dumps(record.keywords, ensure_ascii=False),
        json.dumps([node.to_dict() for node in record.outline], ensure_ascii=False),
        json.dumps(record.page_starts),
        json.dumps(record.warnings, ensure_ascii=False),
        record.text_missing_reason,
        record.indexed_at,
        blob,
    )


def _record(row: tuple) -> DocumentRecord:
    return DocumentRecord(
        doc_id=row[0],
        library=row[1],
        path=row[2],
        doc_type=row[3],
        title=row[4],
        size=row[5],
        mtime_ns=row[6],
        content_hash=row[7],
        word_count=row[8],
        total_lines=row[9],
        has_outline=bool(row[10]),
        language=row[11],
        keywords=json.loads(row[12]),
        outline=[OutlineNode.from_dict(node) for node in json.loads(row[13])],
        page_starts=json.loads(row[14]),
        warnings=json.loads(row[15]),
        text_missing_reason=row[16],
        indexed_at=row[17],
    )
