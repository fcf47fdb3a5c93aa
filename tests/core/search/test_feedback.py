"""Pseudo-relevance feedback: RM3 expansion terms and the Rocchio query vector."""

from __future__ import annotations

import numpy as np
import pytest

from linkly_ls.core.search import feedback
from linkly_ls.core.search.ranking import rank_documents


def test_rm3_adds_the_words_of_the_best_passages_weighted_by_their_score():
    passages = [("solar panels convert light; photovoltaic efficiency", 3.0), ("photovoltaic cells and efficiency", 1.0)]
    terms = feedback.rm3_terms("solar power", passages)
    assert {"photovolta", "effici"} <= set(terms)
    assert terms["photovolta"] > terms["cell"]  # both passages against the weaker one only
    # the query's own two terms keep RM3_ORIGINAL_WEIGHT of the total weight
    share = 2 / (2 + sum(terms.values()))
    assert share == pytest.approx(feedback.RM3_ORIGINAL_WEIGHT)


def test_rm3_without_passages_or_query_terms_adds_nothing():
    assert feedback.rm3_terms("solar", []) == {}
    assert feedback.rm3_terms("the of", [("solar panels", 1.0)]) == {}


def test_rocchio_moves_the_query_towards_the_documents():
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    documents = [np.array([0.0, 1.0, 0.0], dtype=np.float32)]
    moved = feedback.rocchio_vector(query, documents)
    assert np.linalg.norm(moved) == pytest.approx(1.0)
    assert moved[1] > 0 and moved[0] > moved[1]
    assert feedback.rocchio_vector(query, []) is query


def test_rm3_round_finds_a_document_that_shares_only_the_feedback_words(engine_for, library_dir, monkeypatch):
    (library_dir / "solar.txt").write_text("Solar panels\n\nsolar photovoltaic modules and inverter efficiency\n")
    (library_dir / "modules.txt").write_text("Rooftop arrays\n\nphotovoltaic modules with a better inverter\n")
    (library_dir / "garden.txt").write_text("Gardens\n\nroses and tulips in spring\n")
    engine = engine_for(library_dir)
    engine.index()
    first = rank_documents(engine, "solar", None, mode="keyword")
    monkeypatch.setattr(feedback, "RM3_DOCUMENTS", 2)
    second = rank_documents(engine, "solar", None, mode="keyword")
    paths = {record.doc_id: record.path for record in engine.catalog.all_documents()}
    assert [paths[d.doc_id].rsplit("/", 1)[1] for d in first.documents] == ["solar.txt"]
    assert [paths[d.doc_id].rsplit("/", 1)[1] for d in second.documents] == ["solar.txt", "modules.txt"]
