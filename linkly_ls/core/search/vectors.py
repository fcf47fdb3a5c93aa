"""The vector index: one usearch HNSW index per embedding model, next to the catalog.

Keys are integer chunk ids; rows of the catalog database (`VectorRows`,
core/store/vector_rows.py) map each to (doc_id, chunk number, line range, hash
of the embedded text) and record which version (content hash) of a document the
vectors were computed from. The text hash lets a passage whose exact text already
has a vector (a copied or renamed document, an unchanged section of an edited
one) reuse it.

Crash safety comes from one ordering rule: rows are committed only *after* the
index file holding their vectors was saved (atomically: temporary file, then
`os.replace`), and rows are deleted *before* their vectors are removed. So every
key in the database is in the saved file; a key in the file without a row is an
orphan, dropped by `reconcile()` when a writer opens the index.

One process writes (it holds `writer.lock`); others open the saved file as a
read-only memory map (`view`) and re-open it when it changes.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

from linkly_ls.core.search.chunking import CHUNKING_VERSION
from linkly_ls.core.search.vector_search import VectorSearch
from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.vector_rows import ChunkRow, DocRow, VectorRows, ensure_vector_tables
from linkly_ls.core.store.writer_lock import WriterLock



@dataclass
class ChunkRef:
    doc_id: str
    chunk: int
    start_line: int
    end_line: int
    #: 64-bit hash of the text the vector was computed from (None: never reused)
    text_hash: int | None = None




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


#: most vectors one insertion takes while holding the index lock (a search waits for at most one)
INSERT_SLICE = 64
#: the graph's links per node, and the candidates a search follows: usearch's default, which every reopened
#: index searched with (a new one was given 96 until it was saved and opened again) and with which the
#: figures in the README were measured. 96 throughout: 1M-chunk hybrid p50 / p95 105 / 213 ms, against
#: 65 / 132 ms in the same sitting (`bench/search_latency.py`)
CONNECTIVITY = 16
EXPANSION_SEARCH = 64
#: the candidates an insertion weighs before linking a new vector: usearch's default. Insertion time
#: grows with it, recall barely (`FIRST_PASS_EXPANSION_ADD`)
EXPANSION_ADD = 128


def _file_stamp(path: Path) -> tuple[int, int, int]:
    """What tells one saved index file from the next: every save replaces the file (a new inode),
    so a rewrite of the same size within one timestamp tick is seen too."""
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _save_error(path: Path, error: RuntimeError) -> OSError:
    """An OSError for an index file usearch could not write, which the faces describe as a disk's error."""
    try:
        full = shutil.disk_usage(path.parent).free < FULL_DISK_BYTES
    except OSError:
        full = False
    if full:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return OSError(errno.EIO, f"the vector index could not be written ({error})", str(path))


#: free space under which a failed save is taken for a full disk
FULL_DISK_BYTES = 64 * 1024 * 1024


def model_slug(model_id: str, dim: int) -> str:
    """The folder of a model's index: its id made safe for a file name, then its dimension."""
    return f"{model_folder_prefix(model_id)}-{dim}"


def model_folder_prefix(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model_id).strip("-")


