"""Hybrid search on the bundled fixture documents: paraphrases, explain, modes, partial vectors."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools.render import render
from linkly_ls.core.tools import call_tool

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
TEXT_FIXTURES = ["notes/rust", "reference", "web"]


def copy_fixtures(target: Path) -> Path:
    for part in TEXT_FIXTURES:
        shutil.copytree(FIXTURES / part, target / part)
    for path in target.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    return target


def open_engine(data_dir: Path, library: Path, **embedding: object) -> Engine:
    raw = {"embedding": embedding} if embedding else {}
    return Engine(Config(data_dir=data_dir, libraries=[LibraryConfig(name="fixtures", paths=[library])], raw=raw))


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> Engine:
    """The text fixtures indexed and fully embedded with the bundled model."""
    root = tmp_path_factory.mktemp("hybrid")
    library = copy_fixtures(root / "library")
    engine = open_engine(root / "data", library)
    engine.index()
    engine.vectors.run_until_complete()
    yield engine
    engine.close()


def names(result) -> list[str]:
    return [Path(hit.path).name for hit in result.results]


def search(engine: Engine, query: str, **arguments):
    return call_tool(engine, "search", {"query": query, **arguments})


@pytest.mark.slow
def test_a_paraphrase_without_shared_words_is_found_by_hybrid_but_not_by_keywords(embedded):
    query = "tool that enumerates what a folder holds"  # ls.1.txt says "list directory contents"
    embedded.search_mode = "keyword"
    try:
        assert "ls.1.txt" not in names(search(embedded, query))
    finally:
        embedded.search_mode = "auto"
    result = search(embedded, query, limit=5, explain=True)
    assert result.mode == "hybrid"
    assert "ls.1.txt" in names(result)
    found = result.results[names(result).index("ls.1.txt")]
    assert found.explain["keyword_rank"] is None and found.explain["vector_rank"] == 1
    assert not result.miss


@pytest.mark.slow
def test_hybrid_keeps_exact_keyword_hits_on_top(embedded):
    result = search(embedded, "social contract Debian free software guidelines", limit=3)
    assert result.mode == "hybrid" and names(result)[0] == "social-contract.txt"


@pytest.mark.slow
def test_explain_gives_both_ranks_and_the_fused_score(embedded):
    data = search(embedded, "who frees memory when its owner goes out of scope", explain=True, limit=5).to_json()
    assert data["mode"] == "hybrid" and data["indexing"] is False
    top = data["results"][0]
    assert Path(top["path"]).name == "ch04-01-what-is-ownership.md"
    explain = top["explain"]
    for key in ("keyword_rank", "keyword_score", "vector_rank", "vector_score", "fused_score"):
        assert explain[key] is not None, key
    assert -1 <= explain["vector_score"] <= 1 and 0 <= top["relevance"] <= 1


@pytest.mark.slow
def test_relevance_separates_a_good_match_from_nonsense(embedded):
    good = search(embedded, "how does Rust manage memory with ownership", limit=1)
    nonsense = search(embedded, "recipe for chocolate soufflé with raspberries", limit=1)
    assert good.results[0].relevance >= 0.6
    assert nonsense.miss and nonsense.guidance
    assert not nonsense.results or nonsense.results[0].relevance < good.results[0].relevance - 0.3


@pytest.mark.slow
def test_filters_apply_to_the_vector_side(embedded):
    result = search(embedded, "tool that enumerates what a folder holds", doc_types=["html"])
    assert result.results and all(hit.doc_type == "html" for hit in result.results)


@pytest.mark.slow
def test_search_says_when_vectors_are_still_being_computed(embedded, monkeypatch):
    from linkly_ls.core.indexing.vector_sync import EmbeddingState

    monkeypatch.setattr(embedded.vectors, "state", lambda: EmbeddingState(True, 3, 10, "model"))
    result = search(embedded, "ownership")
    assert result.to_json()["indexing"] is True
    assert "still building" in result.to_markdown()


@pytest.mark.slow
def test_list_libraries_reports_vector_coverage(embedded):
    library = call_tool(embedded, "list_libraries", {}).to_json()["libraries"][0]
    assert library["vector_coverage"] == 1.0


def test_with_the_model_disabled_search_is_keyword_only_and_says_so(tmp_path):
    library = copy_fixtures(tmp_path / "library")
    engine = open_engine(tmp_path / "data", library, model="none")
    try:
        engine.index()
        result = search(engine, "ownership borrowing")
        assert result.mode == "keyword" and "disabled" in result.mode_reason
        assert names(result)[0] == "ch04-01-what-is-ownership.md"
        assert "mode: keyword" in render(result, "markdown")
        assert call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]["vector_coverage"] is None
    finally:
        engine.close()


def test_new_documents_are_found_by_keywords_until_they_have_vectors(tmp_path):
    library = tmp_path / "library"
    shutil.copytree(FIXTURES / "reference", library)
    for path in library.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    engine = open_engine(tmp_path / "data", library)
    try:
        engine.index()
        before = search(engine, "debian social contract")
        assert before.mode == "keyword" and "no vectors yet" in before.mode_reason
        engine.vectors.run_until_complete()
        (library / "zebra.md").write_text("# Zebra care\n\nZebras need hay, water and a wide paddock.\n")
        engine.index()
        partial = search(engine, "zebra paddock")
        assert partial.mode == "hybrid" and "no vectors yet" in partial.mode_reason
        assert names(partial)[0] == "zebra.md"
        coverage = call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]["vector_coverage"]
        assert 0 < coverage < 1
        engine.vectors.start()
        engine.vectors.on_keyword_flush([], [])
        deadline = time.monotonic() + 300  # the background thread runs at nice 19: slow on a busy machine
        while time.monotonic() < deadline:
            if call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]["vector_coverage"] == 1.0:
                break
            time.sleep(0.1)
        assert call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]["vector_coverage"] == 1.0
        (library / "zebra.md").unlink()
        engine.index()
        after = search(engine, "zebra paddock")
        assert "zebra.md" not in names(after)
    finally:
        engine.close()


def test_a_repeated_query_is_embedded_once():
    import numpy as np

    from linkly_ls.core.search.query_views import embed_query

    class CountingEmbedder:
        model_id = "test/counting"
        calls = 0

        def embed_query(self, text: str):
            self.calls += 1
            return np.full(4, float(len(text)), dtype=np.float32)

    embedder = CountingEmbedder()
    first = embed_query(embedder, "tides and the moon")
    again = embed_query(embedder, "tides and the moon")
    other = embed_query(embedder, "spring tides")
    assert embedder.calls == 2 and np.array_equal(first, again) and not np.array_equal(first, other)


class CountingEmbedder:
    """The bundled embedder, counting the passages it is asked to embed."""

    def __init__(self, inner) -> None:
        self.inner, self.model_id, self.dim, self.passages = inner, inner.model_id, inner.dim, 0

    def embed_passages(self, texts, batch_size=16):
        self.passages += len(texts)
        return self.inner.embed_passages(texts, batch_size)

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def embed_queries(self, texts):
        return self.inner.embed_queries(texts)


def stored_vectors(engine: Engine, doc_id: str) -> np.ndarray:
    embedder, index, _ = engine.vectors.search_index()
    keys = index._keys_of([doc_id])
    rows = engine.catalog.connect().execute(
        "SELECT key FROM vector_chunks WHERE doc_id = ? ORDER BY chunk", (doc_id,)
    ).fetchall()
    assert len(keys) == len(rows) > 0
    return np.vstack(index.index.get(np.asarray([row[0] for row in rows], dtype=np.uint64), dtype=np.float32))


@contextmanager
def embedded_rust_notes(tmp_path: Path, monkeypatch) -> Iterator[tuple[Path, Engine, CountingEmbedder]]:
    """A writable copy of the Rust notes, indexed with vectors by a counting embedder."""
    library = tmp_path / "library"
    shutil.copytree(FIXTURES / "notes" / "rust", library)
    for path in library.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    engine = open_engine(tmp_path / "data", library)
    try:
        counting = CountingEmbedder(engine.vectors.provider.current())
        monkeypatch.setattr(engine.vectors.provider, "current", lambda: counting)
        engine.index()
        engine.vectors.run_until_complete()
        yield library, engine, counting
    finally:
        engine.close()


@pytest.mark.slow
def test_a_copy_of_a_document_reuses_its_vectors_and_ranks_like_the_original(tmp_path, monkeypatch):
    with embedded_rust_notes(tmp_path, monkeypatch) as (library, engine, counting):
        first = counting.passages
        assert first > 0 and engine.vectors.state().embedded == first
        original = library / "ch04-01-what-is-ownership.md"
        shutil.copyfile(original, library / "ownership-copy.md")
        engine.index()
        engine.vectors.run_until_complete()
        assert counting.passages == first  # the model ran for no passage of the copy
        state = engine.vectors.state()
        assert state.embedded == 0 and state.reused > 0
        ids = {Path(record.path).name: record.doc_id for record in engine.catalog.all_documents()}
        assert np.array_equal(stored_vectors(engine, ids["ownership-copy.md"]), stored_vectors(engine, ids[original.name]))
        embedder, index, _ = engine.vectors.search_index()
        query = embedder.embed_query("rules for how a program manages memory")
        copy_id, original_id = ids["ownership-copy.md"], ids[original.name]
        # exact scores: the approximate graph search may visit only one of two identical vectors
        hits = index.exact_search(query, 1000, allowed_doc_ids=[copy_id, original_id])
        best = index.best_per_document(query, [copy_id, original_id])
        assert best[copy_id].score == best[original_id].score and best[copy_id].chunk == best[original_id].chunk
        assert [(h.chunk, h.score) for h in hits if h.doc_id == copy_id] == [
            (h.chunk, h.score) for h in hits if h.doc_id == original_id
        ]


@pytest.mark.slow
def test_an_edited_document_reuses_the_vectors_of_its_unchanged_passages(tmp_path, monkeypatch):
    with embedded_rust_notes(tmp_path, monkeypatch) as (library, engine, counting):
        target = library / "ch04-01-what-is-ownership.md"
        with target.open("a", encoding="utf-8") as handle:
            handle.write("\n\n## Zebra appendix\n\nZebras keep their stripes however ownership moves.\n")
        engine.index()
        before = counting.passages
        assert engine.vectors.run_until_complete() == 1
        state = engine.vectors.state()
        assert state.reused > 0 and 0 < state.embedded == counting.passages - before < state.reused
        engine.search_mode = "vector"
        assert names(search(engine, "striped animals"))[0] == target.name


def test_the_mode_argument_chooses_the_ranking(embedded):
    query = "tool that enumerates what a folder holds"
    assert "ls.1.txt" not in names(search(embedded, query, mode="keyword"))
    for mode in ("keyword", "vector", "hybrid"):
        assert search(embedded, query, mode=mode).mode == mode
    assert search(embedded, query, mode="auto").mode == "hybrid"
    assert "ls.1.txt" in names(search(embedded, query, mode="vector", limit=3))


def test_a_query_outside_the_latin_script_ranks_by_keywords_with_the_english_model(embedded):
    """The bundled model reads English: its neighbours of a Chinese or Russian query are noise."""
    for query in ("软件包管理", "управление пакетами"):
        result = search(embedded, query)
        assert result.mode == "keyword" and "reads English only" in result.mode_reason
        assert search(embedded, query, mode="hybrid").mode == "hybrid", "an explicit mode is obeyed"
    assert search(embedded, "ownership 所有权").mode == "hybrid", "a Latin word gives the model something to read"
    assert search(embedded, "2024").mode == "hybrid", "no letters: nothing to judge"


def test_an_unknown_mode_is_an_argument_error(embedded):
    from linkly_ls.core.errors import ArgumentError

    with pytest.raises(ArgumentError, match="mode"):
        search(embedded, "contract", mode="fuzzy")


def test_an_index_cut_by_an_older_chunking_is_cut_again_reusing_the_unchanged_passages(tmp_path, monkeypatch):
    """Long lines are cut at sentence ends since chunking version 2: an index from before re-embeds only
    the pieces of such lines, and the end of a long article becomes findable by meaning."""
    from functools import partial

    from linkly_ls.core.indexing import embedding_rounds
    from linkly_ls.core.search.chunking import chunk_document, embedding_passages

    with embedded_rust_notes(tmp_path, monkeypatch) as (library, engine, counting):
        filler = " ".join(f"The committee discussed item {n} of the budget at length ." for n in range(60))
        ending = "Finally the zookeeper fed the striped horses of the savannah ."
        (library / "article.txt").write_text(f"MINUTES OF THE MEETING\n\n{filler} {ending}\n", encoding="utf-8")
        monkeypatch.setattr(embedding_rounds, "embedding_passages", partial(chunk_document, cut_long_lines=False))
        engine.index()
        engine.vectors.run_until_complete()
        monkeypatch.setattr(embedding_rounds, "embedding_passages", embedding_passages)
        with engine.catalog.connect() as db:
            db.execute("UPDATE vector_docs SET chunking = 1")
        article = next(r.doc_id for r in engine.catalog.all_documents() if r.path.endswith("article.txt"))
        documents = len(engine.catalog.all_documents())
        before = counting.passages
    engine = open_engine(tmp_path / "data", library)
    try:
        monkeypatch.setattr(engine.vectors.provider, "current", lambda: counting)
        assert engine.vectors.run_until_complete() == documents
        state = engine.vectors.state()
        pieces = engine.catalog.connect().execute(
            "SELECT start_line, end_line FROM vector_chunks WHERE doc_id = ? ORDER BY chunk", (article,)
        ).fetchall()
        assert len(pieces) >= 4 and all(end == 3 for _, end in pieces)
        assert 0 < state.embedded == counting.passages - before <= len(pieces)
        assert state.reused > state.embedded
        hits = search(engine, "animals with stripes eating", mode="vector", limit=3)
        assert names(hits)[0] == "article.txt"
    finally:
        engine.close()


def test_sentence_vectors_come_from_one_call_and_the_query_cache():
    from linkly_ls.core.search.query_views import embed_queries

    class BatchCountingEmbedder:
        model_id = "test/batch-counting"
        calls: list[list[str]] = []

        def embed_queries(self, texts):
            self.calls.append(list(texts))
            return np.vstack([np.full(4, float(len(text)), dtype=np.float32) for text in texts])

    embedder = BatchCountingEmbedder()
    first = embed_queries(embedder, ["a b.", "ccc dd."])
    again = embed_queries(embedder, ["ccc dd.", "new one."])
    assert embedder.calls == [["a b.", "ccc dd."], ["new one."]]
    assert np.array_equal(first[1], again[0]) and again.shape == (2, 4)


@pytest.mark.slow
def test_a_document_only_the_vector_side_found_gets_its_keyword_score(embedded, monkeypatch):
    from linkly_ls.core.search import ranked, ranking

    query = "how does Rust manage memory with ownership"
    complete = {d.doc_id: d for d in ranking.rank_documents(embedded, query, None, "hybrid").documents}
    # one keyword candidate chunk and no further round: every other document is found by the vector side alone
    monkeypatch.setattr(ranked, "KEYWORD_FURTHER_ROUNDS", 0)
    narrow = ranking.rank_documents(embedded, query, None, "hybrid", keyword_chunks=1).documents
    completed = [d for d in narrow if d.keyword_rank is None and d.keyword_score]
    assert len(completed) >= 3
    for document in completed:  # the same best-chunk BM25 as the full keyword search gives
        assert document.keyword_score == pytest.approx(complete[document.doc_id].keyword_score)
    monkeypatch.setattr(ranked, "COMPLETE_KEYWORD_SIDE", False)
    without = ranking.rank_documents(embedded, query, None, "hybrid", keyword_chunks=1).documents
    assert not [d for d in without if d.keyword_rank is None and d.keyword_score]


@pytest.mark.slow
def test_a_document_the_vector_candidates_missed_gets_its_cosine_when_above_theirs(embedded, monkeypatch):
    """The candidates are the closest chunks by an approximate search over 8-bit vectors, which can miss
    one (a slide deck titled "Earth Sciences Division" counted 0 on the vector side below a manual that
    does not hold the words). Here the second-best document is taken out of the candidates as such a
    miss would: it gets its exact cosine back, and a document farther than every candidate stays at 0."""
    from linkly_ls.core.search import ranked, ranking
    from linkly_ls.core.search.ranked import RankedDocument, complete_vector_side

    query = "how does Rust manage memory with ownership"
    found = ranking.rank_documents(embedded, query, None, "hybrid")
    index, views = found.vector_index, found.query_vector
    by_vector = sorted((d for d in found.documents if d.vector_rank is not None), key=lambda d: d.vector_rank or 0)
    assert len(by_vector) >= 3
    missed, farthest = by_vector[1], by_vector[-1]

    def candidates(excluded: set[str]) -> dict[str, RankedDocument]:
        documents = {}
        for document in by_vector[:-1]:
            copy = RankedDocument(doc_id=document.doc_id, keyword_score=document.keyword_score, keyword_rank=1)
            if document.doc_id not in excluded:
                copy.vector_rank, copy.vector_score = document.vector_rank, document.vector_score
            documents[document.doc_id] = copy
        documents[farthest.doc_id] = RankedDocument(doc_id=farthest.doc_id, keyword_score=1.0, keyword_rank=2)
        return documents

    documents = candidates({missed.doc_id})
    complete_vector_side(index, views, documents)
    assert documents[missed.doc_id].vector_score == pytest.approx(missed.vector_score, abs=1e-6)
    assert documents[missed.doc_id].vector_passage is not None
    assert documents[farthest.doc_id].vector_score is None, "farther than every candidate: 0 on that side"
    documents = candidates({missed.doc_id})
    documents[missed.doc_id].keyword_rank = ranked.VECTOR_COMPLETION_DOCUMENTS + 1
    complete_vector_side(index, views, documents)
    assert documents[missed.doc_id].vector_score is None, "only the keyword side's best documents are read"
    monkeypatch.setattr(ranked, "COMPLETE_VECTOR_SIDE", False)
    documents = candidates({missed.doc_id})
    complete_vector_side(index, views, documents)
    assert documents[missed.doc_id].vector_score is None


@pytest.mark.slow
def test_vector_mode_reads_wider_while_its_candidates_come_from_few_documents(embedded, monkeypatch):
    """Vector mode ranks only the documents its candidate chunks come from: when a few long documents
    hold them all it read 4 documents for a limit of 10."""
    from linkly_ls.core.search import ranking

    query = "how does Rust manage memory with ownership"
    wide = ranking.rank_documents(embedded, query, None, "vector").documents
    narrow = ranking.rank_documents(embedded, query, None, "vector", vector_chunks=2).documents
    assert len(narrow) > 2 and [d.doc_id for d in narrow[:2]] == [d.doc_id for d in wide[:2]]
    monkeypatch.setattr(ranking, "VECTOR_MODE_DOCUMENTS", 0)
    assert len(ranking.rank_documents(embedded, query, None, "vector", vector_chunks=2).documents) <= 2
