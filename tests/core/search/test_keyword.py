"""The keyword index's query: repeated terms, language readings, and the schema version."""

from __future__ import annotations

from pathlib import Path

import pytest
from tantivy import Occur, Query

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search import keyword
from linkly_ls.core.search.chunking import Chunk
from linkly_ls.core.search.keyword import IndexedChunks, KeywordIndex
from linkly_ls.core.search.query_terms import query_term_counts


def one_chunk(doc_id: str, text: str, language: str | None = "en", title: str = "") -> IndexedChunks:
    return IndexedChunks(doc_id, title, f"/library/{doc_id}.txt", language, [Chunk(0, 1, 1, "", text)])


@pytest.fixture
def index(tmp_path: Path) -> KeywordIndex:
    return KeywordIndex(tmp_path / "keyword")


def scores(index: KeywordIndex, query: str) -> dict[str, float]:
    return {hit.doc_id: hit.score for hit in index.search(query, 10)}


def test_query_terms_are_counted():
    assert query_term_counts(["librari", "index", "librari"]) == {"librari": 2, "index": 1}


def test_a_term_the_query_repeats_weighs_more(index):
    filler = " ".join(f"word{n}" for n in range(6))
    index.replace([one_chunk("a", f"catalogue {filler}"), one_chunk("b", f"archive {filler}")], [])
    even = scores(index, "catalogue archive")
    assert even["a"] == pytest.approx(even["b"])
    repeated = scores(index, "archive catalogue archive archive")
    assert repeated["b"] > 2 * repeated["a"]


def test_a_search_within_some_documents_scores_them_as_the_whole_search_does(index):
    index.replace([one_chunk(name, f"{name} catalogue of the archive {name}") for name in ("a", "b", "c")], [])
    everywhere = scores(index, "archive catalogue a")
    within = {hit.doc_id: hit.score for hit in index.search("archive catalogue a", 10, ["a", "c"])}
    assert within == pytest.approx({"a": everywhere["a"], "c": everywhere["c"]})


def test_a_language_guessed_from_a_short_text_gets_no_field_of_its_own(index):
    text = "the parser reads tokens from the stream"
    index.replace([one_chunk("english", text, "en"), one_chunk("guessed", text, "fr")], [])
    found = scores(index, "parser tokens stream")
    assert found["guessed"] == pytest.approx(found["english"])


def test_the_best_language_reading_counts_not_their_sum(index):
    french = "la bibliothèque municipale prête des livres anciens et des cartes " * 6
    english = "the municipal library lends old books and maps " * 6
    index.replace([one_chunk("fr", french, "fr"), one_chunk("en", english, "en")], [])
    searcher = index.index.searcher()
    french_only = index.build_query("bibliothèque livres")
    best = searcher.search(french_only, 1).hits[0][0]
    body = Query.boolean_query(
        [(Occur.Should, Query.term_query(index.schema, "body", term)) for term in ("bibliothequ", "livr")]
    )
    body_fr = Query.boolean_query(
        [(Occur.Should, Query.term_query(index.schema, "body_fr", term)) for term in ("bibliothequ", "livr")]
    )
    separately = [searcher.search(query, 1).hits[0][0] for query in (body, body_fr)]
    assert best == pytest.approx(max(separately), rel=1e-4)


def test_french_text_is_found_by_its_french_stems(index):
    french = "les bibliothèques publiques de la ville ouvrent le dimanche " * 6
    index.replace([one_chunk("fr", french, "fr"), one_chunk("en", "public gardens", "en")], [])
    assert [hit.doc_id for hit in index.search("bibliothèque", 10)] == ["fr"]


def test_an_index_of_an_older_schema_is_rebuilt_from_the_catalog_on_open(library_dir, tmp_path):
    (library_dir / "notes.txt").write_text("Notes\n\nthe heron nests by the river\n")
    config = Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="lib", paths=[library_dir])])
    engine = Engine(config)
    engine.index()
    assert not engine.keyword.outdated
    # what an older version left: other content, and no version stamp
    writer = engine.keyword.index.writer(heap_size=15_000_000, num_threads=1)
    writer.delete_all_documents()
    writer.commit()
    writer.wait_merging_threads()
    del writer
    (engine.keyword.directory / keyword.VERSION_FILE).unlink()
    engine.close()

    reopened = Engine(config)
    try:
        assert not reopened.keyword.outdated
        assert reopened.keyword._stored_version() == keyword.SCHEMA_VERSION
        assert [hit.doc_id for hit in reopened.keyword.search("heron", 5)] == [
            record.doc_id for record in reopened.catalog.all_documents()
        ]
        assert reopened.catalog.pending_keyword_work() == ([], [])
    finally:
        reopened.close()


