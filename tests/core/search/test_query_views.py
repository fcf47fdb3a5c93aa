"""The query's views on the vector side: the whole query, and each sentence of a multi-sentence one."""

from __future__ import annotations

import numpy as np
import pytest

from linkly_ls.core.search import query_views
from linkly_ls.core.search.vectors import VectorIndex

from core.search.test_vectors import DIM, MODEL, catalog, fill, unit  # noqa: F401 (catalog is a fixture)


def test_a_query_of_one_sentence_has_no_sentence_views():
    assert query_views.sentences("what similarity laws must be obeyed by aeroelastic models .") == []
    assert query_views.sentences("heat transfer") == []


def test_sentences_are_cut_after_full_stops_question_marks_and_semicolons():
    query = "I am looking for work on indexing. Does it cover thesauri? Also classification; and retrieval"
    assert query_views.sentences(query) == [
        "I am looking for work on indexing.", "Does it cover thesauri?", "Also classification;", "and retrieval",
    ]


def test_at_most_max_sentences_are_embedded(monkeypatch):
    monkeypatch.setattr(query_views, "MAX_SENTENCES", 2)
    assert len(query_views.sentences("One. Two. Three. Four.")) == 2


def test_views_are_the_whole_query_then_each_sentence():
    whole = np.ones(4, dtype=np.float32)
    embedded: list[str] = []

    def embed(text: str) -> np.ndarray:
        embedded.append(text)
        return np.full(4, len(embedded), dtype=np.float32)

    views = query_views.view_vectors("First part here. Second part here.", whole, embed)
    assert embedded == ["First part here.", "Second part here."]
    assert views.shape == (3, 4) and views[0].tolist() == [1, 1, 1, 1] and views[2].tolist() == [2, 2, 2, 2]


def test_views_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(query_views, "SENTENCE_VIEWS", False)
    views = query_views.view_vectors("One sentence. Another one.", np.ones(4, dtype=np.float32), lambda text: pytest.fail(text))
    assert views.shape == (1, 4)


def test_search_by_views_scores_each_chunk_by_its_best_view(catalog, tmp_path):  # noqa: F811
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=100, chunks_each=2)
    views = np.vstack([unit(1, seed=5)[0], vectors[17], vectors[160]])
    hits = query_views.search_views(index, views, 10, None)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert {(hits[0].doc_id, hits[0].chunk), (hits[1].doc_id, hits[1].chunk)} == {("doc00008", 1), ("doc00080", 0)}
    assert len({(hit.doc_id, hit.chunk) for hit in hits}) == len(hits) == 10
    for hit in hits:
        row = vectors[int(hit.doc_id[3:]) * 2 + hit.chunk]
        assert hit.score == pytest.approx(float((views @ row).max()), abs=1e-3)
    single = query_views.search_views(index, views[:1], 5, None)
    assert single == index.search(views[0], 5)
    index.close()