class VectorIndex(VectorSearch):
    """Vectors of one model. Thread-safe; writable only in the process holding the writer lock."""

    def __init__(
        self,
        catalog: Catalog,
        directory: Path,
        model_id: str,
        dim: int,
        writer: bool = False,
        writer_lock: WriterLock | None = None,
        covered_by: tuple[str, ...] = (),
        expansion_add: int = EXPANSION_ADD,
    ) -> None:
        """`writer`: ask for writing, granted while this process holds `writer_lock` (the index's
        one writer lock; by default one of its own, on `<directory>/../writer.lock`). `covered_by`:
        models whose vectors stand in for this one's (`VectorRows`). `expansion_add`: see EXPANSION_ADD."""
        self.catalog = catalog
        self._expansion_add = expansion_add
        self.model_id = model_id
        self.dim = dim
        self.directory = directory / model_slug(model_id, dim)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / "index.usearch"
        self._lock = threading.RLock()
        self._writer_lock = writer_lock or WriterLock(directory.parent)
        self._took_writer_lock = False
        self.rows = VectorRows(catalog, model_id, CHUNKING_VERSION, covered_by)
        self._pending_rows: list[ChunkRow] = []
        self._pending_docs: list[DocRow] = []
        self._dirty = False
        self._loaded_stamp: tuple[int, int, int] | None = None
        ensure_vector_tables(catalog)
        self.writable = writer and self._take_writer_lock()
        self.index = self._open()
        self._next_key = 1
        if self.writable:
            self._next_key = max(self.rows.max_key(), self._max_key()) + 1
            self.reconcile()

    def _new_index(self):
        """A new index stores 8-bit vectors (`quantize`): half of 16-bit floats in memory and on disk,
        at the same search quality on the labelled collections (README, *Hybrid search*). An index saved
        earlier keeps the kind of numbers it was written with."""
        return _usearch()(
            ndim=self.dim, metric="cos", dtype="i8", connectivity=CONNECTIVITY,
            expansion_add=self._expansion_add, expansion_search=EXPANSION_SEARCH,
        )

    def _open(self):
        if not self.path.exists():
            self._loaded_stamp = None
            return self._new_index()
        self._loaded_stamp = _file_stamp(self.path)
        index = _usearch().restore(str(self.path), view=not self.writable)
        # a saved file keeps its connectivity, not how a search or an insertion explores: without this a
        # reopened index searched with usearch's default, unlike the same index before it was saved
        index.expansion_add, index.expansion_search = self._expansion_add, EXPANSION_SEARCH
        return index

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
        return int(self._all_keys().max()) if len(self.index) else 0

    def __len__(self) -> int:
        return len(self.index)

    def refresh(self) -> None:
        """Reader side: re-open the saved file when the writer replaced it."""
        if self.writable:
            return
        try:
            stamp = _file_stamp(self.path)
        except FileNotFoundError:
            return
        if stamp != self._loaded_stamp:
            with self._lock:
                self.index = self._open()

    # writing

    def add(self, doc_id: str, content_hash: str, chunks: list[ChunkRef], vectors: np.ndarray) -> None:
        """Add a document's chunk vectors; the rows become visible to other processes at `checkpoint()`."""
        self.add_documents([(doc_id, content_hash, chunks, vectors)])

    def add_documents(self, documents: list[tuple[str, str, list[ChunkRef], np.ndarray]]) -> None:
        """`add` for several documents (doc_id, content_hash, chunks, vectors): the index takes up to
        INSERT_SLICE vectors per insertion, and the lock is let go between slices so that searches wait
        for one slice at most. Each insertion runs on one thread: the graph then depends only on the
        order of the vectors, so a run resumed after a crash builds the index an uninterrupted run
        builds (several threads made its approximate answers differ)."""
        assert self.writable, "this process does not hold the vector writer lock"
        for doc_id, _, chunks, vectors in documents:
            if len(vectors) != len(chunks):
                raise ValueError(f"{doc_id}: {len(vectors)} vectors for {len(chunks)} chunks")
        start = 0
        while start < len(documents):
            end, size = start, 0
            while end < len(documents) and (end == start or size + len(documents[end][2]) <= INSERT_SLICE):
                size += len(documents[end][2])
                end += 1
            self._insert(documents[start:end], size)
            start = end

    def _insert(self, documents: list[tuple[str, str, list[ChunkRef], np.ndarray]], count: int) -> None:
        import numpy as np  # loaded with the vectors, not with every open index

        with self._lock:
            keys = np.arange(self._next_key, self._next_key + count, dtype=np.uint64)
            self._next_key += count
            if count:
                rows = [np.asarray(vectors, dtype=np.float32).reshape(-1, self.dim) for _, _, chunks, vectors in documents]
                self.index.add(keys, self._as_stored(np.concatenate(rows)), threads=1)
            offset = 0
            for doc_id, content_hash, chunks, _ in documents:
                self._pending_rows.extend(
                    (self.model_id, int(key), doc_id, ref.chunk, ref.start_line, ref.end_line, ref.text_hash)
                    for key, ref in zip(keys[offset : offset + len(chunks)], chunks)
                )
                self._pending_docs.append((self.model_id, doc_id, content_hash, len(chunks)))
                offset += len(chunks)
            self._dirty = True

    def remove_documents(self, doc_ids: list[str]) -> int:
        """Forget the vectors of these documents (rows first, then the index entries)."""
        import numpy as np  # loaded with the vectors, not with every open index

        if not doc_ids:
            return 0
        with self._lock:
            if not self.writable:
                # handed back to reading meanwhile (`stop_writing`): a read-only map cannot change, and
                # the vectors left in its file lose their rows, so the next writable open drops them
                assert self._writer_lock.held, "this process does not hold the vector writer lock"
                self.rows.delete_documents(doc_ids)
                return 0
            removed = set(doc_ids)
            keys: list[int] = []
            if any(row[1] in removed for row in self._pending_docs):  # rarely: a round's documents are new
                keys = [row[1] for row in self._pending_rows if row[2] in removed]
                self._pending_rows = [row for row in self._pending_rows if row[2] not in removed]
                self._pending_docs = [row for row in self._pending_docs if row[1] not in removed]
            keys.extend(self._keys_of(doc_ids))
            self.rows.delete_documents(doc_ids)
            if keys:
                self.index.remove(np.asarray(keys, dtype=np.uint64))
                if len(self.index) == 0 and not self._pending_rows:
                    self.index = self._new_index()  # usearch keeps removed entries in its file: start afresh
                self._dirty = True
            return len(keys)

    def clear(self) -> None:
        """Forget every vector of this model without reading its index in (a writer lock holder only).

        For the first pass's index once the model has refined every document: at a million chunks
        that index is about a gigabyte, which removing its entries one by one would load first."""
        assert self.writable or self._writer_lock.held, "this process does not hold the vector writer lock"
        with self._lock:
            self.rows.delete_all()
            self._pending_rows, self._pending_docs = [], []
            self.index = self._new_index()
            self._dirty = True
            self.checkpoint()
            self._loaded_stamp = _file_stamp(self.path)

    def stop_writing(self) -> None:
        """Save, then keep only a read-only map of the saved file; the writer lock stays taken.

        A writable usearch index lives wholly in memory. The first pass's index is written in a burst
        and then only read while the model refines, for hours on a large library: held writable it
        would double the writer's vector memory. `VectorSync.index_for(..., writer=True)` makes a
        writable one again."""
        with self._lock:
            if not self.writable:
                return
            self.checkpoint()
            self.writable = False
            self.index = self._open()

    @property
    def releases_writer_lock(self) -> bool:
        """This index took the writer lock and lets it go at `close`."""
        return self._took_writer_lock

    def adopt_writer_lock(self, previous: VectorIndex) -> None:
        """Take over `previous`'s duty to release the writer lock, before `previous` is closed."""
        self._took_writer_lock = self._took_writer_lock or previous._took_writer_lock
        previous._took_writer_lock = False

    def checkpoint(self) -> None:
        """Save the index atomically, then commit the rows of the vectors it now holds."""
        with self._lock:
            if not self._dirty:
                return
            temporary = self.path.with_suffix(".usearch.tmp")
            try:
                self.index.save(str(temporary))
            except RuntimeError as error:  # usearch's "Failed to serialize into stream": a full disk, most often
                temporary.unlink(missing_ok=True)
                raise _save_error(temporary, error) from error
            with open(temporary, "rb+") as handle:
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
            self.rows.commit(self._pending_rows, self._pending_docs)
            self._pending_rows, self._pending_docs = [], []
            self._dirty = False

    def reconcile(self) -> None:
        """Make the index agree with the catalog after a restart or a crash.

        Drops orphan keys (saved but never committed), and the vectors of documents
        that were deleted or changed since they were embedded (those are then queued
        again, since `stale_or_missing` no longer finds them).
        """
        import numpy as np  # loaded with the vectors, not with every open index

        known = self.rows.keys()
        orphans = [key for key in self._all_keys().tolist() if key not in known] if len(self.index) else []
        with self._lock:
            if orphans:
                self.index.remove(np.asarray(orphans, dtype=np.uint64))
                self._dirty = True
        self.remove_documents(self.rows.outdated_documents())
        self.checkpoint()

    def vectors_for_texts(self, text_hashes: list[int]) -> dict[int, np.ndarray]:
        """text hash -> the stored vector of a chunk with that exact text, for the hashes that have one.

        Writer side: looks at committed rows and at rows added since the last checkpoint.
        The vector comes back as stored (widened to float32, at the stored scale: `_stored`), so
        adding it again under a new key stores exactly the same vector.
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
        key_of.update(self.rows.keys_for_texts([value for value in wanted if value not in key_of]))
        with self._lock:
            present = [(text_hash, key) for text_hash, key in key_of.items() if key in self.index]
            if not present:
                return {}
            matrix = self._stored(np.asarray([key for _, key in present], dtype=np.uint64))
        return {text_hash: matrix[row] for row, (text_hash, _) in enumerate(present)}

    # bookkeeping

    def missing_documents(self, limit: int = 256) -> list[tuple[str, str]]:
        """(doc_id, content_hash) of documents without current vectors: newest day first, then smallest."""
        pending = {doc_id for _, doc_id, _, _ in self._pending_docs}
        rows = self.rows.missing_documents(limit + len(pending))
        return [(doc_id, content_hash) for doc_id, content_hash in rows if doc_id not in pending][:limit]

    def close(self) -> None:
        with self._lock:
            if self.writable:
                self.checkpoint()
            if self._took_writer_lock:
                self._writer_lock.release()
                self._took_writer_lock = False
