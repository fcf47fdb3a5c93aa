"""Relevance reads the way the list reads: non-increasing on every query, weak when no word occurs anywhere."""

from __future__ import annotations

import random
import shutil
import statistics
from pathlib import Path

import pytest
from support.shared import shared_path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search import evaluation as ir_eval
from linkly_ls.core.search.calibration import ABSENT_WORDS_CEILING, absent_words, calibrate, monotone
from linkly_ls.core.tools import call_tool
from linkly_ls.core.tools.search import WEAK_RELEVANCE

REPO = Path(__file__).resolve().parents[3]

#: every query of ADI is run; a sample of another collection's queries stands for off-topic questions
OFF_TOPIC_SAMPLE = 25


def test_monotone_pools_each_rising_run_into_its_mean():
    assert monotone([0.72, 1.0, 1.0]) == pytest.approx([2.72 / 3] * 3)
    assert monotone([0.53, 0.59, 0.43]) == pytest.approx([0.56, 0.56, 0.43])
    assert monotone([0.9, 0.5, 0.5, 0.1]) == [0.9, 0.5, 0.5, 0.1]
    assert monotone([]) == []


def test_monotone_is_non_increasing_and_keeps_the_mean_on_random_lists():
    generator = random.Random(7)
    for _ in range(500):
        values = [generator.random() for _ in range(generator.randint(1, 30))]
        fitted = monotone(values)
        assert all(a >= b - 1e-12 for a, b in zip(fitted, fitted[1:])), values
        assert statistics.fmean(fitted) == pytest.approx(statistics.fmean(values))


def test_the_first_hit_shows_the_best_evidence_and_the_rest_their_fit():
    assert calibrate([0.72, 1.0, 1.0], no_match=False) == [1.0, 1.0, 1.0]
    assert calibrate([0.53, 0.59, 0.43], no_match=False) == pytest.approx([0.59, 0.59, 0.43])
    assert calibrate([0.26, 0.24, 0.39], no_match=False) == pytest.approx([0.39, 0.315, 0.315])
    assert calibrate([0.9, 0.5, 0.7, 0.1], no_match=False) == pytest.approx([0.9, 0.6, 0.6, 0.1])
    assert calibrate([], no_match=False) == []


def test_hits_beyond_the_depth_never_move_those_within_it():
    # the 3rd hit rising would pool with the 2nd; with a depth of 2 the first two read as they do alone
    assert calibrate([0.9, 0.5, 0.7, 0.1], no_match=False, depth=2) == pytest.approx([0.9, 0.5, 0.5, 0.1])
    assert calibrate([0.9, 0.5, 0.7, 0.1], no_match=False, depth=2)[:2] == calibrate([0.9, 0.5], no_match=False)
    assert calibrate([0.4, 0.3, 0.9], no_match=False, depth=2) == pytest.approx([0.4, 0.3, 0.3])


def test_absent_words_scale_the_evidence_into_the_weak_band():
    assert calibrate([1.0, 0.4, 0.9], no_match=True) == pytest.approx([ABSENT_WORDS_CEILING] + [0.65 * ABSENT_WORDS_CEILING] * 2)
    assert calibrate([0.4, 1.0, 0.9], no_match=True) == pytest.approx([ABSENT_WORDS_CEILING, ABSENT_WORDS_CEILING, 0.135])
    assert max(calibrate([1.0], no_match=True)) < min(WEAK_RELEVANCE.values())


