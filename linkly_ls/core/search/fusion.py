"""The fusion of the keyword (BM25) and vector (cosine) document rankings.

The two document rankings are fused by a convex combination of normalised scores:

    fused = 0.5 * bm25 / max(bm25) + 0.5 * (cos - min(cos)) / (max(cos) - min(cos))

over the candidates of the query (a side where a document is missing adds 0).
Measured on the IR collections (bench/ir_eval.py --fusion), with this one
weight it beat reciprocal-rank fusion (RRF, k = 60) on all three: nDCG@10 of
1.11 / 1.18 / 1.16 x bm25s on ADI / Cranfield / MEDLINE, against RRF's 0.99 /
1.14 / 1.15 (weights 0.4-0.6 are all within 0.02). RRF throws away how far
ahead the best hits are, which matters when one side is confident and the
other is not. RRF stays available (`fusion="rrf"`) for comparison, and
`FUSION = "z"` fuses standard scores over a pool of both sides' best documents
(`zscore_fusion.py`).

A document that has no vectors yet (embedding still running) counts its keyword
part on the vector side too, so it is neither favoured nor buried while the
library is half embedded: hybrid over what has vectors, keyword over the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from linkly_ls.core.search import first_pass_side, query_views, zscore_fusion
from linkly_ls.core.search.first_pass_side import FIRST_PASS, FirstPassSide, vector_parts

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.engine import Engine
    from linkly_ls.core.search.ranked import RankedDocument
    from linkly_ls.core.search.vectors import VectorIndex

RRF_K = 60
#: weight of the keyword side in the convex combination
CONVEX_KEYWORD_WEIGHT = 0.5
#: a query of at least LONG_QUERY_SENTENCES sentences (0: no such rule) gives the keyword side
#: LONG_QUERY_KEYWORD_WEIGHT: the small bi-encoder, trained on short queries, reads a paragraph-long
#: request as a blur of its topics even with each sentence as a view, while BM25 counts each term the
#: request repeats. Chosen by leave-one-collection-out over 16 collections of several shapes (README,
#: "Search quality"); LONG_QUERY_WORDS (more than N words) is the same rule by length, not chosen.
LONG_QUERY_SENTENCES = 3
LONG_QUERY_WORDS = 0
LONG_QUERY_KEYWORD_WEIGHT = 0.7
#: "convex" (default), "z" (standard scores over a pool, zscore_fusion.py) or "rrf"
FUSION = "convex"


def keyword_weight_for(query: str) -> float:
    """The keyword side's weight in the convex fusion for this query."""
    if LONG_QUERY_WORDS and len(query.split()) > LONG_QUERY_WORDS:
        return LONG_QUERY_KEYWORD_WEIGHT
    if LONG_QUERY_SENTENCES and len(query_views.sentences(query)) >= LONG_QUERY_SENTENCES:
        return LONG_QUERY_KEYWORD_WEIGHT
    return CONVEX_KEYWORD_WEIGHT


def fused(
    engine: Engine,
    index: VectorIndex | None,
    documents: dict[str, RankedDocument],
    fusion: str | None,
    keyword_weight: float,
    first: FirstPassSide | None = None,
    views: np.ndarray | None = None,
    keyword_top: float | None = None,
    having_vectors: set[str] | None = None,
) -> list[RankedDocument]:
    """`documents` fused, best first. `having_vectors`: which of them have vectors of the kind ranked, when
    the caller knows (else looked up)."""
    unreached = [doc_id for doc_id, document in documents.items() if document.vector_rank is None]
    if having_vectors is None:
        without_vectors = _without_vectors(engine, index, unreached, first)
    else:
        without_vectors = set(unreached) - having_vectors
    if (fusion or FUSION) == "rrf":
        _fuse_rrf(documents.values(), without_vectors)
    elif (fusion or FUSION) == "z" and index is not None and views is not None and first is None:
        _fuse_z(index, views, documents, without_vectors, keyword_weight, keyword_top)
    else:
        _fuse_convex(documents.values(), without_vectors, keyword_weight, keyword_top)
    # equal fused scores: the document holding the query's words first (a name query's paper at 0.5 from its
    # keywords alone tied the top vector hit, which held neither name, at 0.5 from its vector alone)
    return sorted(documents.values(), key=lambda d: (-d.fused_score, -(d.keyword_score or 0.0), d.doc_id))


