"""Ranking while the model refines (`core/search/mixed_state.py`): first-pass vectors place every
document, the refined ones reorder among their places."""

from __future__ import annotations

import pytest

from linkly_ls.core.search.mixed_state import slotted
from linkly_ls.core.search.ranking import RankedDocument, rank_documents
from linkly_ls.core.tools import call_tool
from tests.core.indexing.test_first_pass import QUERY, after_first_pass
from tests.core.search.test_ranking import copy_fixtures


def test_reordered_documents_take_the_places_they_hold_in_their_own_order_and_those_places_scores():
    placing = [RankedDocument(doc_id, fused_score=score) for doc_id, score in
               [("a", 0.9), ("r1", 0.8), ("b", 0.7), ("r2", 0.6), ("r3", 0.5), ("c", 0.4)]]
    reordered = [RankedDocument(doc_id, fused_score=score) for doc_id, score in
                 [("r3", 0.99), ("r1", 0.5), ("r2", 0.1), ("late", 0.9)]]
    ranked = slotted(placing, reordered)
    assert [d.doc_id for d in ranked] == ["a", "r3", "b", "r1", "r2", "c", "late"]
    assert [d.fused_score for d in ranked] == [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.4], "each takes its place's score"
    assert ranked[1] is reordered[0], "the reordering side's document, with its passage and vector kind"
    assert [d.doc_id for d in slotted(placing, [])] == [d.doc_id for d in placing]


class _Enough(Exception):
    """The refining run has refined as many documents as the test wants."""


def refine_some(engine, monkeypatch, documents: int) -> set[str]:
    """Let the model refine about `documents` documents (rounds of one), then stop it; the refined ids."""
    from linkly_ls.core.indexing import vector_sync

    monkeypatch.setattr(vector_sync, "DOCS_PER_ROUND", 1)

    def stop(done: int, _total: int, _path: str) -> None:
        if done >= documents:
            raise _Enough

    with pytest.raises(_Enough):
        engine.vectors.run_until_complete(progress=stop)
    model = engine.vectors.provider.current()
    return engine.vectors.index_for(model).documents_with_vectors(engine.catalog.doc_ids())


def every_ranked_id(engine, query: str) -> list[str]:
    return [document.doc_id for document in rank_documents(engine, query, None).documents]


@pytest.mark.slow
def test_while_the_model_refines_first_pass_vectors_place_every_document(tmp_path, monkeypatch):
    """Refined documents keep their first-pass vectors until every document is refined; every document
    is placed as with first-pass vectors alone and the refined ones reorder among their places."""
    library = copy_fixtures(tmp_path / "library")
    with after_first_pass(tmp_path / "data", library) as engine:
        queries = (QUERY, "ownership and borrowing", "http status codes")
        before = {query: every_ranked_id(engine, query) for query in queries}
        refined = refine_some(engine, monkeypatch, 3)
        assert 0 < len(refined) < engine.catalog.count()
        _, first_index = engine.vectors.first_pass.search_side()
        assert first_index.documents_with_vectors(list(refined)) == refined, "refined documents keep first-pass vectors"
        moved = 0
        for query in queries:
            during = every_ranked_id(engine, query)
            assert [d for d in during if d not in refined] == [d for d in before[query] if d not in refined]
            places = [place for place, doc_id in enumerate(before[query]) if doc_id in refined]
            assert [place for place, doc_id in enumerate(during) if doc_id in refined][: len(places)] == places
            moved += [d for d in during if d in refined] != [d for d in before[query] if d in refined]
            assert "first-pass" in call_tool(engine, "search", {"query": query}).mode_reason
        assert moved, "the refined vectors reorder the refined documents for some query"
        engine.vectors.run_until_complete()
        assert engine.vectors.first_pass.search_side() == (None, None), "all refined: the first-pass index is emptied"


@pytest.mark.slow
def test_a_document_added_to_a_refined_library_leaves_the_others_in_their_refined_order(tmp_path):
    """Documents refined before a new one came have no first-pass vectors left: the refined vectors place
    every document then, and the new one's first-pass vector orders it among the places it takes."""
    library = copy_fixtures(tmp_path / "library")
    with after_first_pass(tmp_path / "data", library) as engine:
        engine.vectors.run_until_complete()
        refined = {query: every_ranked_id(engine, query) for query in (QUERY, "ownership and borrowing")}
        (library / "tide.md").write_text("# Tide tables\n\nHigh water at the harbour mouth, twice a day.\n")
        engine.index()
        assert engine.vectors.first_pass.run([]) == 1
        new = engine.catalog.by_path(str(library / "tide.md")).doc_id
        for query, order in refined.items():
            found = call_tool(engine, "search", {"query": query})
            assert found.mode == "hybrid" and "first-pass" in found.mode_reason
            assert [d for d in every_ranked_id(engine, query) if d != new] == order
        assert every_ranked_id(engine, "harbour tide tables")[0] == new
