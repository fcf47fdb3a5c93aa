"""The catalog's read queries: libraries, document records and the projections of them tools need.

`CatalogReads` is mixed into `Catalog`, whose per-thread `connect()` it uses;
writes, keyword bookkeeping and document text stay in `catalog.py`.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping

from linkly_ls.core.store.records import (
    DOC_COLUMNS,
    DOC_COLUMNS_NO_OUTLINE,
    LAYOUT_COLUMNS,
    SUMMARY_COLUMNS,
    DocumentLayout,
    DocumentRecord,
    DocumentSummary,
    ErrorRecord,
    LibraryRecord,
    SkippedCount,
    WorkFacts,
    document_from_row,
    layout_from_row,
    library_from_row,
    summary_from_row,
)
from linkly_ls.core.store.schema import Connection

#: ids per `IN (...)` query: well under SQLite's limit on bound values
BATCH = 500
#: parsed layouts kept per process (an outline of a large book is hundreds of kB of JSON)
LAYOUT_CACHE_SIZE = 256


def _nanoseconds(seconds: float) -> int:
    """Unix seconds as the catalog's nanoseconds, held to SQLite's 64-bit integers (year 1 and 9999 are
    past them: such a bound passes every date or none)."""
    return max(-(2**63), min(2**63 - 1, int(seconds * 1e9)))


class LayoutCache:
    """Parsed layouts of recently shown documents, each with the version it was parsed from.

    Every hit and grep match names its page and section, so the same few
    documents' outlines would be parsed from JSON at every call; an entry is
    used only while the document's `indexed_at` and `content_hash` are those it
    was read with, so a document re-indexed by another process is read again.
    """

    def __init__(self, size: int = LAYOUT_CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[tuple[float, str], DocumentLayout]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, doc_id: str, version: tuple[float, str]) -> DocumentLayout | None:
        with self._lock:
            entry = self._entries.get(doc_id)
            if entry is None or entry[0] != version:
                return None
            self._entries.move_to_end(doc_id)
            return entry[1]

    def put(self, doc_id: str, version: tuple[float, str], layout: DocumentLayout) -> None:
        with self._lock:
            self._entries[doc_id] = (version, layout)
            self._entries.move_to_end(doc_id)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


class CatalogReads:
    connect: Callable[[], Connection]
    _layout_cache: LayoutCache

    # libraries

    def libraries(self) -> list[LibraryRecord]:
        rows = self.connect().execute(
            "SELECT name, description, paths, include_globs, exclude_globs, origin, respect_gitignore "
            "FROM libraries ORDER BY name"
        )
        return [library_from_row(row) for row in rows]

    def library(self, name: str) -> LibraryRecord | None:
        return next((lib for lib in self.libraries() if lib.name == name), None)

    def document_counts(self) -> dict[str, int]:
        rows = self.connect().execute("SELECT library, COUNT(*) FROM documents GROUP BY library")
        return {name: count for name, count in rows}

    # document records

    def get(self, doc_id: str, with_outline: bool = True) -> DocumentRecord | None:
        """The document's record; `with_outline=False` leaves its `outline` empty, for callers that
        need the record but not the outline (`grep`, `read`)."""
        columns = DOC_COLUMNS if with_outline else DOC_COLUMNS_NO_OUTLINE
        row = self.connect().execute(f"SELECT {columns} FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return document_from_row(row) if row else None

    def get_many(self, doc_ids: list[str]) -> dict[str, DocumentRecord]:
        found: dict[str, DocumentRecord] = {}
        db = self.connect()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            for row in db.execute(f"SELECT {DOC_COLUMNS} FROM documents WHERE doc_id IN ({marks})", batch):
                record = document_from_row(row)
                found[record.doc_id] = record
        return found

    def by_path(self, path: str) -> DocumentRecord | None:
        row = self.connect().execute(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE path = ?", (path,)
        ).fetchone()
        return document_from_row(row) if row else None

    def all_documents(self, library: str | None = None) -> list[DocumentRecord]:
        if library is None:
            rows = self.connect().execute(f"SELECT {DOC_COLUMNS} FROM documents ORDER BY path")
        else:
            rows = self.connect().execute(
                f"SELECT {DOC_COLUMNS} FROM documents WHERE library = ? ORDER BY path", (library,)
            )
        return [document_from_row(row) for row in rows]

    def count(self) -> int:
        return self.connect().execute("SELECT COUNT(*) FROM documents").fetchone()[0]

    def change_stamp(self) -> tuple[tuple[int, int], ...]:
        """What moves when the catalog changes, whichever process commits: the database file's and its
        write-ahead log's times and sizes (a commit appends to the log, a checkpoint writes the file). A
        reader compares two to learn that the writer elsewhere indexed. `PRAGMA data_version` cannot
        tell it: a connection whose read snapshot a statement keeps open reads the same value."""
        stamps = []
        for path in (self.path, self.path.with_name(self.path.name + "-wal")):
            try:
                stat = path.stat()
            except OSError:
                stamps.append((0, 0))
            else:
                stamps.append((stat.st_mtime_ns, stat.st_size))
        return tuple(stamps)

    def type_counts(self) -> list[tuple[str, int]]:
        """(doc_type, documents) of every indexed type, by type."""
        return self.connect().execute(
            "SELECT doc_type, COUNT(*) FROM documents GROUP BY doc_type ORDER BY doc_type"
        ).fetchall()

    # projections

    def file_states(
        self, library: str, extractor_versions: Mapping[str, int] | None = None
    ) -> dict[str, tuple[str, int, int, str]]:
        """path -> (doc_id, size, mtime_ns, content_hash) for a library's documents.

        A document whose links are still to be read (a catalog from before links), or that an older
        extractor read (`extractor_versions`: document type -> current version, 1 for the others),
        reports no mtime and no hash, so the indexer reads it again."""
        versions = extractor_versions or {}
        rows = self.connect().execute(
            "SELECT path, doc_id, size, mtime_ns, content_hash, links_state = 'pending', doc_type, extractor "
            "FROM documents WHERE library = ?",
            (library,),
        )
        states: dict[str, tuple[str, int, int, str]] = {}
        for path, doc_id, size, mtime_ns, content_hash, links_pending, doc_type, extractor in rows:
            if links_pending or extractor < versions.get(doc_type, 1):
                mtime_ns, content_hash = -1, ""
            states[path] = (doc_id, size, mtime_ns, content_hash)
        return states

    def ocr_pending_paths(self, library: str) -> list[str]:
        """Paths of a library's documents whose OCR was left for a second pass that has not run yet."""
        rows = self.connect().execute(
            "SELECT path FROM documents WHERE library = ? AND warnings LIKE '%\"OCR pending%' ORDER BY path",
            (library,),
        )
        return [row[0] for row in rows]

    def ocr_unread_paths(self, library: str, reasons: tuple[str, ...]) -> list[str]:
        """Paths of a library's documents whose images were not read for one of `reasons` (OCR turned off,
        no OCR engine): once OCR can run they are read again, though the files did not change."""
        if not reasons:
            return []
        matching = " OR ".join("warnings LIKE ?" for _ in reasons)
        rows = self.connect().execute(
            f"SELECT path FROM documents WHERE library = ? AND ({matching}) ORDER BY path",
            (library, *(f"%not read: {reason}%" for reason in reasons)),
        )
        return [row[0] for row in rows]

    def moved_to(self, doc_id: str) -> str | None:
        """The id of the document whose file was at `doc_id`'s path and moved unchanged, if any (`record_moves`)."""
        try:
            row = self.connect().execute("SELECT now_id FROM moved WHERE doc_id = ?", (doc_id,)).fetchone()
        except sqlite3.OperationalError:  # a catalog an older writer keeps, opened here read-only: no such table
            return None
        return row[0] if row else None

    def doc_ids(self) -> list[str]:
        """Every document's id, in no particular order."""
        return [row[0] for row in self.connect().execute("SELECT doc_id FROM documents")]

    def paths_and_times(self) -> list[tuple[str, str, int]]:
        """(doc_id, path, mtime_ns) of every document, in no particular order."""
        return self.connect().execute("SELECT doc_id, path, mtime_ns FROM documents").fetchall()

    def paths(self, library: str | None = None) -> list[str]:
        """Every document's path (of one library, or of all), in no particular order."""
        query = "SELECT path FROM documents"
        rows = (
            self.connect().execute(query + " WHERE library = ?", (library,))
            if library is not None
            else self.connect().execute(query)
        )
        return [row[0] for row in rows]

    def documents_matching(
        self,
        library: str | None = None,
        doc_types: list[str] | None = None,
        modified_after: float | None = None,
        modified_before: float | None = None,
    ) -> list[tuple[str, str]]:
        """(doc_id, path) of the documents that pass every given filter; times are Unix seconds, inclusive."""
        clauses: list[str] = []
        values: list[object] = []
        if library is not None:
            clauses.append("library = ?")
            values.append(library)
        if doc_types:
            clauses.append(f"doc_type IN ({','.join('?' * len(doc_types))})")
            values.extend(doc_types)
        if modified_after is not None:
            clauses.append("mtime_ns >= ?")
            values.append(_nanoseconds(modified_after))
        if modified_before is not None:
            clauses.append("mtime_ns <= ?")
            values.append(_nanoseconds(modified_before))
        where = " AND ".join(clauses) or "1"
        return self.connect().execute(f"SELECT doc_id, path FROM documents WHERE {where}", values).fetchall()

    def content_hashes(self, doc_ids: list[str]) -> dict[str, str]:
        """doc_id -> content hash, for those of `doc_ids` the catalog has."""
        found: dict[str, str] = {}
        db = self.connect()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            found.update(db.execute(f"SELECT doc_id, content_hash FROM documents WHERE doc_id IN ({marks})", batch))
        return found

    def work_facts(self, doc_ids: list[str]) -> dict[str, WorkFacts]:
        """doc_id -> what tells whether two documents are one work (`same_work`), for those of `doc_ids` the
        catalog has."""
        found: dict[str, WorkFacts] = {}
        db = self.connect()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            for doc_id, content_hash, doc_type, title, path, library, keywords, word_count in db.execute(
                "SELECT doc_id, content_hash, doc_type, title, path, library, keywords, word_count FROM documents "
                f"WHERE doc_id IN ({marks})",
                batch,
            ):
                found[doc_id] = WorkFacts(
                    doc_id, content_hash, doc_type, title, path, library, tuple(json.loads(keywords)), word_count
                )
        return found

    def named_words(self) -> Iterator[tuple[str, str, list[str], list[dict]]]:
        """(title, path, keywords, outline as stored: nested dicts with `title` and `children`) of every
        document: the words a person names documents by, for completing a word being typed."""
        for title, path, keywords, outline in self.connect().execute("SELECT title, path, keywords, outline FROM documents"):
            yield title, path, json.loads(keywords), json.loads(outline)

    def summaries(self, doc_ids: list[str]) -> dict[str, DocumentSummary]:
        """doc_id -> what a search hit shows of it, for those of `doc_ids` the catalog has (no outline is parsed)."""
        found: dict[str, DocumentSummary] = {}
        db = self.connect()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            for row in db.execute(f"SELECT {SUMMARY_COLUMNS} FROM documents WHERE doc_id IN ({marks})", batch):
                summary = summary_from_row(row)
                found[summary.doc_id] = summary
        return found

    def layouts(self, doc_ids: list[str]) -> dict[str, DocumentLayout]:
        """doc_id -> its page starts and stored outline, for those of `doc_ids` the catalog has."""
        found: dict[str, DocumentLayout] = {}
        stale: list[str] = []
        db = self.connect()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            query = f"SELECT doc_id, indexed_at, content_hash FROM documents WHERE doc_id IN ({marks})"
            for doc_id, indexed_at, content_hash in db.execute(query, batch):
                cached = self._layout_cache.get(doc_id, (indexed_at, content_hash))
                if cached is not None:
                    found[doc_id] = cached
                else:
                    stale.append(doc_id)
        for start in range(0, len(stale), BATCH):
            batch = stale[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            query = f"SELECT {LAYOUT_COLUMNS}, indexed_at, content_hash FROM documents WHERE doc_id IN ({marks})"
            for row in db.execute(query, batch):
                layout = layout_from_row(row)
                self._layout_cache.put(layout.doc_id, (row[-2], row[-1]), layout)
                found[layout.doc_id] = layout
        return found

    # errors

    def errors(self, library: str | None = None) -> list[ErrorRecord]:
        query = "SELECT path, library, message, size, mtime_ns, extractor FROM errors"
        rows = (
            self.connect().execute(query + " ORDER BY path")
            if library is None
            else self.connect().execute(query + " WHERE library = ? ORDER BY path", (library,))
        )
        return [ErrorRecord(*row) for row in rows]

    def error_counts(self) -> dict[str, int]:
        """library -> how many of its files failed to index."""
        rows = self.connect().execute("SELECT library, COUNT(*) FROM errors GROUP BY library")
        return {name: count for name, count in rows}

    # skipped files

    def skipped(self, library: str | None = None) -> list[SkippedCount]:
        """What the libraries' last full walks left out, per folder and reason, most files first."""
        query = "SELECT library, folder, reason, count FROM skipped"
        order = " ORDER BY count DESC, folder, reason"
        rows = (
            self.connect().execute(query + order)
            if library is None
            else self.connect().execute(query + " WHERE library = ?" + order, (library,))
        )
        return [SkippedCount(*row) for row in rows]

    def error_for(self, path: str) -> ErrorRecord | None:
        row = self.connect().execute(
            "SELECT path, library, message, size, mtime_ns, extractor FROM errors WHERE path = ?", (path,)
        ).fetchone()
        return ErrorRecord(*row) if row else None
