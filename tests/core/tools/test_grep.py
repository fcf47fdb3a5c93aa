"""`grep`: context, paging, counts, phrases across lines, and patterns that must fail cleanly."""

from __future__ import annotations

import pytest

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
    insensitive = call_tool(engine, "grep", {"pattern": "THE QUICK", "doc_id": doc_id, "case_insensitive": True})
    assert insensitive.total_matches == 1
    anchored = call_tool(engine, "grep", {"pattern": "^fox", "doc_id": doc_id}).to_json()
    assert [m["line"] for m in anchored["matches"]] == [501]


def test_grep_bad_and_catastrophic_patterns_fail_cleanly(engine):
    doc_id = doc(engine, "long.txt")
    with pytest.raises(ArgumentError, match="not a valid regular expression"):
        call_tool(engine, "grep", {"pattern": "(unclosed", "doc_id": doc_id})
    with pytest.raises(ArgumentError, match="`limit` must be an integer from 1 to 100"):
        call_tool(engine, "grep", {"pattern": "x", "doc_id": doc_id, "limit": 101})
    with pytest.raises(ArgumentError, match="`pattern` must not be empty"):
        call_tool(engine, "grep", {"pattern": "", "doc_id": doc_id})
    assert call_tool(engine, "grep", {"pattern": " ", "doc_id": doc_id}).total_matches > 0  # a space is a pattern
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
