"""Score regularisation over the best documents' neighbours in meaning (the cluster hypothesis:
documents alike tend to be relevant to the same requests; after Diaz, "Regularizing ad hoc
retrieval scores", CIKM 2005).

After fusion, each of the best SMOOTHING_DOCUMENTS documents that the vector side found moves its
fused score towards the mean score of its SMOOTHING_NEIGHBOURS nearest among them (each weighted
by the cosine of the two documents' passages closest to the query), by SMOOTHING_WEIGHT times
how close those neighbours are (their mean cosine): `s' = s + w * closeness * (mean - s)`. A
document with no close neighbour keeps its score, so one note that alone answers a request is not
pulled down by a cluster of alike documents (a book's chapters) that share a common word with it;
with the plain mean of Diaz's form it was. A document the vector side did not reach keeps its score
and is no one's neighbour.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkly_ls.core.search.ranked import RankedDocument
    from linkly_ls.core.search.vector_search import VectorHit
    from linkly_ls.core.search.vectors import VectorIndex

#: documents smoothed (0: off). The three were chosen by leave-one-collection-out over 16 collections
#: of four shapes, among the settings that keep a lone answer in place (docs/search-quality.md, "Neighbours in meaning")
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
    # einsum, not `@`: BLAS's threads would spin on after so small a product (as in `vector_math.cosines`)
    similarity = np.clip(np.einsum("ij,kj->ik", vectors, vectors), 0.0, None)
    np.fill_diagonal(similarity, 0.0)
    neighbours = min(SMOOTHING_NEIGHBOURS, len(top) - 1)
    nearest = -np.sort(-similarity, axis=1)[:, neighbours - 1 : neighbours]
    similarity = np.where(similarity >= nearest, similarity, 0.0)
    scores = np.asarray([document.fused_score for document in top])
    total = similarity.sum(axis=1)
    neighbour_mean = np.divide(np.einsum("ij,j->i", similarity, scores), total, out=scores.copy(), where=total > 0)
    pull = SMOOTHING_WEIGHT * total / neighbours
    for document, score in zip(top, scores + pull * (neighbour_mean - scores)):
        document.fused_score = float(score)
    return sorted(ranked, key=lambda document: -document.fused_score)
