"""The first vector pass: static vectors for every chunk first, then the model's, and search uses each."""

from __future__ import annotations

import pytest

from linkly_ls.core.config import ConfigError
from linkly_ls.core.embedding.settings import EmbeddingSettings
from linkly_ls.core.tools import call_tool
from tests.core.search.test_ranking import copy_fixtures, open_engine

QUERY = "tool that enumerates what a folder holds"


def library_json(engine) -> dict:
    return call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]


def ranked_ids(engine, query: str) -> list[str]:
    return [hit.doc_id for hit in call_tool(engine, "search", {"query": query, "limit": 20}).results]


def test_first_pass_is_off_by_default_and_a_bad_value_is_a_config_error():
    assert EmbeddingSettings.from_section({}).first_pass is False
    assert EmbeddingSettings.from_section({"first_pass": "on"}).first_pass is True
    with pytest.raises(ConfigError):
        EmbeddingSettings.from_section({"first_pass": "sometimes"})


@pytest.mark.slow
def test_first_pass_vectors_serve_until_the_model_refines_them(tmp_path):
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass="true")
    plain = open_engine(tmp_path / "plain", library)
    try:
        engine.index()
        assert library_json(engine)["first_pass_coverage"] == 0.0
        assert engine.vectors.first_pass.run([]) > 0
        assert not (tmp_path / "data" / "models" / "bundled-minilm" / "model.onnx").exists(), "the first pass needs no model"
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


@pytest.mark.slow
def test_the_first_pass_is_done_before_the_model_loads(tmp_path):
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, first_pass="true")
    provider = engine.vectors.provider
    seen_when_loading: list[float] = []
    load = provider.current

    def current():
        seen_when_loading.append(library_json(engine)["first_pass_coverage"])
        return load()

    provider.current = current
    reports: list[tuple[int | None, float]] = []
    try:
        engine.index()
        engine.vectors.run_until_complete(on_first_pass=lambda documents, seconds: reports.append((documents, seconds)))
        assert seen_when_loading and seen_when_loading[0] == 1.0
        assert len(reports) == 1 and reports[0][0] == engine.catalog.count()
        assert engine.vectors.run_first_pass() == 0, "nothing new since: the first pass is not run again"
        assert library_json(engine)["vector_coverage"] == 1.0
    finally:
        engine.close()