def test_a_new_index_is_stamped_with_the_current_schema(tmp_path):
    index = KeywordIndex(tmp_path / "fresh")
    assert not index.outdated
    assert KeywordIndex(tmp_path / "fresh")._stored_version() == keyword.SCHEMA_VERSION


def test_every_term_query_finds_only_chunks_holding_all_the_terms(index):
    index.replace(
        [
            one_chunk("both", "we went sailing on the lake"),
            one_chunk("one", "sailing alone"),
            one_chunk("stems", "the lakes where he sails"),
            one_chunk("cjk", "これは日本語の文書です", language=None),
        ],
        [],
    )
    found = {hit.doc_id for hit in index.search_query(index.all_terms_query("Sailing Lake"), 10)}
    assert found == {"both", "stems"}  # stemmed terms: the caller confirms the exact words
    assert [hit.doc_id for hit in index.search_query(index.all_terms_query("日本語"), 10)] == ["cjk"]
    assert index.all_terms_query("The") is None


def test_a_request_worded_in_full_ranks_its_subject_not_its_wording(index):
    index.replace(
        [one_chunk("wording", "I would say what I would do if I could, and I should"), one_chunk("subject", "cataloguing rare maps")],
        [],
    )
    assert [hit.doc_id for hit in index.search("I would be glad of anything I could read on cataloguing", 10)] == ["subject"]
    assert [hit.doc_id for hit in index.search("what I would do", 10)] == ["wording"]


def test_a_stopword_of_the_query_does_not_favour_a_file_named_with_it(index):
    index.replace(
        [
            IndexedChunks("named", "", "/library/the-summary.txt", "en", [Chunk(0, 1, 1, "", "war history")]),
            IndexedChunks("other", "", "/library/summary.txt", "en", [Chunk(0, 1, 1, "", "war history")]),
        ],
        [],
    )
    found = scores(index, "history of the war")
    assert found["named"] == pytest.approx(found["other"])


def test_a_write_cut_short_before_its_commit_does_not_block_the_next(tmp_path: Path):
    """A run killed while committing can leave a file the commit wrote but never recorded (a segment's
    deletes, named by the segment and the operation's number). The next run replays the same operations,
    so it writes a file of the same name: the unrecorded one is cleared first instead of failing."""
    import json
    import shutil

    live, after_kill = tmp_path / "live", tmp_path / "after-kill"
    index = KeywordIndex(live)
    index.replace([one_chunk("a", "first text"), one_chunk("b", "second text")], [])
    index.close()
    shutil.copytree(live, after_kill)
    before = set(json.loads((live / ".managed.json").read_text()))
    index = KeywordIndex(live)
    index.replace([], ["a"])
    index.close()
    written = [name for name in json.loads((live / ".managed.json").read_text()) if name not in before]
    deletes = [name for name in written if name.endswith(".del")]
    assert deletes, written
    for name in deletes:  # on disk and managed, but not in the meta of the index that was killed
        shutil.copy(live / name, after_kill / name)
    managed = set(json.loads((after_kill / ".managed.json").read_text())) | set(deletes)
    (after_kill / ".managed.json").write_text(json.dumps(sorted(managed)))
    reopened = KeywordIndex(after_kill)
    reopened.replace([], ["a"])
    assert set(scores(reopened, "text")) == {"b"}


def test_a_search_can_leave_documents_out(index):
    index.replace([one_chunk(name, f"{name} catalogue of the archive") for name in ("a", "b", "c")], [])
    assert {hit.doc_id for hit in index.search_query(index.build_query("archive"), 10, excluded_doc_ids=["b"])} == {"a", "c"}
    within = index.search_query(index.build_query("archive"), 10, ["a", "b"], excluded_doc_ids=["a"])
    assert [hit.doc_id for hit in within] == ["b"]


def test_page_markers_are_no_words_of_the_indexed_body(index):
    chunks = [Chunk(0, 1, 2, "", "--- page 1 ---\nThe surface of a torus"), Chunk(1, 3, 4, "", "--- page 2 ---\nA page of notes")]
    index.replace([IndexedChunks("geo", "Geometry", "/library/geo.pdf", "en", chunks)], [])
    assert [(hit.chunk, hit.start_line) for hit in index.search("page", 10)] == [(1, 3)], "only the page that says it"
    assert keyword.SCHEMA_VERSION >= 3, "an index written before is rebuilt without its markers"


