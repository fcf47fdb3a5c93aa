"""The query's views on the vector side: the whole query, and each sentence of a multi-sentence one."""

from __future__ import annotations

import numpy as np
import pytest

from linkly_ls.core.search import query_views


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

    def embed_many(texts: list[str]) -> np.ndarray:
        embedded.append(texts)
        return np.vstack([np.full(4, number, dtype=np.float32) for number in range(1, len(texts) + 1)])

    views = query_views.view_vectors("First part here. Second part here.", whole, embed_many)
    assert embedded == [["First part here.", "Second part here."]]  # one model call for the sentences
    assert views.shape == (3, 4) and views[0].tolist() == [1, 1, 1, 1] and views[2].tolist() == [2, 2, 2, 2]


def test_views_can_be_turned_off(monkeypatch):
    monkeypatch.setattr(query_views, "SENTENCE_VIEWS", False)
    views = query_views.view_vectors("One sentence. Another one.", np.ones(4, dtype=np.float32), lambda texts: pytest.fail(str(texts)))
    assert views.shape == (1, 4)

