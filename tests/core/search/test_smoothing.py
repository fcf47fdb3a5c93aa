"""Score regularisation: a document moves towards the scores of its close neighbours in meaning among the best."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.search import smoothing
from linkly_ls.core.search.ranked import RankedDocument
from linkly_ls.core.search.vectors import ChunkRef, VectorIndex
from linkly_ls.core.store.catalog import Catalog

from tests.core.search.test_vectors import DIM, MODEL, put_document


def axis(*weights: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(weights)] = weights
    return vector / np.linalg.norm(vector)


#: the index keeps 8-bit vectors: a cosine read back from it is off by up to about 1e-4
COSINE_TOLERANCE = 1e-3

#: three documents alike in meaning (a, b, c) and one apart from them (d)
VECTORS = {"a": axis(1.0), "b": axis(1.0, 0.1), "c": axis(1.0, 0.0, 0.1), "d": axis(0.0, 0.0, 0.0, 1.0)}


@pytest.fixture
def index(tmp_path: Path):
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    for doc_id, vector in VECTORS.items():
        put_document(catalog, doc_id)
        index.add(doc_id, "h1", [ChunkRef(doc_id, 0, 1, 10)], vector[None, :])
    index.checkpoint()
    yield index
    index.close()
    catalog.close()


def ranked(scores: dict[str, float]) -> list[RankedDocument]:
    return sorted((RankedDocument(doc_id, fused_score=score) for doc_id, score in scores.items()), key=lambda d: -d.fused_score)


def test_a_document_moves_towards_its_close_neighbours_scores(index, monkeypatch):
    monkeypatch.setattr(smoothing, "SMOOTHING_DOCUMENTS", 4)
    monkeypatch.setattr(smoothing, "SMOOTHING_NEIGHBOURS", 2)
    monkeypatch.setattr(smoothing, "SMOOTHING_WEIGHT", 0.3)
    hits = index.exact_search(axis(1.0, 0.05, 0.05, 0.5), 10)
    assert all(hit.key >= 0 for hit in hits)
    result = smoothing.smoothed(ranked({"a": 1.0, "d": 0.9, "b": 0.5, "c": 0.5}), hits, index)
    scores = {document.doc_id: document.fused_score for document in result}
    ab, bc = 1 / np.sqrt(1.01), 1 / 1.01  # the cosines of a and b (a and c alike), of b and c
    # a moves towards its neighbours' 0.5 by 0.3 times their closeness (mean cosine); d has no
    # neighbour in meaning and keeps 0.9, and now ranks first
    assert scores["a"] == pytest.approx(1.0 + 0.3 * ab * (0.5 - 1.0), abs=COSINE_TOLERANCE)
    assert scores["d"] == pytest.approx(0.9)
    b_mean = (ab * 1.0 + bc * 0.5) / (ab + bc)
    assert scores["b"] == pytest.approx(0.5 + 0.3 * (ab + bc) / 2 * (b_mean - 0.5), abs=COSINE_TOLERANCE)
    assert [document.doc_id for document in result][:2] == ["d", "a"]


def test_a_document_the_vector_side_did_not_reach_keeps_its_score_and_is_no_neighbour(index, monkeypatch):
    monkeypatch.setattr(smoothing, "SMOOTHING_DOCUMENTS", 4)
    monkeypatch.setattr(smoothing, "SMOOTHING_NEIGHBOURS", 2)
    monkeypatch.setattr(smoothing, "SMOOTHING_WEIGHT", 0.3)
    hits = [hit for hit in index.exact_search(axis(1.0), 10) if hit.doc_id != "c"]
    result = smoothing.smoothed(ranked({"a": 1.0, "c": 0.8, "b": 0.2}), hits, index)
    scores = {document.doc_id: document.fused_score for document in result}
    assert scores["c"] == 0.8
    ab = 1 / np.sqrt(1.01)
    assert scores["a"] == pytest.approx(1.0 + 0.3 * ab * (0.2 - 1.0), abs=COSINE_TOLERANCE)  # b is its only neighbour
    assert scores["b"] == pytest.approx(0.2 + 0.3 * ab * (1.0 - 0.2), abs=COSINE_TOLERANCE)


def test_only_the_best_documents_are_smoothed(index, monkeypatch):
    monkeypatch.setattr(smoothing, "SMOOTHING_DOCUMENTS", 2)
    hits = index.exact_search(axis(1.0), 10)
    result = smoothing.smoothed(ranked({"a": 1.0, "b": 0.6, "c": 0.1}), hits, index)
    assert {document.doc_id: document.fused_score for document in result}["c"] == 0.1


def test_no_documents_with_vectors_leave_the_ranking_as_it_is(index, monkeypatch):
    documents = ranked({"a": 1.0, "b": 0.5})
    assert smoothing.smoothed(documents, [], index) == documents
    assert index.vectors_of([])[0] == []
