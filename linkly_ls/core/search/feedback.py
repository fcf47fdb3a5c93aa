"""Pseudo-relevance feedback: a second retrieval round that learns from the first round's best documents.

- keyword side, RM3 (Lavrenko and Croft's relevance model, as in Anserini): the
  best passages of the first round vote for terms in proportion to their share
  of the round's score; the strongest `RM3_TERMS` are added to the query, which
  keeps `RM3_ORIGINAL_WEIGHT` of the total weight;
- vector side, Rocchio: the query vector moves towards the mean of the best
  documents' closest chunks, `q' = q + ROCCHIO_BETA * mean(v)`.

Both are measured per collection by `linkly_ls.core.search.evaluation`; the
number of feedback documents is 0 (off) unless leave-one-collection-out chose it.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from linkly_ls.core.search.query_terms import ANALYZERS, english_query_terms

if TYPE_CHECKING:
    import numpy as np

#: documents of the first round that feed the keyword side's second round (0: no second round)
RM3_DOCUMENTS = 0
RM3_TERMS = 10
#: share of the expanded query's weight kept by the query's own terms
RM3_ORIGINAL_WEIGHT = 0.5
#: documents of the first round whose closest chunks move the query vector (0: no second round)
ROCCHIO_DOCUMENTS = 0
ROCCHIO_BETA = 0.5
#: longest passage (lines) read for feedback: a page of a book is enough to learn its words
FEEDBACK_LINES = 60


def rm3_terms(query: str, passages: list[tuple[str, float]]) -> dict[str, float]:
    """Expansion terms and their weights, on the scale of the query's own term counts.

    `passages`: (text, first-round score) of the best documents. The weights are
    added to the query's: its own terms keep `RM3_ORIGINAL_WEIGHT` of the total,
    the feedback terms share the rest by their relevance-model probability.
    """
    analyzer = ANALYZERS["lk_en"]
    query_terms = english_query_terms(query)
    if not query_terms or not passages:
        return {}
    total_score = sum(max(score, 0.0) for _, score in passages) or 1.0
    relevance: Counter[str] = Counter()
    for text, score in passages:
        words = [term for term in analyzer.analyze(text) if _useful(term)]
        if not words:
            continue
        share = max(score, 0.0) / total_score
        for term, frequency in Counter(words).items():
            relevance[term] += share * frequency / len(words)
    best = relevance.most_common(RM3_TERMS)
    mass = sum(weight for _, weight in best)
    if not mass:
        return {}
    scale = len(query_terms) * (1 - RM3_ORIGINAL_WEIGHT) / RM3_ORIGINAL_WEIGHT / mass
    return {term: weight * scale for term, weight in best}


def _useful(term: str) -> bool:
    return len(term) > 1 and not term.isdigit()


def rocchio_vector(query_vector: np.ndarray, document_vectors: list[np.ndarray]) -> np.ndarray:
    """The query vector moved towards the mean of the given (normalised) chunk vectors, normalised."""
    import numpy as np  # loaded with the vectors, not with every open index

    if not document_vectors:
        return query_vector
    moved = np.asarray(query_vector, dtype=np.float32) + ROCCHIO_BETA * np.mean(document_vectors, axis=0)
    norm = float(np.linalg.norm(moved)) or 1.0
    result = (moved / norm).astype(np.float32)
    result.flags.writeable = False
    return result
