"""`search` with the query `*` (every document the filters pass), and `time_sort` over more than `limit`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool
from support.tool_library import rel, search


def test_the_query_star_lists_every_document_the_filters_pass_even_those_without_a_given_word(engine):
    everything = search(engine, query="*", limit=50)
    assert len(everything.results) == engine.catalog.count()
    assert [hit.path for hit in everything.results] == sorted(hit.path for hit in everything.results)
    assert {hit.relevance for hit in everything.results} == {1.0} and not everything.miss
    assert "lists every document" in everything.mode_reason and not everything.notes
    papers = search(engine, query="*", path_glob="papers/")
    assert rel(engine, papers.results) == ["papers/2023/report.md", "papers/2024/report-q3.md", "papers/[draft]*/notes.txt"]
    assert papers.results[1].snippet.startswith("# Quarterly report Q3") and papers.results[1].line == 1
    dated = {"doc_types": ["md"], "modified_before": "2024-12-31"}  # the files written at test time are left out
    newest = search(engine, query="*", time_sort="newest", limit=2, **dated)
    assert rel(engine, newest.results) == ["papers/2024/report-q3.md", "Notion-Export-c58e/workspace/ideas.md"]
    passing = len(search(engine, query="*", limit=50, **dated).results)
    assert passing == 6 and newest.notes[0].startswith("6 documents pass the filters; the first 2 newest first are shown")


def test_a_star_that_no_document_passes_blames_the_filters(engine):
    result = search(engine, query="**", path_glob="no-such-folder/")
    assert result.results == [] and result.miss
    assert result.guidance[0].startswith("No indexed document passes `path_glob`")
    assert "### " not in result.to_markdown() and "No indexed document passes" in result.to_markdown()


@pytest.fixture()
def koalas(tmp_path: Path):
    """30 notes that all hold the query's word once; the newer a note, the longer it is, so that keyword
    scoring ranks the newest ones last."""
    root = tmp_path / "notes"
    root.mkdir()
    for number in range(30):
        path = root / f"note-{number:02}.md"
        path.write_text(f"# Note {number}\n\nkoala\n\n" + "filler words here\n" * (number * 3), encoding="utf-8")
        os.utime(path, (1_600_000_000 + number * 86_400, 1_600_000_000 + number * 86_400))
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    engine.index()
    yield engine
    engine.close()


def test_time_sort_finds_the_newest_match_beyond_the_limit_best(koalas):
    """It sorted the `limit` best by relevance: the newest of thirty equally matching notes, ranked last
    by keyword scoring, never came back with `limit` 3."""
    ranked = [Path(hit.path).name for hit in call_tool(koalas, "search", {"query": "koala", "limit": 3}).results]
    assert "note-29.md" not in ranked
    newest = call_tool(koalas, "search", {"query": "koala", "limit": 3, "time_sort": "newest"}).results
    assert [Path(hit.path).name for hit in newest] == ["note-29.md", "note-28.md", "note-27.md"]
    assert all(hit.relevance >= 0.9 for hit in newest)
    oldest = call_tool(koalas, "search", {"query": "koala", "limit": 2, "time_sort": "oldest"}).results
    assert [Path(hit.path).name for hit in oldest] == ["note-00.md", "note-01.md"]


def test_the_listing_pages_to_the_end_of_a_library_past_a_rankings_500(tmp_path):
    """`next_offset` said 550 and the next call was refused: a library of 3,636 could not be listed whole."""
    from linkly_ls.core.errors import ArgumentError

    root = tmp_path / "notes"
    root.mkdir()
    for number in range(560):
        (root / f"n{number:04d}.md").write_text(f"# N{number}\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        seen, offset = [], 0
        while offset is not None:
            page = call_tool(engine, "search", {"query": "*", "limit": 50, "offset": offset})
            seen += [Path(hit.path).name for hit in page.results]
            offset = page.next_offset
        assert len(seen) == len(set(seen)) == 560
        last = call_tool(engine, "search", {"query": "*", "limit": 50, "offset": 550})
        assert "page with" not in last.notes[0] and "raise `limit`" not in last.notes[0]
        with pytest.raises(ArgumentError, match=r"from 0 to 500 for a ranked search, got 550 \(only the `\*` listing pages further\)"):
            call_tool(engine, "search", {"query": "N1", "offset": 550})
    finally:
        engine.close()
