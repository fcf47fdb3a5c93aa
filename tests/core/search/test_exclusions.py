"""Words a query excludes: `-word` and `NOT word`."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.search.exclusions import split_exclusions
from linkly_ls.core.tools import call_tool


@pytest.mark.parametrize(
    ("query", "words", "text"),
    [
        ("Juniper Court -hedge", ["hedge"], "Juniper Court"),
        ("-hedge Juniper NOT garden -hedge", ["hedge", "garden"], "Juniper"),
        ("e-mail retention -5 degrees", [], "e-mail retention -5 degrees"),
        ("why not use ownership", [], "why not use ownership"),
        ('"heap allocation" -Box', ["Box"], '"heap allocation"'),
        ("Müller -Straße", ["Straße"], "Müller"),
        ("IT DOES NOT INCLUDE OBLIGATORY DEPOSIT -MAPS", ["MAPS"], "IT DOES NOT INCLUDE OBLIGATORY DEPOSIT"),
        # a command's options stay as written: one or two letters, or letters without a vowel
        ("dpkg -i install deb", [], "dpkg -i install deb"),
        ("rm -rf build -cache", ["cache"], "rm -rf build"),
        ("tar -xzf archive", [], "tar -xzf archive"),
        ("jaguar -car", ["car"], "jaguar"),
        ("notes NOT rf", ["rf"], "notes"),
    ],
)
def test_a_minus_sign_or_not_in_capitals_excludes_a_word(query, words, text):
    excluded = split_exclusions(query)
    assert excluded.words == words and excluded.text == text


@pytest.fixture
def engine(tmp_path: Path):
    library = tmp_path / "hedges"
    library.mkdir()
    (library / "garden.md").write_text("# Garden\n\nThe juniper hedge along Juniper Court needs cutting.\n")
    (library / "letter.md").write_text("# Letter before action\n\n14 Juniper Court: the tenant owes rent.\n")
    (library / "hedges.md").write_text("# Notes\n\nA juniper by the gate.\n")
    config = Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[library])], raw={"embedding": {"model": "none"}})
    engine = Engine(config)
    engine.index()
    yield engine
    engine.close()


def test_documents_holding_an_excluded_word_are_left_out_and_the_answer_says_so(engine):
    result = call_tool(engine, "search", {"query": "juniper -hedge"})
    # the library's folder, `hedges/`, is in every path and excludes nothing
    assert sorted(Path(hit.path).name for hit in result.results) == ["hedges.md", "letter.md"]
    assert result.notes[-1] == "Left out 1 document(s) holding 'hedge' (written `-word` or `NOT word`)."
    assert result.query == "juniper -hedge"
    assert [Path(hit.path).name for hit in call_tool(engine, "search", {"query": "juniper NOT court"}).results] == ["hedges.md"]


def test_a_query_of_exclusions_alone_is_an_argument_error(engine):
    with pytest.raises(ArgumentError, match="no word to search by"):
        call_tool(engine, "search", {"query": "-hedge NOT court"})


def test_a_search_whose_exclusions_leave_nothing_says_so_first(engine):
    result = call_tool(engine, "search", {"query": "garden -hedge"})
    assert result.results == [] and result.miss
    assert result.guidance[0] == (
        "Every document the rest of the query matches holds 'hedge': the 1 found were left out. "
        "Search without excluding it to see them."
    )
    assert not any("Every document" in advice for advice in call_tool(engine, "search", {"query": "juniper -hedge"}).guidance or [])


def test_an_excluded_word_no_document_holds_is_named(engine):
    result = call_tool(engine, "search", {"query": "juniper -hedgge"})
    assert len(result.results) == 3
    assert result.notes[-1] == "No indexed document contains 'hedgge', so excluding it leaves out nothing. Did you mean 'hedge' for 'hedgge'?"
    assert not any("excluding it" in note for note in call_tool(engine, "search", {"query": "juniper -hedge"}).notes)
