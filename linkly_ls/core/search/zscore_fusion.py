"""Fusion by standard scores over a shared pool of candidates (`fusion.FUSION = "z"`).

The convex fusion divides BM25 by the best BM25 and stretches the cosines from
the lowest candidate's to the best's. The two scales answer differently to the
shape of a query: a long request's BM25 scores crowd near the best (every
document matches some of its many words), so their differences shrink while
the cosines' are stretched to 0-1 regardless, and the weaker side decides. Here
each side is measured in its own spread instead (CombSUM of z-scores, the
"standard" normalisation of Montague and Aslam): the pool is each side's best
`POOL_DOCUMENTS` documents; every pooled document gets both scores (the exact
best-chunk cosine where the vector side's candidates missed it, BM25 0 where no
query word occurs); each side becomes (score - mean) / standard deviation over
the pool; the fused score is their mean. A side whose best documents stand out
from the rest counts for more on that query, with no weight to tune.

Measured (README, "Search quality"), it lifts the long requests (LISA, the
Cranfield source papers) and costs MEDLINE and NFCorpus; the leave-one-out
table there says whether it is the default.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkly_ls.core.search.ranked import RankedDocument

#: documents taken from the top of each side into the pool
POOL_DOCUMENTS = 100


def fuse(
    documents: Iterable[RankedDocument],
    without_vectors: set[str],
    exact_cosines: Callable[[list[str]], dict[str, float]],
) -> set[str]:
    """Set the pooled documents' `fused_score` to the mean of their two z-scores; returns the pool's ids.

    `without_vectors`: documents not embedded yet (their keyword z-score stands for both sides).
    `exact_cosines(doc_ids)`: the best-chunk cosine of documents the vector side's candidates missed.
    """
    documents = list(documents)
    keyword = sorted((d for d in documents if d.keyword_score), key=lambda d: (-(d.keyword_score or 0.0), d.doc_id))
    vector = sorted((d for d in documents if d.vector_score is not None), key=lambda d: (-(d.vector_score or 0.0), d.doc_id))
    pool = {d.doc_id: d for d in keyword[:POOL_DOCUMENTS] + vector[:POOL_DOCUMENTS]}
    missing = [doc_id for doc_id, d in pool.items() if d.vector_score is None and doc_id not in without_vectors]
    for doc_id, cosine in exact_cosines(missing).items() if missing else ():
        pool[doc_id].vector_score = cosine
    keyword_z = _standard({doc_id: d.keyword_score or 0.0 for doc_id, d in pool.items()})
    vector_z = _standard({doc_id: d.vector_score for doc_id, d in pool.items() if d.vector_score is not None})
    lowest = min(vector_z.values(), default=0.0)
    for doc_id, document in pool.items():
        if doc_id in vector_z:
            vector_part = vector_z[doc_id]
        else:
            vector_part = keyword_z[doc_id] if doc_id in without_vectors else lowest
        document.fused_score = 0.5 * keyword_z[doc_id] + 0.5 * vector_part
    return set(pool)


def _standard(scores: dict[str, float]) -> dict[str, float]:
    """(score - mean) / population standard deviation (1 when every score is the same)."""
    if not scores:
        return {}
    mean = statistics.fmean(scores.values())
    spread = statistics.pstdev(scores.values()) or 1.0
    return {key: (value - mean) / spread for key, value in scores.items()}
