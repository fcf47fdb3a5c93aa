"""Ranking before the model has refined every document: first-pass vectors place what it has not.

Nothing refined yet: the first-pass vectors are the whole vector side (`first_pass_only`). While the
model refines, every candidate is placed by its first-pass vector and the refined ones are reordered
among their places by the model's (`Refining`, `mixed_state.py`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from linkly_ls.core.search import mixed_state, smoothing
from linkly_ls.core.search.first_pass_side import FIRST_PASS, REFINED, FirstPassSide
from linkly_ls.core.search.fusion import fused, keyword_weight_for
from linkly_ls.core.search.query_views import embed_query
from linkly_ls.core.search.ranked import (
    Ranking,
    RankedDocument,
    add_vector_side,
    complete_keyword_side,
    keyword_copy,
    vector_only,
)

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.embedding.settings import TextEmbedder
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.search.vector_search import VectorHit
    from linkly_ls.core.search.vectors import VectorIndex

log = logging.getLogger("linkly_ls.search")


def add_first_pass_side(
    documents: dict[str, RankedDocument],
    first: FirstPassSide | None,
    query: str,
    limit: int,
    allowed: list[str] | None,
    embedder: TextEmbedder | None,
    query_vector: np.ndarray | None,
) -> list[VectorHit]:
    if first is None:
        return []
    hits = first.hits(first_pass_query_vector(first, query, embedder, query_vector), limit, allowed)
    add_vector_side(documents, hits, FIRST_PASS)
    return hits


def first_pass_query_vector(
    first: FirstPassSide, query: str, embedder: TextEmbedder | None, query_vector: np.ndarray | None
) -> np.ndarray:
    """The query as first-pass vectors read it. `embedder`, `query_vector`: the refined side's model and
    its vector of the query (None: nothing is refined yet), reused when that model is the table's source."""
    model_vector = None
    if first.reads_with_model:
        if embedder is first.model and query_vector is not None:
            model_vector = query_vector
        else:
            try:
                model_vector = embed_query(first.model, query)
            except Exception as error:  # noqa: BLE001 - the table's reading alone still ranks
                log.warning("the model could not read the query for first-pass vectors: %s", error)
    return first.query_vector(query, model_vector)


@dataclass
class Refining:
    """A search while the model refines: every candidate placed by its first-pass vectors, the refined
    ones reordered among their places by the model's (`mixed_state.py`)."""

    engine: Engine
    index: VectorIndex
    first: FirstPassSide
    views: np.ndarray
    first_vector: np.ndarray

    def ranked(
        self,
        query: str,
        keyword_side: dict[str, RankedDocument],
        vector_hits: list[VectorHit],
        limit: int,
        allowed: list[str] | None,
        fusion: str | None,
    ) -> list[RankedDocument]:
        first_hits = self.first.hits(self.first_vector, limit, allowed)
        candidates = dict(keyword_side)
        for hit in [*vector_hits, *first_hits]:
            candidates.setdefault(hit.doc_id, RankedDocument(doc_id=hit.doc_id))
        complete_keyword_side(self.engine, query, candidates)
        found = {hit.doc_id for hit in vector_hits}
        refined = found | self.index.documents_with_vectors([doc_id for doc_id in candidates if doc_id not in found])
        first_pass = self.first.documents_with_vectors(list(candidates))
        keyword_top = max((document.keyword_score or 0.0 for document in candidates.values()), default=0.0)
        rank = partial(self._side, candidates, fusion, keyword_weight_for(query), keyword_top)
        if refined & first_pass or not refined:
            # a refined document without first-pass vectors (changed, then refined before the first pass
            # caught up) is placed by its keywords and reordered with the others
            placing = rank(list(candidates), first_hits, FIRST_PASS, first_pass)
            return mixed_state.slotted(placing, rank([d for d in candidates if d in refined], vector_hits, REFINED, refined))
        # no refined candidate has first-pass vectors (a document new to a fully refined library, or one refined
        # by an earlier version): the model's vectors place every document, first-pass ones reorder the rest
        placing = rank(list(candidates), vector_hits, REFINED, refined)
        unrefined = [doc_id for doc_id in candidates if doc_id in first_pass and doc_id not in refined]
        return mixed_state.slotted(placing, rank(unrefined, first_hits, FIRST_PASS, first_pass))

    def vector_only(self, vector_hits: list[VectorHit], limit: int, allowed: list[str] | None) -> list[RankedDocument]:
        """Vector mode: each document by its refined vectors when it has them, else by its first-pass
        ones, each kind min-max scaled among its own candidates (no keywords to place them by)."""
        first_hits = self.first.hits(self.first_vector, limit, allowed)
        refined = self.index.documents_with_vectors(list({hit.doc_id for hit in first_hits}))
        documents: dict[str, RankedDocument] = {}
        add_vector_side(documents, vector_hits)
        unrefined = [hit for hit in first_hits if hit.doc_id not in refined and hit.doc_id not in documents]
        add_vector_side(documents, unrefined, FIRST_PASS)
        return vector_only(documents, "", False, None, None).documents

    def _side(
        self,
        candidates: dict[str, RankedDocument],
        fusion: str | None,
        keyword_weight: float,
        keyword_top: float,
        doc_ids: list[str],
        hits: list[VectorHit],
        kind: str,
        having: set[str],
    ) -> list[RankedDocument]:
        """`doc_ids` ranked by their keywords (over the best of all candidates) and one kind of vector,
        as a library with only that kind ranks them: a document the vector search did not reach scores
        0 there, one without such vectors (not in `having`) counts its keywords instead; smoothed over
        that kind."""
        documents = {doc_id: keyword_copy(candidates[doc_id], kind) for doc_id in doc_ids}
        add_vector_side(documents, [hit for hit in hits if hit.doc_id in documents], kind)
        if kind == FIRST_PASS:
            ranked = fused(self.engine, None, documents, fusion, keyword_weight, self.first, None, keyword_top, having)
            index = self.first.index
        else:
            ranked = fused(self.engine, self.index, documents, fusion, keyword_weight, None, self.views, keyword_top, having)
            index = self.index
        return smoothing.smoothed(ranked, hits, index) if smoothing.SMOOTHING_DOCUMENTS else ranked


def first_pass_only(
    engine: Engine,
    first: FirstPassSide,
    documents: dict[str, RankedDocument],
    mode: str,
    building: bool,
    fusion: str | None,
    keyword_weight: float,
    first_hits: list[VectorHit],
) -> Ranking:
    """Nothing is refined yet: the first-pass vectors are the whole vector side, and the best documents'
    scores are smoothed over them as over refined vectors (`smoothing.py`). While some documents are
    refined and others not, `Refining` ranks."""
    reason = f"first-pass vectors ({first.embedder.model_id}; the model has not refined any yet)"
    for document in documents.values():
        document.vector_kind = FIRST_PASS
    if mode == "vector":
        return vector_only(documents, "vector mode requested, " + reason, building, None, None)
    ranked = fused(engine, None, documents, fusion, keyword_weight, first)
    if smoothing.SMOOTHING_DOCUMENTS:
        ranked = smoothing.smoothed(ranked, first_hits, first.index)
    return Ranking(ranked, "hybrid", "keyword + " + reason, building)
