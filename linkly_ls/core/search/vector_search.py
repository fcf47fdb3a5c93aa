"""Reading a vector index: approximate and exact nearest chunks, each document's best chunk, and the
stored vectors of chunks, for `VectorIndex`.

The graph finds the candidates; every score a search returns is the exact cosine of the full-precision
query and the stored vector, so a chunk scores the same whichever way it was found.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linkly_ls.core.search.vector_math import cosines, quantize, unit_rows

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.store.vector_rows import VectorRows

#: below this many candidate chunks a filtered search scans them exactly instead of walking the graph
EXACT_SCAN_LIMIT = 20_000


@dataclass
class VectorHit:
    doc_id: str
    chunk: int
    start_line: int
    end_line: int
    #: cosine similarity of the query and the chunk, -1..1
    score: float
    #: the chunk's key in the vector index (-1 where the hit was not found by a search); not compared
    key: int = field(default=-1, compare=False)


class VectorSearch:
    """The reading side of `VectorIndex`, which opens the usearch graph (`index`) and the catalog rows
    of its keys (`rows`), and holds the lock of both."""

    index: Any
    rows: VectorRows
    dim: int
    _lock: threading.RLock

    @property
    def _holds_integers(self) -> bool:
        return str(self.index.dtype).upper().endswith("I8")

    def _as_stored(self, vectors: np.ndarray) -> np.ndarray:
        """Vectors (or a query) in the index's own kind of numbers."""
        import numpy as np  # loaded with the vectors, not with every open index

        if self._holds_integers:
            return quantize(vectors)
        return np.asarray(vectors, dtype=np.float32)

    def _stored(self, keys: np.ndarray) -> np.ndarray:
        """The stored vectors of keys known to be in the index, one float32 row each, under the caller's
        lock: 16-bit rows as they are, 8-bit ones at their stored scale (any: `cosines` and `quantize`
        ignore it; `vectors_of` and `chunk_vectors` give unit rows)."""
        import numpy as np  # loaded with the vectors, not with every open index

        return np.vstack(self.index.get(np.asarray(keys, dtype=np.uint64), dtype=np.float32)).reshape(-1, self.dim)

    def _all_keys(self) -> np.ndarray:
        """Every key in the index, as one array: iterating usearch's keys one by one takes time that grows
        with the square of their number (minutes at 200,000)."""
        import numpy as np

        return np.asarray(self.index.keys, dtype=np.uint64)

    def search(self, query: np.ndarray, limit: int, allowed_doc_ids: list[str] | None = None) -> list[VectorHit]:
        """Nearest chunks by cosine similarity (approximate, HNSW), optionally within some documents.

        The graph finds the chunks; the closest (by the graph's distance, the best of a chunk's views)
        are then scored exactly against the full-precision query, so a chunk scores the same here as
        in `exact_search` and `best_per_document` (the graph compares an 8-bit copy of the query). A
        2-D query is several views of one (query_views.py): one batch search, each chunk scored by its
        best view, the chunks resolved once."""
        import numpy as np  # loaded with the vectors, not with every open index

        if limit <= 0 or len(self.index) == 0:
            return []
        if allowed_doc_ids is not None:
            keys = self._keys_of(allowed_doc_ids)
            if len(keys) <= EXACT_SCAN_LIMIT:
                return self._scan(query, keys, limit)
        with self._lock:
            count = min(len(self.index), limit if allowed_doc_ids is None else limit * 8)
            matches = self.index.search(self._as_stored(query), count)
            approximate: dict[int, float] = {}
            rows = zip(np.atleast_2d(matches.keys), np.atleast_2d(matches.distances), np.atleast_1d(getattr(matches, "counts", count)))
            for found_keys, distances, found in rows:  # a batch's rows are padded past their count
                for key, distance in zip(found_keys[:found].tolist(), distances[:found].tolist()):
                    approximate[key] = min(approximate.get(key, 2.0), distance)
            keys = sorted(approximate, key=lambda key: (approximate[key], key))[:count]
            scores = cosines(self._stored(np.asarray(keys, dtype=np.uint64)), query).tolist() if keys else []
        found = sorted(zip(keys, scores), key=lambda item: (-item[1], item[0]))  # ties in one order every run
        hits = self._resolve(found)
        if allowed_doc_ids is not None:
            allowed = set(allowed_doc_ids)
            hits = [hit for hit in hits if hit.doc_id in allowed]
        return hits[:limit]

    def exact_search(self, query: np.ndarray, limit: int, allowed_doc_ids: list[str] | None = None) -> list[VectorHit]:
        """The same answer as `search` by brute force: the reference the tests hold `search` to."""
        if allowed_doc_ids is None:
            with self._lock:
                keys = self._all_keys().tolist() if len(self.index) else []
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

        rows = self.rows.current_chunks_of_documents(doc_ids) if len(self.index) else []
        kept, matrix = self._present_vectors([row[0] for row in rows])
        if not kept:
            return {}
        present = set(kept)
        rows = [row for row in rows if row[0] in present]
        scores = cosines(matrix, query)
        numbers: dict[str, int] = {}
        documents = np.fromiter(
            (numbers.setdefault(row[1], len(numbers)) for row in rows), dtype=np.int64, count=len(rows)
        )
        order = np.lexsort((-scores, documents))  # by document, best chunk first (stable: earlier rows win ties)
        firsts = order[np.concatenate(([True], documents[order][1:] != documents[order][:-1]))]
        return {rows[i][1]: (VectorHit(*rows[i][1:], score=float(scores[i])), matrix[i]) for i in firsts}

    def chunk_vectors(self, doc_id: str) -> list[tuple[VectorHit, np.ndarray]]:
        """A document's current chunks (score 1.0) with their stored vectors, in chunk order."""
        import numpy as np  # loaded with the vectors, not with every open index

        rows = self.rows.current_chunks_of_documents([doc_id]) if len(self.index) else []
        if not rows:
            return []
        keys = np.asarray([row[0] for row in rows], dtype=np.uint64)
        with self._lock:
            present = np.asarray(self.index.contains(keys), dtype=bool).reshape(-1)
            if not present.any():
                return []
            matrix = unit_rows(self._stored(keys[present]))
        kept = [row for row, found in zip(rows, present) if found]
        pairs = [(VectorHit(*row[1:], score=1.0), matrix[index]) for index, row in enumerate(kept)]
        return sorted(pairs, key=lambda pair: pair[0].chunk)

    def _scan(self, query: np.ndarray, keys: list[int], limit: int) -> list[VectorHit]:
        import numpy as np  # loaded with the vectors, not with every open index

        if not keys:
            return []
        with self._lock:
            present = [key for key in keys if key in self.index]
            if not present:
                return []
            matrix = self._stored(np.asarray(present, dtype=np.uint64))
        scores = cosines(matrix, query)
        order = np.argsort(-scores, kind="stable")[:limit]  # ties in the order of `present`, every run
        return self._resolve([(present[i], float(scores[i])) for i in order])

    def _keys_of(self, doc_ids: list[str]) -> list[int]:
        return self.rows.keys_of(doc_ids)

    def _resolve(self, found: list[tuple[int, float]]) -> list[VectorHit]:
        """Chunk refs for keys, best first; keys of deleted or since-changed documents are dropped."""
        refs = {row[0]: row[1:] for row in self.rows.current_chunks_of_keys([key for key, _ in found])}
        return [VectorHit(*refs[key], score=score, key=key) for key, score in found if key in refs]

    def vectors_of(self, keys: list[int]) -> tuple[list[int], np.ndarray]:
        """Those of `keys` still in the index, and their stored vectors at unit length, one row each."""
        kept, matrix = self._present_vectors(keys)
        return kept, unit_rows(matrix) if kept else matrix

    def _present_vectors(self, keys: list[int]) -> tuple[list[int], np.ndarray]:
        """Those of `keys` still in the index, and their stored vectors (`_stored`)."""
        import numpy as np  # loaded with the vectors, not with every open index

        if not keys:
            return [], np.zeros((0, 0), dtype=np.float32)
        wanted = np.asarray(keys, dtype=np.uint64)
        with self._lock:
            present = np.asarray(self.index.contains(wanted), dtype=bool).reshape(-1)
            if not present.any():
                return [], np.zeros((0, 0), dtype=np.float32)
            matrix = self._stored(wanted[present])
        return [key for key, kept in zip(keys, present) if kept], matrix

    def documents_with_vectors(self, doc_ids: list[str]) -> set[str]:
        """Those of `doc_ids` whose committed vectors are current (embedded from the catalog's version)."""
        return self.rows.documents_with_vectors(doc_ids) if doc_ids else set()

    def coverage(self) -> dict[str, tuple[int, int]]:
        """library -> (words in documents with current vectors, all words), kept until the database changes."""
        return self.rows.coverage()