def test_english_function_words_are_no_evidence_in_any_reading(tmp_path):
    """A German document matched "ownrship and borowing" by "and" in its German reading: it ranked first
    and the misspelt query was no miss."""
    library = tmp_path / "library"
    library.mkdir()
    german = "Die Erweiterung baut das Paket mit bzr und prüft and die Abhängigkeiten der Quellen. " * 6
    (library / "paket.md").write_text(f"# Paket bauen\n\n{german}\n", encoding="utf-8")
    (library / "lunch and learn.md").write_text("# Ownership\n\nRules of ownership and borrowing.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[library])],
                           raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        assert engine.catalog.by_path(str(library / "paket.md")).language == "de"
        searcher = engine.keyword.index.searcher()
        assert absent_words(searcher, "the ownrship of borowing and") == ["ownrship", "borowing"]
        result = call_tool(engine, "search", {"query": "ownrship and borowing"})
        assert result.miss and "'ownrship', 'borowing'" in result.guidance[0]
        assert absent_words(searcher, "ownership and borrowing") is None
    finally:
        engine.close()


def write_collection(collection: ir_eval.Collection, root: Path) -> Engine:
    ir_eval.write_library(collection, root / "library")
    engine = Engine(Config(
        data_dir=root / "data",
        libraries=[LibraryConfig(name="corpus", paths=[root / "library"])],
        raw={"embedding": {"model": "none"}},
    ))
    engine.index()
    return engine


def synthetic_collection() -> ir_eval.Collection:
    """Documents built to make evidence and rank disagree: long documents that repeat one query word
    (high BM25, low coverage) against short ones holding every query word once."""
    generator = random.Random(11)
    vocabulary = [f"w{n}" for n in range(60)]
    docs, queries = [], []
    for n in range(120):
        words = generator.sample(vocabulary, 4)
        body = " ".join(words) if n % 3 else " ".join([words[0]] * 30 + vocabulary[:5])
        docs.append({"id": f"d{n}", "title": f"note {n}", "text": body})
    for n in range(40):
        queries.append({"id": f"q{n}", "text": " ".join(generator.sample(vocabulary, generator.randint(2, 5)))})
    return ir_eval.Collection("synthetic", docs, queries, {}, {})


@pytest.fixture(scope="module")
def adi(tmp_path_factory):
    collection = ir_eval.load_collection(shared_path("ir") / "adi")
    engine = write_collection(collection, tmp_path_factory.mktemp("adi"))
    yield engine, collection
    engine.close()


def relevances(engine: Engine, query: str) -> tuple[list[float], bool]:
    result = call_tool(engine, "search", {"query": query, "limit": 50, "mode": "keyword"})
    return [hit.relevance for hit in result.results], result.miss


@pytest.mark.corpus("ir")
def test_relevance_never_rises_down_the_list_on_every_adi_query(adi):
    engine, collection = adi
    rose = 0
    for query in collection.queries:
        result = call_tool(engine, "search", {"query": query["text"], "limit": 50, "mode": "keyword", "explain": True})
        values = [hit.relevance for hit in result.results]
        assert values == sorted(values, reverse=True), query["text"]
        evidence = [hit.explain["evidence"] for hit in result.results]
        rose += evidence != sorted(evidence, reverse=True)
        assert result.miss == (not values or values[0] < WEAK_RELEVANCE["keyword"])
        assert not values or values[0] == max(evidence)
    assert rose, "the raw evidence never disagreed with the rank: the test would not see a regression"


def test_relevance_never_rises_on_a_synthetic_collection_built_to_disagree(tmp_path):
    collection = synthetic_collection()
    engine = write_collection(collection, tmp_path)
    try:
        for query in collection.queries:
            values, _ = relevances(engine, query["text"])
            assert values and values == sorted(values, reverse=True), query["text"]
    finally:
        engine.close()


@pytest.mark.corpus("ir")
def test_the_bands_hold_on_average(adi):
    engine, collection = adi
    on_topic = [relevances(engine, query["text"])[0] for query in collection.queries]
    off_topic_queries = ir_eval.load_collection(shared_path("ir") / "time").queries[:OFF_TOPIC_SAMPLE]
    off_topic = [relevances(engine, query["text"]) for query in off_topic_queries]
    assert statistics.fmean(values[0] for values in on_topic if values) >= 0.3  # related or better
    assert statistics.fmean(values[0] if values else 0.0 for values, _ in off_topic) < 0.2  # weak
    assert sum(miss for _, miss in off_topic) >= 0.8 * len(off_topic)


@pytest.mark.corpus("ir")
def test_a_query_whose_words_occur_nowhere_is_a_miss_that_says_so(adi):
    engine, _ = adi
    searcher = engine.keyword.index.searcher()
    assert absent_words(searcher, "zqxk3j9a") == ["zqxk3j9a"]
    assert absent_words(searcher, "zqxk3j9a retrieval") is None
    assert absent_words(searcher, "?!") is None
    result = call_tool(engine, "search", {"query": "zqxk3j9a"})
    assert result.miss and result.absent_words == ["zqxk3j9a"]
    assert "No indexed document contains 'zqxk3j9a'" in result.guidance[0]
    assert result.to_markdown().splitlines()[-1].startswith("**No document contains these words.**")


@pytest.fixture(scope="module")
def embedded_notes(tmp_path_factory):
    """Three short notes with vectors from the bundled model: a random token sits near short notes."""
    root = tmp_path_factory.mktemp("embedded")
    shutil.copytree(REPO / "fixtures" / "notes" / "rust", root / "library")
    engine = Engine(Config(data_dir=root / "data", libraries=[LibraryConfig(name="notes", paths=[root / "library"])]))
    engine.index()
    engine.vectors.run_until_complete()
    yield engine
    engine.close()


def test_vectors_alone_never_make_an_absent_word_a_match(embedded_notes):
    result = call_tool(embedded_notes, "search", {"query": "zqxk3j9a", "explain": True})
    assert result.mode == "hybrid" and result.results, "the vectors find neighbours for any token"
    assert result.miss and all(hit.relevance <= ABSENT_WORDS_CEILING for hit in result.results)
    assert "the results are only near in meaning" in result.guidance[0]
    good = call_tool(embedded_notes, "search", {"query": "ownership borrowing memory"})
    assert not good.miss and good.absent_words is None


def test_a_word_too_long_for_the_index_is_absent_and_a_miss(embedded_notes):
    digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    searcher = embedded_notes.keyword.index.searcher()
    assert absent_words(searcher, digest) == [digest]
    assert absent_words(searcher, "x" * 100) == ["x" * 100]
    assert absent_words(searcher, f"{digest} ownership") is None, "a word the index holds is found"
    result = call_tool(embedded_notes, "search", {"query": digest})
    assert result.miss and all(hit.relevance <= ABSENT_WORDS_CEILING for hit in result.results)
    assert f"No indexed document contains '{digest}'" in result.guidance[0]
