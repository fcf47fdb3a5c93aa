"""Quoted phrases: how a query is split, what a phrase matches, and `search` keeping the documents that hold it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search.phrases import lone_identifier, phrase_pattern, phrase_text, split_phrases
from linkly_ls.core.tools import call_tool


@pytest.mark.parametrize(
    ("query", "phrases", "text"),
    [
        ('"heap allocation" rust', ["heap allocation"], "heap allocation rust"),
        ("“stack frames” and „Speicher“ or «mémoire vive»", ["stack frames", "Speicher", "mémoire vive"],
         "stack frames and Speicher or mémoire vive"),
        ('two "quoted  words" and "more"', ["quoted words", "more"], "two quoted words and more"),
        ('he said "hi', [], 'he said "hi'),
        ('empty "" and "--" quotes', [], "empty and -- quotes"),
        ("「软件包」管理", ["软件包"], "软件包 管理"),
    ],
)
def test_quoted_phrases_are_split_from_the_words(query: str, phrases: list[str], text: str) -> None:
    quoted = split_phrases(query)
    assert quoted.phrases == phrases and quoted.text == text


@pytest.mark.parametrize(
    ("phrase", "text", "found"),
    [
        ("sources list", "edit /etc/apt/sources.list first", True),
        ("sources list", "Sources\n  List of mirrors", True),
        ("heap allocation", "a heap-allocated buffer", False),
        ("heap allocation", "heap-allocation", True),
        ("sources list", "resources list", False),
        ("sources list", "sources listing", False),
        ("is_dir", "call is_dir() on it", True),
        ("is_dir", "it is dir", True),
        ("2.6.32", "Linux 2.6.32-5", True),
        ("2.6.32", "Linux 2.6.321", False),
        ("Élan vital", "son élan vital", True),
        ("软件包", "使用软件包管理器", True),
        ("resume final", "le Résumé final", True),
        ("résumé final", "le resume final", True),
        ("Besançon", "à Besanc\u0327on", True),
        ("grosse strasse", "die Große Straße", True),
        ("components of other vectors", "the compo-\nnents of other vectors", True),
        ("sem vel leo", "sem vel le-\n  o ultrices", True),
        ("条款下重新分发", "按照这些条款下\n重新分发", True),
        ("条款下重新分发", "条款下\n\n重新分发", False),
        ("components", "compo-\n\nnents", False),
        ("große straße", "die grosse strasse", True),
        ("boß", "der boss", True),
        ("linux 系统", "使用Linux系统", True),
        ("API服务器", "API\n服务器", True),
    ],
)
def test_a_phrase_matches_its_words_in_order_whole_and_with_anything_but_words_between(
    phrase: str, text: str, found: bool
) -> None:
    assert bool(phrase_pattern(phrase).search(phrase_text(text))) is found


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    root = tmp_path_factory.mktemp("phrases") / "notes"
    (root / "deep").mkdir(parents=True)
    files = {
        "together.md": "# Memory\n\nEvery heap allocation costs a call into the allocator.\n",
        "apart.md": "# Apart\n\nAllocation, allocation: the heap grows. Heap after heap, then allocation after allocation.\n",
        "wrapped.txt": "Notes on memory\n\nThe cost of a heap\nallocation is measured here, with the zebra.\n",
        "deep/hyphen.md": "# Hyphen\n\nA heap-allocation is slower than a stack one.\n",
        "apt.md": "# Mirrors\n\nA list of sources.\n\nEdit /etc/apt/sources.list as root.\n\nThen update.\n",
        "lists.md": "# Lists\n\nSources, sources and sources: a list, a list, a list of lists.\n",
        "sources.list.md": "# Mirror file\n\nWhat the mirror file holds.\n",
    }
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    engine = Engine(
        Config(data_dir=root.parent / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}})
    )
    engine.index()
    yield engine
    engine.close()


def _search(engine: Engine, query: str, **arguments: object):
    return call_tool(engine, "search", {"query": query, **arguments})


def _names(result) -> set[str]:
    return {Path(hit.path).name for hit in result.results}


def test_a_quoted_phrase_keeps_only_the_documents_that_hold_it(engine: Engine) -> None:
    assert "apart.md" in _names(_search(engine, "heap allocation"))
    result = _search(engine, '"heap allocation"')
    assert _names(result) == {"together.md", "wrapped.txt", "hyphen.md"} and not result.miss
    wrapped = next(hit for hit in result.results if hit.path.endswith("wrapped.txt"))
    assert wrapped.start_line <= 3 <= wrapped.end_line and "heap" in wrapped.snippet.lower()
    assert _names(_search(engine, '"heap allocation"', path_glob="deep/")) == {"hyphen.md"}
    assert _names(_search(engine, 'cost "heap allocation" "the zebra"')) == {"wrapped.txt"}


def test_a_phrase_no_document_holds_is_a_miss_that_still_shows_the_nearest(engine: Engine) -> None:
    result = _search(engine, '"allocation heap zebra"')
    assert result.miss and result.results
    # its hits hold the words apart: they read weak, not the clear match the words alone would make them
    assert all(hit.relevance < 0.2 for hit in result.results)
    assert "word for word" in result.guidance[0] and '"allocation heap zebra"' in result.guidance[0]
    assert result.guidance[0].endswith("Drop the quotes to search the words.")
    assert "word for word" in result.to_markdown()


def test_a_phrase_of_common_words_only_is_searched_as_words_and_says_so(engine: Engine) -> None:
    result = _search(engine, '"to be or not"  memory')
    assert result.results and "common words" in result.notes[0]
    assert result.to_json()["notes"] == result.notes and f"_{result.notes[0]}_" in result.to_markdown()
    assert "notes" not in _search(engine, "memory").to_json()


@pytest.mark.parametrize(
    ("query", "identifier"),
    [("is_dir", True), ("sources.list", True), ("2.6.32", True), ("std::vec", True), ("__init__", False),
     ("U.S.", False), ("sign-in", False), ("heap allocation", False), ("sources.list tips", False),
     ("Sec-WebSocket-Key", True), ("UTF-8", True), ("IGF-1", True), ("omega-3", True), ("e-mail", False),
     ("state-of-the-art", False), ("x-y", False), ("African-American", False), ("Jean-Paul", False)],
)
def test_a_lone_identifier_is_one_name_with_underscores_dots_or_colons_inside(query: str, identifier: bool) -> None:
    assert lone_identifier(query) is identifier


def test_a_query_that_is_one_identifier_reads_as_quoted_and_shows_the_line_that_holds_it(engine: Engine) -> None:
    result = _search(engine, "sources.list")
    # the file so named first (`_named`), then the one holding the name; not the one holding its parts
    assert [Path(hit.path).name for hit in result.results] == ["sources.list.md", "apt.md"] and not result.miss
    hit = result.results[1]
    assert hit.line == 5 and "**sources**.**list**" in hit.snippet
    assert [Path(hit.path).name for hit in _search(engine, "sources.list", path_glob="apt").results] == ["apt.md"]
    missing = _search(engine, "sources.lists")
    assert missing.miss and "word for word" in missing.guidance[0] and missing.results
    assert "Drop the quotes" not in missing.guidance[0] and "Search its parts as separate words" in missing.guidance[0]
    assert "lists.md" in _names(_search(engine, "sources.list tips"))


def test_a_query_of_many_unclosed_quotes_is_split_in_one_pass():
    import time

    started = time.thread_time()
    quoted = split_phrases("\u00ab" * 1_000_000 + ' "a b" ')  # a search for each: 5 s here, quadratic
    assert quoted.phrases == ["a b"] and time.thread_time() - started < 2.5


def test_phrases_the_layout_of_a_page_broke_are_found_by_search(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "zh.txt").write_text("自由软件\n\n您可以按照这些条款下\n重新分发本文档。\n", encoding="utf-8")
    (root / "r.txt").write_text("Notes\n\nthe homo-\nscedastic errors and the compo-\nnents of other vectors\n", encoding="utf-8")
    (root / "fr.txt").write_text("Le Re\u0301sume\u0301 final\n\nde l'année\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        for query, name in [('"条款下重新分发"', "zh.txt"), ('"homoscedastic errors"', "r.txt"),
                            ('"components of other vectors"', "r.txt"), ('"resume final"', "fr.txt")]:
            result = call_tool(engine, "search", {"query": query})
            assert [Path(hit.path).name for hit in result.results] == [name] and not result.miss, query
    finally:
        engine.close()
