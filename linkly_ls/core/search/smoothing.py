"""Score regularisation over the best documents' neighbours in meaning (the cluster hypothesis:
documents alike tend to be relevant to the same requests; Diaz, "Regularizing ad hoc retrieval
scores", CIKM 2005).

After fusion, each of the best SMOOTHING_DOCUMENTS documents that the vector side found keeps
1 - SMOOTHING_WEIGHT of its fused score and takes SMOOTHING_WEIGHT of the mean score of its
SMOOTHING_NEIGHBOURS nearest among them, each neighbour weighted by the cosine of the two
documents' passages closest to the query: `s' = (1 - w) s + w * sum(cos * s_j) / sum(cos)`.
A document the vector side did not reach keeps its score and is no one's neighbour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkly_ls.core.search.ranking import RankedDocument
    from linkly_ls.core.search.vectors import VectorHit, VectorIndex

#: documents smoothed (0: off); these three were chosen by leave-one-collection-out over 16
#: collections of four shapes among five settings of 50-200 documents, 10-20 neighbours and weight
#: 0.3-0.4, and none (README, "Neighbours in meaning"): the same choice in every fold
SMOOTHING_DOCUMENTS = 50
SMOOTHING_NEIGHBOURS = 10
SMOOTHING_WEIGHT = 0.3


def smoothed(ranked: list[RankedDocument], hits: list[VectorHit], index: VectorIndex) -> list[RankedDocument]:
    """`ranked` (best first) with the scores of its best documents smoothed, best first again."""
    import numpy as np  # loaded with the vectors

    best_key: dict[str, int] = {}
    for hit in hits:  # best first: a document's first hit is its closest passage
        if hit.key >= 0:
            best_key.setdefault(hit.doc_id, hit.key)
    top = [document for document in ranked[:SMOOTHING_DOCUMENTS] if document.doc_id in best_key]
    keys, vectors = index.vectors_of([best_key[document.doc_id] for document in top])
    if len(keys) < 2:
        return ranked
    present = set(keys)
    top = [document for document in top if best_key[document.doc_id] in present]
    vectors = vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12)
    # einsum, not `@`: BLAS's threads would spin on after so small a product (as in `vectors._cosines`)
    similarity = np.clip(np.einsum("ij,kj->ik", vectors, vectors), 0.0, None)
    np.fill_diagonal(similarity, 0.0)
    neighbours = min(SMOOTHING_NEIGHBOURS, len(top) - 1)
    nearest = -np.sort(-similarity, axis=1)[:, neighbours - 1 : neighbours]
    similarity = np.where(similarity >= nearest, similarity, 0.0)
    scores = np.asarray([document.fused_score for document in top])
    total = similarity.sum(axis=1)
    neighbour_mean = np.divide(np.einsum("ij,j->i", similarity, scores), total, out=scores.copy(), where=total > 0)
    for document, score in zip(top, (1 - SMOOTHING_WEIGHT) * scores + SMOOTHING_WEIGHT * neighbour_mean):
        document.fused_score = float(score)
    return sorted(ranked, key=lambda document: -document.fused_score)
