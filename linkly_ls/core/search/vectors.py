"""The vector index: one usearch HNSW index per embedding model, next to the catalog.

Keys are integer chunk ids; the table `vector_chunks` of the catalog database
maps each to (doc_id, chunk number, line range, hash of the embedded text), and
`vector_docs` records which version (content hash) of a document the vectors were
computed from. The text hash lets a passage whose exact text already has a vector
(a copied or renamed document, an unchanged section of an edited one) reuse it.

Crash safety comes from one ordering rule: rows are committed only *after* the
index file holding their vectors was saved (atomically: temporary file, then
`os.replace`), and rows are deleted *before* their vectors are removed. So every
key in the database is in the saved file; a key in the file without a row is an
orphan, dropped by `reconcile()` when a writer opens the index.

One process writes (it holds `writer.lock`); others open the saved file as a
read-only memory map (`view`) and re-open it when it changes.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.writer_lock import WriterLock

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_chunks (
    model TEXT NOT NULL,
    key INTEGER NOT NULL,
    doc_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text_hash INTEGER,
    PRIMARY KEY (model, key)
);
CREATE INDEX IF NOT EXISTS vector_chunks_doc ON vector_chunks(model, doc_id);
CREATE TABLE IF NOT EXISTS vector_docs (
    model TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    PRIMARY KEY (model, doc_id)
);
"""
#: below this many candidate chunks a filtered search scans them exactly instead of walking the graph
EXACT_SCAN_LIMIT = 20_000


@dataclass
class ChunkRef:
    doc_id: str
    chunk: int
    start_line: int
    end_line: int
    #: 64-bit hash of the text the vector was computed from (None: never reused)
    text_hash: int | None = None


@dataclass
class VectorHit:
    doc_id: str
    chunk: int
    start_line: int
    end_line: int
    #: cosine similarity of the query and the chunk, -1..1
    score: float


def _usearch():
    """The usearch Index class, imported late and after onnxruntime.

    usearch's wheel links its own C++ runtime statically; importing onnxruntime
    *after* it crashes the interpreter (usearch 2.26, onnxruntime 1.32, Linux), so
    onnxruntime, when installed, is always loaded first.
    """
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    from usearch.index import Index

    return Index