def _fuse_z(
    index: VectorIndex,
    views: np.ndarray,
    documents: dict[str, RankedDocument],
    without_vectors: set[str],
    keyword_weight: float,
    keyword_top: float | None = None,
) -> None:
    """Standard scores over the pool (zscore_fusion.py); the rest keep their convex order, below it."""
    _fuse_convex(documents.values(), without_vectors, keyword_weight, keyword_top)

    def exact(doc_ids: list[str]) -> dict[str, float]:
        return {doc_id: hit.score for doc_id, hit in index.best_per_document(views, doc_ids).items()}

    pool = zscore_fusion.fuse(documents.values(), without_vectors, exact)
    floor = min((documents[doc_id].fused_score for doc_id in pool), default=0.0) - 2.0
    for doc_id, document in documents.items():
        if doc_id not in pool:
            document.fused_score += floor


def _without_vectors(engine: Engine, index: VectorIndex | None, doc_ids: list[str], first: FirstPassSide | None = None) -> set[str]:
    """Those of `doc_ids` that have no current vectors of either kind (not embedded yet)."""
    if not doc_ids:
        return set()
    missing = set(doc_ids) - (index.documents_with_vectors(doc_ids) if index is not None else set())
    if first is not None and missing:
        missing -= first.documents_with_vectors(list(missing))
    return missing


def _fuse_rrf(documents, without_vectors: set[str]) -> None:
    for document in documents:
        score = 0.0
        if document.keyword_rank is not None:
            score += 1.0 / (RRF_K + document.keyword_rank)
            if document.doc_id in without_vectors:
                score += 1.0 / (RRF_K + document.keyword_rank)
        if document.vector_rank is not None:
            score += 1.0 / (RRF_K + document.vector_rank)
        document.fused_score = score


def _fuse_convex(documents, without_vectors: set[str], keyword_weight: float, keyword_top: float | None = None) -> None:
    """alpha * BM25 / max BM25 + (1 - alpha) * min-max-scaled cosine, alpha = `keyword_weight` for a document
    ranked by its refined vector, `first_pass_keyword_weight` for one ranked by its first-pass vector."""
    documents = list(documents)
    keyword_top = keyword_top or max((d.keyword_score or 0.0 for d in documents), default=0.0) or 1.0
    scaled = vector_parts(documents)
    first_pass_weight = first_pass_keyword_weight(keyword_weight)
    for document in documents:
        keyword_part = (document.keyword_score or 0.0) / keyword_top
        if document.vector_score is not None:
            vector_part = scaled[document.doc_id]
        else:
            vector_part = keyword_part if document.doc_id in without_vectors else 0.0
        weight = first_pass_weight if document.vector_kind == FIRST_PASS else keyword_weight
        document.fused_score = weight * keyword_part + (1 - weight) * vector_part


def first_pass_keyword_weight(keyword_weight: float) -> float:
    """The keyword side's weight for a document ranked by its first-pass vector, for a query whose
    refined documents give it `keyword_weight`: first-pass vectors keep the same fraction of the vector
    side's share, so a paragraph-long request, which leans on its keywords (LONG_QUERY_KEYWORD_WEIGHT),
    leans on them more where only first-pass vectors answer it too."""
    kept = (1 - first_pass_side.FIRST_PASS_KEYWORD_WEIGHT) / (1 - CONVEX_KEYWORD_WEIGHT)
    return 1 - kept * (1 - keyword_weight)
