"""Ranking while the model refines (`core/search/mixed_state.py`): first-pass vectors place every
document, the refined ones reorder among their places."""

from __future__ import annotations

import os
import time

import pytest

from linkly_ls.core.search.mixed_state import slotted
from linkly_ls.core.search.ranked import RankedDocument
from linkly_ls.core.search.ranking import rank_documents
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


def test_a_reordered_document_its_own_side_reached_by_no_passage_keeps_the_places_passage():
    from linkly_ls.core.search.ranked import Passage

    placing = [RankedDocument("r", fused_score=0.5, vector_passage=Passage(3, 9))]
    ranked = slotted(placing, [RankedDocument("r", fused_score=0.1)])
    assert ranked[0].passage == Passage(3, 9)


class _Enough(Exception):
    """The refining run has refined as many documents as the test wants."""


def refine_some(engine, monkeypatch, documents: int) -> set[str]:
    """Let the model refine about `documents` documents (rounds of one), then stop it; the refined ids."""
    from linkly_ls.core.indexing import embedding_rounds

    monkeypatch.setattr(embedding_rounds, "DOCS_PER_ROUND", 1)

    def stop(done: int, _total: int, _path: str) -> None:
        if done >= documents:
            raise _Enough

    with pytest.raises(_Enough):
        engine.vectors.run_until_complete(progress=stop)
    return refined_ids(engine)


def refined_ids(engine) -> set[str]:
    model = engine.vectors.provider.current()
    return engine.vectors.index_for(model).documents_with_vectors(engine.catalog.doc_ids())


def every_ranked_id(engine, query: str, mode: str = "auto") -> list[str]:
    return [document.doc_id for document in rank_documents(engine, query, None, mode).documents]


def placing_kinds(monkeypatch) -> list[tuple[str, list[str], list[str]]]:
    """Records, for each search while the model refines, which kind of vector placed the documents, the
    order the others were given in, and the placing order (`mixed_state.slotted` still does the work)."""
    from linkly_ls.core.search import mixed_state

    seen: list[tuple[str, list[str], list[str]]] = []
    real = mixed_state.slotted

    def recording(placing, reordered):
        kind = placing[0].vector_kind if placing else ""
        seen.append((kind, [document.doc_id for document in reordered], [document.doc_id for document in placing]))
        return real(placing, reordered)

    monkeypatch.setattr(mixed_state, "slotted", recording)
    return seen


QUERIES = (QUERY, "ownership and borrowing", "http status codes")


@pytest.mark.slow
def test_while_the_model_refines_first_pass_vectors_place_every_document(tmp_path, monkeypatch):
    """Refined documents keep their first-pass vectors until every document is refined; every document
    is placed as with first-pass vectors alone and the refined ones take those places in the order of
    their own ranking. Once the model is loaded the first-pass side reads the query with it too
    (`first_pass_readings`), so the places are those of that placing, not of the search before."""
    library = copy_fixtures(tmp_path / "library")
    with after_first_pass(tmp_path / "data", library) as engine:
        before = {query: every_ranked_id(engine, query) for query in QUERIES}
        refined = refine_some(engine, monkeypatch, 3)
        assert 0 < len(refined) < engine.catalog.count()
        _, first_index = engine.vectors.first_pass.search_side()
        assert first_index.documents_with_vectors(list(refined)) == refined, "refined documents keep first-pass vectors"
        seen = placing_kinds(monkeypatch)
        moved = 0
        for query in QUERIES:
            during = every_ranked_id(engine, query)
            kind, reordered, placing = seen[-1]
            assert kind == "first_pass" and sorted(placing) == sorted(before[query]) == sorted(during)
            assert [d for d in during if d not in refined] == [d for d in placing if d not in refined]
            places = [place for place, doc_id in enumerate(placing) if doc_id in refined]
            assert [place for place, doc_id in enumerate(during) if doc_id in refined] == places
            assert [d for d in during if d in refined] == reordered, "the refined side's own order"
            moved += reordered != [d for d in before[query] if d in refined]
            assert "first-pass" in call_tool(engine, "search", {"query": query}).mode_reason
        assert moved, "the refined vectors reorder the refined documents for some query"
        for query in QUERIES:  # no keywords to place by: each document by the vectors it has
            for document in rank_documents(engine, query, None, "vector").documents:
                assert document.vector_kind == ("refined" if document.doc_id in refined else "first_pass")
        engine.vectors.run_until_complete()
        assert engine.vectors.first_pass.search_side() == (None, None), "all refined: the first-pass index is emptied"


@pytest.mark.slow
def test_a_document_refined_before_the_first_pass_caught_up_leaves_first_pass_vectors_placing(tmp_path, monkeypatch):
    """A note saved while the model refines is refined next, before any first pass reads it again: it
    has no current first-pass vector, and the others are still placed by theirs."""
    library = copy_fixtures(tmp_path / "library")
    with after_first_pass(tmp_path / "data", library) as engine:
        refine_some(engine, monkeypatch, 2)
        note = sorted((library / "notes" / "rust").glob("*.md"))[-1]
        note.write_text(note.read_text(encoding="utf-8") + "\nOwnership and borrowing, once more.\n", encoding="utf-8")
        tomorrow = time.time() + 86_400
        os.utime(note, (tomorrow, tomorrow))  # the newest day: the model's next round takes it
        engine.index()
        edited = engine.catalog.by_path(str(note)).doc_id
        refine_some(engine, monkeypatch, 1)
        assert edited in refined_ids(engine)
        assert not engine.vectors.first_pass.search_side()[1].documents_with_vectors([edited])
        seen = placing_kinds(monkeypatch)
        for query in QUERIES:
            assert edited in every_ranked_id(engine, query)
        assert [kind for kind, *_ in seen] == ["first_pass"] * len(QUERIES)


@pytest.mark.slow
def test_a_document_added_to_a_refined_library_ranks_as_without_a_first_pass(tmp_path, monkeypatch):
    """Documents refined before a new one came have no first-pass vectors left: the model's vectors place
    every document then, the new one counting its keywords, as a library without a first pass ranks it."""
    from tests.core.search.test_ranking import open_engine

    library = copy_fixtures(tmp_path / "library")
    plain = open_engine(tmp_path / "plain", library, first_pass=False)
    try:
        with after_first_pass(tmp_path / "data", library) as engine:
            engine.vectors.run_until_complete()
            plain.index()
            plain.vectors.run_until_complete()
            (library / "tide.md").write_text("# Tide tables\n\nHigh water at the harbour mouth, twice a day.\n")
            engine.index()
            plain.index()
            assert engine.vectors.first_pass.run([]) == 1
            seen = placing_kinds(monkeypatch)
            paths = lambda engine, query: [engine.catalog.get(d).path for d in every_ranked_id(engine, query)]
            tide = str(library / "tide.md")
            for query in (*QUERIES, "harbour tide tables"):
                found = call_tool(engine, "search", {"query": query})
                assert found.mode == "hybrid" and "first-pass" in found.mode_reason
                ranked, without = paths(engine, query), paths(plain, query)
                if tide not in without:  # no word of the query: only its first-pass vector found it, and it is last
                    assert ranked[-1] == tide
                    ranked = ranked[:-1]
                assert ranked == without
            assert {kind for kind, *_ in seen} == {"refined"}
    finally:
        plain.close()