def _cosines(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Rows (normalised here) times the query. `einsum`, not `@`: for one vector, BLAS's threads cost
    ten times the arithmetic (2.7 ms of CPU for 1,700 chunks against 0.14 ms), more on a busy machine."""
    import numpy as np  # loaded with the vectors, not with every open index

    matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
    return np.einsum("ij,j->i", matrix, np.asarray(query, dtype=np.float32))


def ensure_schema(catalog: Catalog) -> None:
    with catalog.connect() as db:
        db.executescript(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(vector_chunks)")}
        if "text_hash" not in columns:  # an index from before text reuse: its rows just never match
            db.execute("ALTER TABLE vector_chunks ADD COLUMN text_hash INTEGER")
        db.execute("CREATE INDEX IF NOT EXISTS vector_chunks_text ON vector_chunks(model, text_hash)")


def has_vectors(catalog: Catalog, model_ids: list[str]) -> bool:
    """Whether any of these models has stored vectors, without loading a model."""
    marks = ",".join("?" * len(model_ids))
    row = catalog.connect().execute(
        f"SELECT 1 FROM vector_docs WHERE model IN ({marks}) AND chunks > 0 LIMIT 1", model_ids
    ).fetchone()
    return row is not None


def model_slug(model_id: str, dim: int) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-") + f"-{dim}"


class VectorIndex:
    """Vectors of one model. Thread-safe; writable only in the process holding the writer lock."""

    def __init__(
        self,
        catalog: Catalog,
        directory: Path,
        model_id: str,
        dim: int,
        writer: bool = False,
        writer_lock: WriterLock | None = None,
    ) -> None:
        """`writer`: ask for writing, granted while this process holds `writer_lock` (the index's
        one writer lock; by default one of its own, on `<directory>/../writer.lock`)."""
        self.catalog = catalog
        self.model_id = model_id
        self.dim = dim
        self.directory = directory / model_slug(model_id, dim)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "index.usearch"
        self._lock = threading.RLock()
        self._writer_lock = writer_lock or WriterLock(directory.parent)
        self._took_writer_lock = False
        self._pending_rows: list[tuple] = []
        self._pending_docs: list[tuple] = []
        self._dirty = False
        self._loaded_stamp: tuple[int, int] | None = None
        #: (connection, its (data_version, total_changes), coverage) of the last `coverage()`
        self._coverage: tuple[object, tuple[int, int], dict[str, tuple[int, int]]] | None = None
        ensure_schema(catalog)
        self.writable = writer and self._take_writer_lock()
        self.index = self._open()
        self._next_key = 1
        if self.writable:
            row = catalog.connect().execute("SELECT MAX(key) FROM vector_chunks WHERE model = ?", (model_id,)).fetchone()
            self._next_key = max(int(row[0] or 0), self._max_key()) + 1
            self.reconcile()

    def _new_index(self):
        return _usearch()(ndim=self.dim, metric="cos", dtype="f16", connectivity=16, expansion_add=128, expansion_search=96)

    def _open(self):
        if not self.path.exists():
            self._loaded_stamp = None
            return self._new_index()
        stat = self.path.stat()
        self._loaded_stamp = (stat.st_mtime_ns, stat.st_size)
        return _usearch().restore(str(self.path), view=not self.writable)

    def _take_writer_lock(self) -> bool:
        self._took_writer_lock = not self._writer_lock.held
        if self._writer_lock.try_acquire():
            return True
        self._took_writer_lock = False
        return False

    def writer_active_elsewhere(self) -> bool:
        """True when another process holds the writer lock (it is indexing or embedding)."""
        if self.writable:
            return False
        return self._writer_lock.held_elsewhere()

    def _max_key(self) -> int:
        if len(self.index) == 0:
            return 0
        return int(max(self.index.keys))

    def __len__(self) -> int:
        return len(self.index)

    def refresh(self) -> None:
        """Reader side: re-open the saved file when the writer replaced it."""
        if self.writable:
            return
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return
        if (stat.st_mtime_ns, stat.st_size) != self._loaded_stamp:
            with self._lock:
                self.index = self._open()

    # writing

    def add(self, doc_id: str, content_hash: str, chunks: list[ChunkRef], vectors: np.ndarray) -> None:
        """Add a document's chunk vectors; the rows become visible to other processes at `checkpoint()`."""
        import numpy as np  # loaded with the vectors, not with every open index

        assert self.writable, "this process does not hold the vector writer lock"
        with self._lock:
            keys = np.arange(self._next_key, self._next_key + len(chunks), dtype=np.uint64)
            self._next_key += len(chunks)
            if len(chunks):
                self.index.add(keys, np.asarray(vectors, dtype=np.float32))
            self._pending_rows.extend(
                (self.model_id, int(key), doc_id, ref.chunk, ref.start_line, ref.end_line, ref.text_hash)
                for key, ref in zip(keys, chunks)
            )
            self._pending_docs.append((self.model_id, doc_id, content_hash, len(chunks)))
            self._dirty = True

    def remove_documents(self, doc_ids: list[str]) -> int:
        """Forget the vectors of these documents (rows first, then the index entries)."""
        import numpy as np  # loaded with the vectors, not with every open index

        assert self.writable, "this process does not hold the vector writer lock"
        if not doc_ids:
            return 0
        with self._lock:
            removed = set(doc_ids)
            keys = [row[1] for row in self._pending_rows if row[2] in removed]
            self._pending_rows = [row for row in self._pending_rows if row[2] not in removed]
            self._pending_docs = [row for row in self._pending_docs if row[1] not in removed]
            keys.extend(self._keys_of(doc_ids))
            db = self.catalog.connect()
            for start in range(0, len(doc_ids), 500):
                batch = doc_ids[start : start + 500]
                marks = ",".join("?" * len(batch))
                with db:
                    db.execute(f"DELETE FROM vector_chunks WHERE model = ? AND doc_id IN ({marks})", [self.model_id, *batch])
                    db.execute(f"DELETE FROM vector_docs WHERE model = ? AND doc_id IN ({marks})", [self.model_id, *batch])
            if keys:
                self.index.remove(np.asarray(keys, dtype=np.uint64))
                self._dirty = True
            return len(keys)

    def checkpoint(self) -> None:
        """Save the index atomically, then commit the rows of the vectors it now holds."""
        with self._lock:
            if not self._dirty:
                return
            temporary = self.path.with_suffix(".usearch.tmp")
            self.index.save(str(temporary))
            with open(temporary, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            with self.catalog.connect() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO vector_chunks (model, key, doc_id, chunk, start_line, end_line, text_hash) "
                    "VALUES (?,?,?,?,?,?,?)",
                    self._pending_rows,
                )
                db.executemany("INSERT OR REPLACE INTO vector_docs VALUES (?,?,?,?)", self._pending_docs)
            self._pending_rows, self._pending_docs = [], []
            self._dirty = False

    def reconcile(self) -> None:
        """Make the index agree with the catalog after a restart or a crash.

        Drops orphan keys (saved but never committed), and the vectors of documents
        that were deleted or changed since they were embedded (those are then queued
        again, since `stale_or_missing` no longer finds them).
        """
        import numpy as np  # loaded with the vectors, not with every open index

        db = self.catalog.connect()
        known = {row[0] for row in db.execute("SELECT key FROM vector_chunks WHERE model = ?", (self.model_id,))}
        orphans = [int(key) for key in self.index.keys if int(key) not in known] if len(self.index) else []
        with self._lock:
            if orphans:
                self.index.remove(np.asarray(orphans, dtype=np.uint64))
                self._dirty = True
        outdated = [
            row[0]
            for row in db.execute(
                "SELECT v.doc_id FROM vector_docs v LEFT JOIN documents d ON d.doc_id = v.doc_id "
                "WHERE v.model = ? AND (d.doc_id IS NULL OR d.content_hash != v.content_hash)",
                (self.model_id,),
            )
        ]
        self.remove_documents(outdated)
        self.checkpoint()

    def vectors_for_texts(self, text_hashes: list[int]) -> dict[int, np.ndarray]:
        """text hash -> the stored vector of a chunk with that exact text, for the hashes that have one.

        Writer side: looks at committed rows and at rows added since the last checkpoint.
        The vector comes back as stored (half precision widened to float32), so adding it
        again under a new key stores exactly the same vector.
        """
        import numpy as np  # loaded with the vectors, not with every open index

        if not text_hashes:
            return {}
        wanted = set(text_hashes)
        key_of: dict[int, int] = {}
        with self._lock:
            for row in self._pending_rows:
                if row[6] in wanted:
                    key_of.setdefault(row[6], row[1])
        db = self.catalog.connect()
        remaining = [value for value in wanted if value not in key_of]
        for start in range(0, len(remaining), 500):
            batch = remaining[start : start + 500]
            marks = ",".join("?" * len(batch))
            for text_hash, key in db.execute(
                f"SELECT text_hash, MIN(key) FROM vector_chunks WHERE model = ? AND text_hash IN ({marks}) "
                "GROUP BY text_hash",
                [self.model_id, *batch],
            ):
                key_of[text_hash] = key
        with self._lock:
            present = [(text_hash, key) for text_hash, key in key_of.items() if key in self.index]
            if not present:
                return {}
            stored = self.index.get(np.asarray([key for _, key in present], dtype=np.uint64), dtype=np.float32)
        matrix = np.vstack(stored).reshape(len(present), self.dim)
        return {text_hash: matrix[row] for row, (text_hash, _) in enumerate(present)}

    # reading

    def search(self, query: np.ndarray, limit: int, allowed_doc_ids: list[str] | None = None) -> list[VectorHit]:
        """Nearest chunks by cosine similarity (approximate, HNSW), optionally within some documents."""
        import numpy as np  # loaded with the vectors, not with every open index

        if limit <= 0 or len(self.index) == 0:
            return []
        if allowed_doc_ids is not None:
            keys = self._keys_of(allowed_doc_ids)
            if len(keys) <= EXACT_SCAN_LIMIT:
                return self._scan(query, keys, limit)
        with self._lock:
            count = min(len(self.index), limit if allowed_doc_ids is None else limit * 8)
            matches = self.index.search(np.asarray(query, dtype=np.float32), count)
            found = [(int(key), 1.0 - float(distance)) for key, distance in zip(matches.keys, matches.distances)]
        hits = self._resolve(found)
        if allowed_doc_ids is not None:
            allowed = set(allowed_doc_ids)
            hits = [hit for hit in hits if hit.doc_id in allowed]
        return hits[:limit]

    def exact_search(self, query: np.ndarray, limit: int, allowed_doc_ids: list[str] | None = None) -> list[VectorHit]:
        """The same answer as `search` by brute force: the reference the tests hold `search` to."""
        if allowed_doc_ids is None:
            with self._lock:
                keys = [int(key) for key in self.index.keys] if len(self.index) else []
        else:
            keys = self._keys_of(allowed_doc_ids)
        return self._scan(query, keys, limit)

    def best_per_document(self, query: np.ndarray, doc_ids: list[str]) -> dict[str, VectorHit]:
        """Each document's closest chunk, exactly (what `exact_search` ranks first for it), from one
        read of the documents' chunk rows: resolving every key of a long book again cost tens of ms."""
        return {doc_id: hit for doc_id, (hit, _) in self.best_chunks(query, doc_ids).items()}

    def best_chunks(self, query: np.ndarray, doc_ids: list[str]) -> dict[str, tuple[VectorHit, np.ndarray]]:
        """`best_per_document`, with each best chunk's vector (for feedback on the query vector)."""
        import numpy as np  # loaded with the vectors, not with every open index

        rows = self._current_chunks("c.doc_id", doc_ids) if len(self.index) else []
        if not rows:
            return {}
        keys = np.asarray([row[0] for row in rows], dtype=np.uint64)
        with self._lock:
            present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
            if not present.any():
                return {}
            matrix = np.vstack(self.index.get(keys[present], dtype=np.float32))
        rows = [row for row, kept in zip(rows, present) if kept]
        scores = _cosines(matrix, query)
        numbers: dict[str, int] = {}
        documents = np.fromiter(
            (numbers.setdefault(row[1], len(numbers)) for row in rows), dtype=np.int64, count=len(rows)
        )
        order = np.lexsort((-scores, documents))  # by document, best chunk first (stable: earlier rows win ties)
        firsts = order[np.concatenate(([True], documents[order][1:] != documents[order][:-1]))]
        return {rows[i][1]: (VectorHit(*rows[i][1:], score=float(scores[i])), matrix[i]) for i in firsts}

    def _scan(self, query: np.ndarray, keys: list[int], limit: int) -> list[VectorHit]:
        import numpy as np  # loaded with the vectors, not with every open index

        if not keys:
            return []
        with self._lock:
            present = [key for key in keys if key in self.index]
            if not present:
                return []
            matrix = np.vstack(self.index.get(np.asarray(present, dtype=np.uint64), dtype=np.float32))
        scores = _cosines(matrix, query)
        order = np.argsort(-scores)[:limit]
        return self._resolve([(present[i], float(scores[i])) for i in order])

    def _keys_of(self, doc_ids: list[str]) -> list[int]:
        db = self.catalog.connect()
        keys: list[int] = []
        for start in range(0, len(doc_ids), 500):
            batch = doc_ids[start : start + 500]
            marks = ",".join("?" * len(batch))
            keys.extend(
                row[0]
                for row in db.execute(
                    f"SELECT key FROM vector_chunks WHERE model = ? AND doc_id IN ({marks})", [self.model_id, *batch]
                )
            )
        return keys

    def _resolve(self, found: list[tuple[int, float]]) -> list[VectorHit]:
        """Chunk refs for keys, best first; keys of deleted or since-changed documents are dropped."""
        refs = {row[0]: row[1:] for row in self._current_chunks("c.key", [key for key, _ in found])}
        return [VectorHit(*refs[key], score=score) for key, score in found if key in refs]

    def _current_chunks(self, column: str, values: list) -> list[tuple]:
        """(key, doc_id, chunk, start_line, end_line) of current vectors whose `column` is in `values`."""
        db = self.catalog.connect()
        rows: list[tuple] = []
        for start in range(0, len(values), 500):
            batch = values[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows.extend(
                db.execute(
                    "SELECT c.key, c.doc_id, c.chunk, c.start_line, c.end_line FROM vector_chunks c "
                    "JOIN vector_docs v ON v.model = c.model AND v.doc_id = c.doc_id "
                    "JOIN documents d ON d.doc_id = c.doc_id AND d.content_hash = v.content_hash "
                    f"WHERE c.model = ? AND {column} IN ({marks})",
                    [self.model_id, *batch],
                )
            )
        return rows

    # bookkeeping

    def missing_documents(self, limit: int = 256) -> list[tuple[str, str]]:
        """(doc_id, content_hash) of documents without current vectors: newest day first, then smallest."""
        pending = {doc_id for _, doc_id, _, _ in self._pending_docs}
        rows = self.catalog.connect().execute(
            "SELECT d.doc_id, d.content_hash FROM documents d LEFT JOIN vector_docs v "
            "ON v.model = ? AND v.doc_id = d.doc_id AND v.content_hash = d.content_hash "
            "WHERE v.doc_id IS NULL ORDER BY d.mtime_ns / 86400000000000 DESC, d.word_count ASC LIMIT ?",
            (self.model_id, limit + len(pending)),
        )
        return [(doc_id, content_hash) for doc_id, content_hash in rows if doc_id not in pending][:limit]

    def coverage(self) -> dict[str, tuple[int, int]]:
        """library -> (words in documents with current vectors, all words). Every hybrid search asks and
        the answer reads all documents, so it is kept until the database changes: `data_version` moves
        when another connection commits, `total_changes` when this thread's connection does."""
        db = self.catalog.connect()
        stamp = (db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
        cached = self._coverage
        if cached is not None and cached[0] is db and cached[1] == stamp:
            return dict(cached[2])
        rows = db.execute(
            "SELECT d.library, SUM(CASE WHEN v.doc_id IS NULL THEN 0 ELSE d.word_count END), SUM(d.word_count) "
            "FROM documents d LEFT JOIN vector_docs v "
            "ON v.model = ? AND v.doc_id = d.doc_id AND v.content_hash = d.content_hash GROUP BY d.library",
            (self.model_id,),
        )
        coverage = {library: (int(done or 0), int(total or 0)) for library, done, total in rows}
        self._coverage = (db, stamp, coverage)
        return dict(coverage)

    def close(self) -> None:
        with self._lock:
            if self.writable:
                self.checkpoint()
            if self._took_writer_lock:
                self._writer_lock.release()
                self._took_writer_lock = False