def test_a_word_hyphenated_at_a_line_break_and_a_word_against_cjk_characters_are_found(index):
    index.replace(
        [
            one_chunk("pdf", "a linear regression model with independent, ho-\nmoscedastic errors"),
            one_chunk("zh", "在其它一些桌面系统（如fluxbox）下面，我们使用Kubernetes部署服务", language="zh"),
            one_chunk("names", "the Smith-\nJones rule"),
        ],
        [],
    )
    assert set(scores(index, "homoscedastic")) == {"pdf"}
    assert set(scores(index, "fluxbox")) == {"zh"} == set(scores(index, "Kubernetes"))
    assert set(scores(index, "使用Kubernetes")) == {"zh"}  # the query is read the same way
    assert set(scores(index, "SmithJones")) == set()  # a capital after the break: two names, not one word


def test_passages_with_every_word_need_them_in_one_chunk_or_its_title_or_path(index):
    index.replace(
        [
            IndexedChunks("apart", "", "/library/apart.txt", "en", [Chunk(0, 1, 1, "", "Larkspur grows here"), Chunk(1, 2, 2, "", "a lane")]),
            one_chunk("together", "her sister's house, 14 Larkspur Lane"),
            one_chunk("titled", "the house by the water", title="Larkspur notes"),
            IndexedChunks("pathed", "", "/books/José Ñúñez/The Lane.epub", "en", [Chunk(0, 1, 1, "", "a quiet lane")]),
            one_chunk("stemmed", "the lanes of larkspurs"),
        ],
        [],
    )
    everyone = ["apart", "together", "titled", "pathed", "stemmed"]
    assert set(index.passages_with_every_word("Larkspur Lane", everyone)) == {"together", "stemmed"}
    assert set(index.passages_with_every_word("larkspur's notes", everyone)) == {"titled"}
    assert set(index.passages_with_every_word("Jose Nunez lane", everyone)) == {"pathed"}
    assert set(index.passages_with_every_word("the Larkspur Lane", ["apart", "together"])) == {"together"}
    assert set(index.passages_with_every_word("Larkspur Lane", ["apart"])) == set()
    assert set(index.passages_with_every_word("Jose Nunez lane", everyone, frozenset({"jose", "books"}))) == set()
    assert set(index.passages_with_every_word("larkspur books", everyone, frozenset({"books"}))) == set()


def test_passages_with_every_word_are_all_found_when_others_fill_a_round(index):
    crowded = IndexedChunks("crowded", "", "/library/crowded.txt", "en", [Chunk(n, n + 1, n + 1, "", "larkspur lane") for n in range(30)])
    index.replace([crowded] + [one_chunk(f"d{n}", "larkspur lane") for n in range(3)] + [one_chunk("cjk", "软件包管理 debian")], [])
    found = set(index.passages_with_every_word("Larkspur Lane", ["crowded", "d0", "d1", "d2", "cjk"], chunks_per_document=2))
    assert found == {"crowded", "d0", "d1", "d2"}
    assert set(index.passages_with_every_word("包管理 Debian", ["crowded", "cjk"])) == {"cjk"}
    assert set(index.passages_with_every_word("管理软件", ["cjk"])) == set()
    index.replace([IndexedChunks("named", "", "/library/李华/notice.txt", "en", [Chunk(0, 1, 1, "", "a notice to quit")])], [])
    assert set(index.passages_with_every_word("李华 notice", ["named", "cjk"])) == {"named"}


def test_a_word_a_language_reading_leaves_out_need_not_be_held_in_that_languages_text(index):
    french = "Le preneur peut résilier le bail à l'expiration de chaque période triennale avec un préavis de six mois " * 3
    german = "Die Kündigungsfrist für die Mieterin beträgt drei Monate zum Ende eines Kalendermonats nach Zugang " * 3
    index.replace(
        [
            one_chunk("bail", french, "fr"),
            one_chunk("miete", german, "de"),
            one_chunk("english", "The tribunal heard evidence of crimes against civilians in the occupied towns."),
        ],
        [],
    )
    everyone = ["bail", "miete", "english"]
    assert set(index.passages_with_every_word("préavis du bail", everyone)) == {"bail"}
    assert set(index.passages_with_every_word("Kündigungsfrist der Mieterin", everyone)) == {"miete"}
    assert set(index.passages_with_every_word("war crimes", everyone)) == set()
