"""How much of each library the model's vectors cover, read from the catalog alone.

`list_libraries`, status lines and search's notes ask this often and from any
thread, so it never loads a model or opens a vector index (opening a large one
holds the vector sync's open lock for as long as that takes): it reads the
vector rows of the model search would use, the configured one, else the
bundled fallback. Each model's rows keep their last answer until the catalog
changes. The first pass's coverage is `FirstPass.coverage`.
"""

from __future__ import annotations

import threading

from linkly_ls.core.embedding.provider import EmbeddingProvider
from linkly_ls.core.search.chunking import CHUNKING_VERSION
from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.vector_rows import VectorRows, has_vectors


class RefinedCoverage:
    def __init__(self, catalog: Catalog, provider: EmbeddingProvider) -> None:
        self.catalog = catalog
        self.provider = provider
        self._rows: dict[str, VectorRows] = {}
        self._lock = threading.Lock()

    def by_library(self) -> dict[str, float]:
        """library -> share (0-1) of its words whose chunks have vectors; empty when vectors are off."""
        if not self.provider.enabled:
            return {}
        rows = self._searched_rows()
        if rows is None:
            return {library: 0.0 for library in self.catalog.document_counts()}
        return {library: (done / total if total else 1.0) for library, (done, total) in rows.coverage().items()}

    def words(self) -> tuple[int, int] | None:
        """(words in documents whose chunks have vectors, all words), or None without vectors."""
        rows = self._searched_rows() if self.provider.enabled else None
        if rows is None:
            return None
        pairs = list(rows.coverage().values())
        return sum(done for done, _ in pairs), sum(total for _, total in pairs)

    def _searched_rows(self) -> VectorRows | None:
        for model_id in self.provider.model_ids():
            if has_vectors(self.catalog, [model_id]):
                with self._lock:
                    rows = self._rows.get(model_id)
                    if rows is None:
                        rows = self._rows[model_id] = VectorRows(self.catalog, model_id, CHUNKING_VERSION)
                return rows
        return None
