"""`grep`: context, paging, counts, phrases across lines, and patterns that must fail cleanly."""

from __future__ import annotations

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import ArgumentError, call_tool
from support.tool_library import doc


def test_grep_context_paging_count_and_phrase_across_lines(engine):
    doc_id = doc(engine, "long.txt")
    counted = call_tool(engine, "grep", {"pattern": r"topic 3\b", "doc_id": doc_id, "output_mode": "count"}).to_json()
    assert counted["total_matches"] == 171 and "matches" not in counted
    page = call_tool(engine, "grep", {"pattern": r"topic 3\b", "doc_id": doc_id, "limit": 5, "offset": 5,
                                      "before": 1, "after": 0}).to_json()
    assert [m["line"] for m in page["matches"]] == [38, 45, 52, 59, 66]
    assert page["matches"][0]["before"] == [{"line": 37, "text": "line 37 about topic 2"}]
    assert page["matches"][0]["after"] == [] and page["next_offset"] == 10
    phrase = call_tool(engine, "grep", {"pattern": "quick brown fox", "doc_id": doc_id, "context": 0}).to_json()
    assert phrase["total_matches"] == 1
    assert phrase["matches"][0]["line"] == 500 and phrase["matches"][0]["end_line"] == 501
    text = call_tool(engine, "grep", {"pattern": "quick brown fox", "doc_id": doc_id, "context": 1}).to_markdown()
    assert "\n500-501:\t" in text and "\n499-\t" in text and "\n502-\t" in text  # its two lines, under both numbers
    insensitive = call_tool(engine, "grep", {"pattern": "THE QUICK", "doc_id": doc_id, "case_insensitive": True})
    assert insensitive.total_matches == 1
    anchored = call_tool(engine, "grep", {"pattern": "^fox", "doc_id": doc_id}).to_json()
    assert [m["line"] for m in anchored["matches"]] == [501]


def test_grep_bad_and_catastrophic_patterns_fail_cleanly(engine):
    doc_id = doc(engine, "long.txt")
    with pytest.raises(ArgumentError, match=r"not a valid regular expression: .*as written, escape .*: `\\\(unclosed`"):
        call_tool(engine, "grep", {"pattern": "(unclosed", "doc_id": doc_id})
    with pytest.raises(ArgumentError, match="`limit` must be an integer from 1 to 100"):
        call_tool(engine, "grep", {"pattern": "x", "doc_id": doc_id, "limit": 101})
    with pytest.raises(ArgumentError, match="`pattern` must not be empty"):
        call_tool(engine, "grep", {"pattern": "", "doc_id": doc_id})
    assert call_tool(engine, "grep", {"pattern": " ", "doc_id": doc_id}).total_matches > 0  # a space is a pattern
    for flags in ("(?V1)a", "(?a)(?u)x"):  # flags that exclude each other
        with pytest.raises(ArgumentError, match="not a valid regular expression: .* incompatible"):
            call_tool(engine, "grep", {"pattern": flags, "doc_id": doc_id})
    for huge in ("a{99999999}", "((a{100}){100}){1000}"):  # refused before the engine copies it gigabytes' worth
        with pytest.raises(ArgumentError, match="too large once its counted repeats are expanded"):
            call_tool(engine, "grep", {"pattern": huge, "doc_id": doc_id})
    with pytest.raises(ArgumentError, match="`query` must not be empty"):
        call_tool(engine, "search", {"query": "   "})


def test_context_shared_by_neighbouring_matches_is_shown_once_in_line_order(engine):
    doc_id = doc(engine, "long.txt")
    result = call_tool(engine, "grep", {"pattern": r"topic 3\b", "doc_id": doc_id, "limit": 3, "context": 8})
    numbers = [int(line.split("\t")[0][:-1]) for line in result.to_markdown().splitlines() if "\t" in line]
    assert numbers == sorted(set(numbers)), "no line twice, none out of order"
    marked = {int(line.split("\t")[0][:-1]): line.split("\t")[0][-1] for line in result.to_markdown().splitlines() if "\t" in line}
    assert [number for number, mark in marked.items() if mark == ":"] == [m.line for m in result.matches]


def test_an_offset_past_the_last_match_says_so(engine):
    doc_id = doc(engine, "long.txt")
    result = call_tool(engine, "grep", {"pattern": r"topic 3\b", "doc_id": doc_id, "offset": 100000})
    assert result.to_json()["matches"] == [] and result.total_matches == 171
    assert "[offset 100000 is past the last match: there are 171; start below that]" in result.to_markdown()
    assert result.to_json()["note"] == "offset 100000 is past the last match: there are 171; start below that"


def test_a_long_line_is_shown_around_its_match(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "export.txt").write_text("Export\n\n" + "x" * 3000 + "needle" + "y" * 3000 + "\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="docs", paths=[root])]))
    engine.index()
    doc_id = engine.catalog.by_path(str(root / "export.txt")).doc_id
    # a literal (found line by line), a regex (found by offsets), a case-insensitive literal
    for pattern in ("needle", r"xne+dley", "NEEDLE"):
        arguments = {"pattern": pattern, "doc_id": doc_id, "context": 0, "case_insensitive": pattern == "NEEDLE"}
        shown = call_tool(engine, "grep", arguments).to_json()["matches"][0]["text"]
        assert "xneedley" in shown, pattern
        assert shown.startswith("… x") and shown.endswith("y …") and len(shown) == 1004


def test_a_composed_pattern_finds_text_stored_with_decomposed_accents(tmp_path):
    import unicodedata

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "noel.md").write_text(unicodedata.normalize("NFD", "# Noël\n\nMarché de Besançon\nfin\n"), encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[folder])]))
    try:
        engine.index()
        doc_id = call_tool(engine, "search", {"query": "*"}).results[0].doc_id
        for pattern in ("Besançon", unicodedata.normalize("NFD", "Besançon"), "marché de"):
            found = call_tool(engine, "grep", {"pattern": pattern, "doc_id": doc_id, "case_insensitive": True})
            assert [match.line for match in found.matches] == [3], pattern
    finally:
        engine.close()
