"""The first vector pass: static vectors for every chunk first, then the model's, and search uses each."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest

from linkly_ls.core.config import Config, ConfigError, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.embedding.settings import EmbeddingSettings
from linkly_ls.core.embedding.static import SOURCE_MODEL_ID, STATIC_MODEL_ID
from linkly_ls.core.search import evaluation as ir_eval
from linkly_ls.core.search import first_pass_side as first_pass_side_module
from linkly_ls.core.search.first_pass_side import first_pass_side
from linkly_ls.core.search import vectors as vectors_module
from linkly_ls.core.search.vectors import VectorIndex
from linkly_ls.core.tools import call_tool
from support.shared import shared_path
from tests.core.search.test_ranking import copy_fixtures, open_engine

QUERY = "tool that enumerates what a folder holds"


def library_json(engine) -> dict:
    return call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]


def notes_library(folder, count: int):
    folder.mkdir()
    for number in range(count):
        (folder / f"note-{number}.md").write_text(f"# Note {number}\n\nzebra crossing number {number}\n", encoding="utf-8")
    return folder


@contextmanager
def after_first_pass(data_dir, library) -> Iterator[Engine]:
    """An engine over `library`, indexed, every document given a first-pass vector; closed afterwards."""
    engine = open_engine(data_dir, library, first_pass=True)
    try:
        engine.index()
        assert engine.vectors.first_pass.run([]) == engine.catalog.count()
        yield engine
    finally:
        engine.close()


def ranked_ids(engine, query: str) -> list[str]:
    return [hit.doc_id for hit in call_tool(engine, "search", {"query": query, "limit": 20}).results]


def test_first_pass_is_on_by_default_and_a_bad_value_is_a_config_error():
    assert EmbeddingSettings.from_section({}).first_pass is True
    assert EmbeddingSettings.from_section({"first_pass": False}).first_pass is False
    for quoted in ("off", "yes", "sometimes"):  # a string is no switch, as `ocr = "no"` is none
        with pytest.raises(ConfigError, match="first_pass must be true or false"):
            EmbeddingSettings.from_section({"first_pass": quoted})


@pytest.mark.slow
def test_first_pass_vectors_serve_until_the_model_refines_them(tmp_path):
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    plain = open_engine(tmp_path / "plain", library, first_pass=False)
    try:
        engine.index()
        assert library_json(engine)["first_pass_coverage"] == 0.0
        assert engine.vectors.first_pass.run([]) > 0
        assert engine.vectors.provider.loaded_bundled() is None, "the first pass needs no model"
        info = library_json(engine)
        assert info["first_pass_coverage"] == 1.0 and info["vector_coverage"] == 0.0
        first = call_tool(engine, "search", {"query": QUERY})
        assert first.mode == "hybrid" and "first-pass" in first.mode_reason

        engine.vectors.run_until_complete()
        assert library_json(engine)["vector_coverage"] == 1.0
        refined = call_tool(engine, "search", {"query": QUERY})
        assert refined.mode == "hybrid" and "first-pass" not in refined.mode_reason

        plain.index()
        plain.vectors.run_until_complete()
        assert library_json(plain)["first_pass_coverage"] is None
        paths = lambda engine, query: [engine.catalog.get(doc_id).path for doc_id in ranked_ids(engine, query)]
        for query in (QUERY, "ownership and borrowing", "http status codes"):
            assert paths(engine, query) == paths(plain, query), "refined hybrid is unchanged by the first pass"
    finally:
        engine.close()
        plain.close()


def test_first_pass_vectors_keep_their_fraction_of_the_vector_side_when_a_request_leans_on_keywords():
    from linkly_ls.core.search import fusion

    usual, first = fusion.CONVEX_KEYWORD_WEIGHT, first_pass_side_module.FIRST_PASS_KEYWORD_WEIGHT
    assert fusion.first_pass_keyword_weight(usual) == pytest.approx(first)
    long = fusion.first_pass_keyword_weight(fusion.LONG_QUERY_KEYWORD_WEIGHT)
    assert first < long < 1
    assert (1 - long) / (1 - fusion.LONG_QUERY_KEYWORD_WEIGHT) == pytest.approx((1 - first) / (1 - usual))


@pytest.mark.slow
def test_where_only_first_pass_vectors_answer_a_long_request_leans_on_keywords_and_scores_are_smoothed(tmp_path, monkeypatch):
    from linkly_ls.core.search import fusion, refining, smoothing

    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    weights = []
    fused = refining.fused

    def recording(engine, index, documents, fusion, keyword_weight, *rest):
        weights.append(keyword_weight)
        return fused(engine, index, documents, fusion, keyword_weight, *rest)

    monkeypatch.setattr(refining, "fused", recording)
    smoothed_over = []
    smoothed = smoothing.smoothed

    def recording_smoothing(ranked, hits, index):
        smoothed_over.append(index)
        return smoothed(ranked, hits, index)

    monkeypatch.setattr(smoothing, "smoothed", recording_smoothing)
    try:
        engine.index()
        assert engine.vectors.first_pass.run([]) > 0
        request = "I need to list a folder. Which tool shows what it holds? Hidden files should be shown too."
        for query in (QUERY, request):
            assert "first-pass" in call_tool(engine, "search", {"query": query}).mode_reason
        first_pass_index = engine.vectors.first_pass.search_side()[1]
    finally:
        engine.close()
    assert weights == [fusion.CONVEX_KEYWORD_WEIGHT, fusion.LONG_QUERY_KEYWORD_WEIGHT]
    assert smoothed_over == [first_pass_index] * 2, "the best documents are smoothed over their first-pass vectors"


@pytest.mark.parametrize("passages_per_round", [1, 512])
def test_the_first_pass_reads_several_rounds_ahead_and_leaves_none_behind(tmp_path, monkeypatch, passages_per_round):
    # the query for documents missing vectors sorts every document: once a round, a first pass over a
    # large library spent more time there than in its rounds
    from linkly_ls.core.indexing import embedding_rounds

    monkeypatch.setattr(embedding_rounds, "DOCS_PER_ROUND", 4)
    monkeypatch.setattr(embedding_rounds, "FIRST_PASS_ROUNDS_AHEAD", 4)
    monkeypatch.setattr(embedding_rounds, "PASSAGES_PER_ROUND", passages_per_round)  # 1: a round takes one document
    queries = []
    missing_documents = VectorIndex.missing_documents

    def counted(self, limit=256):
        queries.append(limit)
        return missing_documents(self, limit)

    monkeypatch.setattr(VectorIndex, "missing_documents", counted)
    with after_first_pass(tmp_path / "data", notes_library(tmp_path / "library", 60)) as engine:
        documents = engine.catalog.count()
        assert library_json(engine)["first_pass_coverage"] == 1.0
    rounds = [limit for limit in queries if limit < 10**9]
    assert documents == 60 and set(rounds) == {16}
    assert len(rounds) <= documents // 16 + 2, "one query for four rounds of four documents"


@pytest.mark.slow
def test_a_fully_refined_library_keeps_no_first_pass_vectors_and_new_documents_get_them(tmp_path):
    library = copy_fixtures(tmp_path / "library")
    with after_first_pass(tmp_path / "data", library) as engine:
        _, first_index = engine.vectors.first_pass.search_side()
        full_size = first_index.path.stat().st_size
        engine.vectors.run_until_complete()
        info = library_json(engine)
        assert info["vector_coverage"] == 1.0 and info["first_pass_coverage"] == 1.0, "refined counts as covered"
        assert engine.vectors.first_pass.search_side() == (None, None), "no first-pass vector is left"
        assert first_index.path.stat().st_size < full_size / 4, "the first-pass index file is small again"
        assert engine.vectors.first_pass.run([]) == 0, "refined documents need no first-pass vector"

        (library / "notes" / "new-note.md").parent.mkdir(exist_ok=True)
        (library / "notes" / "new-note.md").write_text("# Tide tables\n\nHigh water at the harbour mouth.\n")
        engine.index()
        assert library_json(engine)["first_pass_coverage"] < 1.0
        assert engine.vectors.first_pass.run([]) == 1, "only the new document gets a first-pass vector"
        assert library_json(engine)["first_pass_coverage"] == 1.0 and library_json(engine)["vector_coverage"] < 1.0
        found = call_tool(engine, "search", {"query": "harbour tide tables"})
        assert found.mode == "hybrid" and "first-pass" in found.mode_reason
        engine.vectors.run_until_complete()
        assert engine.vectors.first_pass.search_side() == (None, None)


def test_a_catch_up_leaves_to_the_next_round_what_the_model_refines_in_it(tmp_path, monkeypatch):
    """Between refining rounds the first pass runs again for documents the keyword index added, unless
    the model's next round refines all of them: adding a note to a first-pass index of a million
    vectors would read and save the whole index."""
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    try:
        engine.index()
        first_pass = engine.vectors.first_pass
        assert first_pass.run([]) == engine.catalog.count()
        runs: list[int] = []
        real_run = first_pass.run
        monkeypatch.setattr(first_pass, "run", lambda deleted: runs.append(1) or real_run(deleted))

        notes = library / "notes"
        notes.mkdir(exist_ok=True)
        (notes / "saved.md").write_text("# Tide tables\n\nHigh water at the harbour mouth.\n")
        engine.index()
        saved = engine.catalog.by_path(str(notes / "saved.md")).doc_id
        first_pass.due.set()
        first_pass.catch_up([saved, "another-document-of-the-round"])
        assert runs == [] and not first_pass.due.is_set(), "the next round refines the saved note"
        assert library_json(engine)["first_pass_coverage"] < 1.0

        (notes / "copied.md").write_text("# Moorings\n\nBuoys and chains in the outer harbour.\n")
        engine.index()
        first_pass.due.set()
        first_pass.catch_up([saved])
        assert runs == [1], "a document the next round does not reach gets its first-pass vector now"
        assert library_json(engine)["first_pass_coverage"] == 1.0
    finally:
        engine.close()


@pytest.mark.slow
def test_the_writer_holds_the_first_pass_index_in_memory_only_while_writing_it(tmp_path, monkeypatch):
    cleared: list[str] = []
    clear = VectorIndex.clear
    monkeypatch.setattr(VectorIndex, "clear", lambda index: cleared.append(index.model_id) or clear(index))
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    sync = engine.vectors
    try:
        engine.index()
        assert sync.first_pass.run([]) == engine.catalog.count()
        _, first_index = sync.first_pass.search_side()
        assert not first_index.writable, "after the first pass its index is a read-only map of the file"
        loaded = vectors_module._usearch().restore(str(first_index.path), view=False)
        assert first_index.index.memory_usage < loaded.memory_usage / 100, "a map of the file, not a copy in memory"
        assert sync.writer_lock.held, "the writer lock stays taken"
        assert "first-pass" in call_tool(engine, "search", {"query": QUERY}).mode_reason

        sync.run_until_complete()
        assert cleared == [STATIC_MODEL_ID], "every document refined: the first-pass index is emptied without being read in"
        assert sync.first_pass.search_side() == (None, None)

        (library / "tide.md").write_text("# Tide tables\n\nHigh water at the harbour mouth.\n")
        engine.index()
        assert sync.first_pass.run([]) == 1, "written again: the index is writable once more"
        assert sync.writer_lock.held, "the map it replaced handed over the writer lock instead of releasing it"
        sync.run_until_complete()
        assert sync.writer_lock.held and library_json(engine)["vector_coverage"] == 1.0
        assert sync.first_pass.search_side() == (None, None)
    finally:
        engine.close()


@pytest.mark.slow
def test_the_first_pass_does_not_wait_for_the_model_which_loads_meanwhile(tmp_path):
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    provider = engine.vectors.provider
    load = provider.current
    loading, loaded = threading.Event(), threading.Event()

    def slow_current():
        loading.set()
        loaded.wait(30)  # a model that takes long to load: a first pass waiting for it would take 30 s
        return load()

    provider.current = slow_current
    reports: list[tuple[int | None, bool, bool]] = []

    def on_first_pass(documents: int | None, seconds: float) -> None:
        # the refining run itself asks for the model only after the first pass: `loading` set by then
        # means another thread was loading it meanwhile
        reports.append((documents, loading.wait(5), loaded.is_set()))
        loaded.set()

    try:
        engine.index()
        engine.vectors.run_until_complete(on_first_pass=on_first_pass)
        assert reports == [(engine.catalog.count(), True, False)], "the first pass ended while the model was loading"
        assert engine.vectors.run_first_pass() == 0, "nothing new since: the first pass is not run again"
        assert library_json(engine)["vector_coverage"] == 1.0
    finally:
        loaded.set()
        engine.close()


@pytest.mark.slow
def test_first_pass_search_joins_the_models_query_vector_once_the_model_is_loaded(tmp_path, monkeypatch):
    joined: list[int] = []
    join = first_pass_side_module.joint_query_vector
    monkeypatch.setattr(first_pass_side_module, "joint_query_vector", lambda *vectors: joined.append(1) or join(*vectors))
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    try:
        engine.index()
        engine.vectors.first_pass.run([])
        engine.vectors.load_in_background(delay_s=60)  # as a language server does for its first answers
        held = call_tool(engine, "search", {"query": QUERY})
        assert held.mode == "hybrid" and "first-pass" in held.mode_reason
        assert not joined and engine.vectors.provider.loaded_bundled() is None, "held back: the table reads the query"
    finally:
        engine.close()
    engine = open_engine(tmp_path / "data", library, first_pass=True)
    try:
        before_load = call_tool(engine, "search", {"query": QUERY})
        assert not joined and engine.vectors.provider.loaded_bundled() is None, "search never loads the model itself"
        assert engine.vectors.provider.current().model_id == SOURCE_MODEL_ID  # as the refining run loads it
        side = first_pass_side(engine.vectors, None)
        assert side is not None and side.model is not None and side.reads_with_model
        joint = call_tool(engine, "search", {"query": QUERY})
        assert joined == [1] and joint.mode == "hybrid" and "first-pass" in joint.mode_reason
        static, model = side.embedder.embed_query(QUERY), side.model.embed_query(QUERY)
        assert np.allclose(join(static, model), (static + model) / np.linalg.norm(static + model), atol=1e-6)
        assert [hit.doc_id for hit in joint.results][:1] == [hit.doc_id for hit in before_load.results][:1]
        with ir_eval.settings({"linkly_ls.core.search.first_pass_side:QUERY_READING": "table"}):
            assert not side.reads_with_model
            call_tool(engine, "search", {"query": "ownership and borrowing"})
        assert joined == [1]
    finally:
        engine.close()


@pytest.mark.slow
@pytest.mark.corpus("ir")
def test_adi_first_pass_hybrid_beats_keywords_alone_before_the_model_refines_anything(tmp_path):
    collection = ir_eval.load_collection(shared_path("ir") / "adi")
    library = tmp_path / "corpus"
    names = ir_eval.write_library(collection, library)
    engine = Engine(
        Config(data_dir=tmp_path / "index", libraries=[LibraryConfig(name="corpus", paths=[library])],
               raw={"embedding": {"first_pass": True}})
    )
    try:
        engine.index()
        engine.vectors.run_first_pass()
        table_only = ir_eval.evaluate(engine, collection, names, "hybrid", recall=False)
        engine.vectors.provider.current()  # loaded, as the refining run loads it beside the first pass
        assert library_json(engine)["vector_coverage"] == 0.0
        keyword = ir_eval.evaluate(engine, collection, names, "keyword", recall=False)
        joint = ir_eval.evaluate(engine, collection, names, "hybrid", recall=False)
        with ir_eval.settings({"linkly_ls.core.search.first_pass_side:QUERY_READING": "table"}):
            table = ir_eval.evaluate(engine, collection, names, "hybrid", recall=False)
    finally:
        engine.close()
    assert joint.modes_seen == table.modes_seen == {"hybrid"}
    # measured: joint 1.053, the table's reading alone 1.039 x keyword-only (README, "The first vector pass")
    assert joint.ndcg10 >= 1.03 * keyword.ndcg10 and table.ndcg10 >= 1.03 * keyword.ndcg10
    assert joint.ndcg10 != table.ndcg10, "the joint reading is a different query vector"
    assert table_only.ndcg10 == table.ndcg10, "before the model is loaded the table reads the query"


def test_first_pass_vectors_join_a_graph_built_with_fewer_candidates(tmp_path):
    from linkly_ls.core.indexing.first_pass import FIRST_PASS_EXPANSION_ADD
    from linkly_ls.core.search.vectors import EXPANSION_ADD

    with after_first_pass(tmp_path / "data", notes_library(tmp_path / "notes", 3)) as engine:
        sync = engine.vectors
        first_pass_index = sync.index_for(sync.provider.first_pass())
        assert first_pass_index.index.expansion_add == FIRST_PASS_EXPANSION_ADD < EXPANSION_ADD
        refined_index = sync.index_for(sync.provider.current(), writer=True)
        assert refined_index.index.expansion_add == EXPANSION_ADD
