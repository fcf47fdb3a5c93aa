"""The query's views on the vector side: the whole query, and each sentence of a multi-sentence one."""

from __future__ import annotations

import numpy as np
import pytest

from linkly_ls.core.search import query_views


def test_a_query_of_one_sentence_has_no_sentence_views():
    assert query_views.sentences("what similarity laws must be obeyed by aeroelastic models .") == []
    assert query_views.sentences("heat transfer") == []


def test_sentences_are_cut_after_full_stops_question_marks_and_semicolons():
    query = "I am looking for work on indexing. Does it cover thesauri? Also on classification; and on retrieval"
    assert query_views.sentences(query) == [
        "I am looking for work on indexing.", "Does it cover thesauri?", "Also on classification;", "and on retrieval",
    ]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Dr. Dean Ornish", []),
        ("Veggies vs. Cancer", []),
        ("Treating Asthma With Plants vs. Supplements?", []),
        ("U.S . POLICY TOWARD THE NEW REGIME IN SOUTH VIET NAM .", []),
        ("What? Why? How?", []),
        ("The use of mathematics in retrieval, e.g. group theory.", []),
        (
            "Books by Tolkien on languages. Also St. John's wort in folk medicine.",
            ["Books by Tolkien on languages.", "Also St. John's wort in folk medicine."],
        ),
        ("Diet vs. drugs for high blood pressure. Which works? Why?", ["Diet vs. drugs for high blood pressure.", "Which works? Why?"]),
    ],
)
def test_a_piece_shorter_than_a_sentence_stays_with_its_neighbour(query, expected):
    """A cut at an abbreviation is no sentence: alone, "Cancer" would be a view every passage on cancer matches."""
    assert query_views.sentences(query) == expected
    assert all(len(sentence.split()) >= query_views.SENTENCE_WORDS for sentence in query_views.sentences(query))


def test_at_most_max_sentences_are_embedded(monkeypatch):
    monkeypatch.setattr(query_views, "MAX_SENTENCES", 2)
    assert len(query_views.sentences("One is here. Two is here. Three is here. Four is here.")) == 2


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

