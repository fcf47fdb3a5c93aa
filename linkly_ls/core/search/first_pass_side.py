"""First-pass vectors in ranking: the vector side of a library the model has not refined yet.

Every document gets a first-pass vector (the static table's, core/embedding/static.py) within
seconds and keeps it until the model has refined every document. While nothing is refined they are
the whole vector side; while the model refines they place every document and the refined ones are
reordered among their places (`mixed_state.py`). The two kinds live in different spaces, so their
cosines are never compared. The query is compared with first-pass vectors by its own table vector,
joined with its vector from the model the table was distilled from whenever search may use that
model (`static.joint_query_vector`). Once every document is refined the first pass is not consulted
at all, and ranking is what it is without it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from linkly_ls.core.embedding.static import joint_query_vector

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.embedding.settings import TextEmbedder
    from linkly_ls.core.embedding.static import StaticEmbedder
    from linkly_ls.core.indexing.vector_sync import VectorSync
    from linkly_ls.core.search.ranked import RankedDocument
    from linkly_ls.core.search.vector_search import VectorHit
    from linkly_ls.core.search.vectors import VectorIndex

REFINED = "refined"
FIRST_PASS = "first_pass"
#: weight of the keyword side in the convex combination for a document ranked by its first-pass vector,
#: for a query of the usual weight (`fusion.first_pass_keyword_weight` for the others): chosen by
#: leave-one-collection-out among 0.7-0.9 (README, "The first vector pass")
FIRST_PASS_KEYWORD_WEIGHT = 0.8
#: how a query is read for first-pass vectors once the table's source model may be used: "joint"
#: (both readings, `static.joint_query_vector`), "table" or "model" alone; chosen by leave-one-collection-out
#: among the three (README, "The first vector pass"; `bench/first_pass_readings.py`)
QUERY_READING = "joint"
QUERY_READINGS = ("joint", "table", "model")


@dataclass
class FirstPassSide:
    embedder: StaticEmbedder
    index: VectorIndex
    #: the table's source model when search may use it (`VectorSync.table_source_model`), else None
    model: TextEmbedder | None = None

    @property
    def reads_with_model(self) -> bool:
        """Whether `hits` wants the query's vector from `model` (it is loaded and the reading uses it)."""
        if QUERY_READING not in QUERY_READINGS:
            raise ValueError(f"first_pass_side.QUERY_READING is {QUERY_READING!r}, not one of {QUERY_READINGS}")
        return self.model is not None and QUERY_READING != "table"

    def query_vector(self, query: str, model_vector: np.ndarray | None = None) -> np.ndarray:
        """The query as first-pass vectors are compared with it. `model_vector`: its vector from `model`
        (see `reads_with_model`); None: the table's reading alone."""
        vector = self.embedder.embed_query(query)
        if model_vector is None:
            return vector
        return model_vector if QUERY_READING == "model" else joint_query_vector(vector, model_vector)

    def hits(self, vector: np.ndarray, limit: int, allowed_doc_ids: list[str] | None) -> list[VectorHit]:
        """The nearest first-pass chunks to `vector` (`query_vector`), refined documents' included: they
        keep their first-pass vectors until the model has refined every document (`mixed_state.py`)."""
        return self.index.search(vector, limit, allowed_doc_ids)

    def documents_with_vectors(self, doc_ids: list[str]) -> set[str]:
        return self.index.documents_with_vectors(doc_ids)


def first_pass_side(sync: VectorSync, refined: VectorIndex | None) -> FirstPassSide | None:
    """The first-pass side for a search, or None when it has no vectors or every document is refined."""
    if refined is not None:
        coverage = sync.coverage()
        if coverage and min(coverage.values()) >= 1.0:
            return None
    embedder, index = sync.first_pass.search_side()
    if embedder is None or index is None:
        return None
    return FirstPassSide(embedder, index, sync.table_source_model())


def vector_parts(documents: list[RankedDocument]) -> dict[str, float]:
    """doc_id -> cosine min-max scaled among the candidates with the same kind of vector (0-1)."""
    ranges: dict[str, tuple[float, float]] = {}
    for document in documents:
        if document.vector_score is not None:
            low, high = ranges.get(document.vector_kind, (document.vector_score, document.vector_score))
            ranges[document.vector_kind] = (min(low, document.vector_score), max(high, document.vector_score))
    parts: dict[str, float] = {}
    for document in documents:
        if document.vector_score is not None:
            low, high = ranges[document.vector_kind]
            parts[document.doc_id] = (document.vector_score - low) / ((high - low) or 1.0)
    return parts
