"""The tools on a small library whose files, dates and paths are known exactly."""

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from linkly_ls.core.tools.render import render, render_error
from linkly_ls.core.tools import ArgumentError, ToolError, call_tool


def stamp(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


FILES = {
    "Notion-Export-c58e/workspace/receipts.md": ("# Receipts\n\nShopping receipt from the grocery store.\n", "2024-03-10T12:00:00"),
    "Notion-Export-c58e/workspace/ideas.md": ("# Ideas\n\nA shopping list app idea.\n", "2024-07-01T00:00:00"),
    "papers/2024/report-q3.md": ("# Quarterly report Q3\n\nRevenue grew; shopping season.\n", "2024-09-30T18:00:00"),
    "papers/2023/report.md": ("# Annual report\n\nShopping trends in 2023.\n", "2023-12-31T23:59:59"),
    "papers/[draft]*/notes.txt": ("draft shopping notes\n", "2022-05-05T05:05:05"),
    "notion.md": ("# Notion tips\n\nHow to export.\n", "2021-01-01T00:00:00"),
    "copy/receipts-again.md": ("# Receipts\n\nShopping receipt from the grocery store.\n", "2020-01-01T00:00:00"),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path_factory.mktemp("tools") / "docs"
    for relative, (text, when) in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (stamp(when), stamp(when)))
    long_lines = [f"line {n} about topic {n % 7}" for n in range(1, 1201)]
    long_lines[499] = "The quick brown"
    long_lines[500] = "fox jumps over the lazy dog"
    (root / "long.txt").write_text("\n".join(long_lines) + "\n", encoding="utf-8")
    (root / "outline.md").write_text(
        "# Guide\n\nintro\n\n## Install\n\nsteps\n\n### Linux\n\napt\n\n### Mac\n\nbrew\n\n## Use\n\nrun it\n",
        encoding="utf-8",
    )
    engine = Engine(Config(data_dir=root.parent / "data", libraries=[LibraryConfig(name="docs", paths=[root])]))
    engine.index()
    engine.root = root
    yield engine
    engine.close()


def search(engine, **arguments):
    return call_tool(engine, "search", {"query": "shopping", **arguments})


def rel(engine, hits) -> list[str]:
    return [Path(hit.path).relative_to(engine.root).as_posix() for hit in hits]


def doc(engine, relative: str) -> str:
    return engine.catalog.by_path(str(engine.root / relative)).doc_id


def test_search_dedupes_identical_content_and_fills_every_field(engine):
    result = search(engine)
    paths = rel(engine, result.results)
    assert len(paths) == len(set(paths))
    assert not ({"copy/receipts-again.md", "Notion-Export-c58e/workspace/receipts.md"} <= set(paths))
    data = result.results[0].to_json()
    for key in ("doc_id", "title", "path", "relevance", "word_count", "total_lines", "has_outline",
                "modified_at", "keywords", "snippet"):
        assert key in data
    assert 0 <= data["relevance"] <= 1 and "**" in data["snippet"]


def test_many_copies_of_a_file_show_once_and_leave_room_for_other_documents(engine_for, library_dir):
    for number in range(80):  # more copies than the first page of documents search reads
        (library_dir / f"copy-{number:02d}.md").write_text("# Tides\n\nSpring tides and neap tides.\n", encoding="utf-8")
    (library_dir / "other.md").write_text("# Moon\n\nThe moon raises tides.\n", encoding="utf-8")
    engine = engine_for(library_dir)
    engine.index()
    result = call_tool(engine, "search", {"query": "spring neap tides", "limit": 3})
    names = [Path(hit.path).name for hit in result.results]
    assert len(names) == 2 and "other.md" in names and names[0].startswith("copy-")


def test_snippet_term_matching_agrees_with_marking():
    from linkly_ls.core.search.snippets import QueryMatcher, best_snippet

    texts = ["Installing packages: the installer installs one package.", "Paketen installieren", "nothing here", ""]
    for query in ("installing packages", "Pakete installieren", "软件 package", "the"):
        matcher = QueryMatcher(query)
        for text in texts + ["软件包管理 and packages"]:
            assert matcher.terms_in(text) == matcher.mark(text)[1]
    snippet = best_snippet(QueryMatcher("installing packages"), texts, 1, 4)
    assert snippet.line == 1 and snippet.text.startswith("**Installing** **packages**")


@pytest.mark.parametrize(
    "glob, expected",
    [
        ("papers/", {"papers/2024/report-q3.md", "papers/2023/report.md", "papers/[draft]*/notes.txt"}),
        ("2024*q3", {"papers/2024/report-q3.md"}),
        ("papers*q?.md", {"papers/2024/report-q3.md"}),
        ("Notion-Export", {"Notion-Export-c58e/workspace/ideas.md", "Notion-Export-c58e/workspace/receipts.md"}),
        ("notion-export", set()),
        (r"papers/\[draft\]\*/", {"papers/[draft]*/notes.txt"}),
    ],
)
def test_path_glob_is_substring_case_sensitive_with_star_spanning_slashes(engine, glob, expected):
    hits = search(engine, path_glob=glob, limit=50).results
    found = set(rel(engine, hits))
    if "copy/receipts-again.md" in found:
        found.discard("copy/receipts-again.md")
        found.add("Notion-Export-c58e/workspace/receipts.md")
    assert found == expected


def test_date_bounds_are_inclusive_and_bare_before_date_covers_the_day(engine):
    hits = search(engine, modified_after="2024-07-01", modified_before="2024-09-30", limit=50).results
    assert set(rel(engine, hits)) == {"Notion-Export-c58e/workspace/ideas.md", "papers/2024/report-q3.md"}
    exact = search(engine, modified_after="2023-12-31T23:59:59Z", modified_before="2023-12-31T23:59:59+00:00").results
    assert rel(engine, exact) == ["papers/2023/report.md"]


def test_time_sort_reorders_after_selection(engine):
    newest = rel(engine, search(engine, time_sort="newest", limit=50).results)
    oldest = rel(engine, search(engine, time_sort="oldest", limit=50).results)
    assert newest[0] == "papers/2024/report-q3.md"
    assert oldest == list(reversed(newest))
    limited = rel(engine, search(engine, time_sort="newest", limit=2).results)
    assert set(limited) <= set(rel(engine, search(engine, limit=2).results))


def test_filters_by_type_and_library(engine):
    assert rel(engine, search(engine, doc_types=["txt"]).results) == ["papers/[draft]*/notes.txt"]
    assert search(engine, library="docs").results
    assert search(engine, library="local://docs").results
    with pytest.raises(ArgumentError, match="does not exist; available: docs"):
        search(engine, library="nope")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"limit": 0}, "`limit` must be an integer from 1 to 50"),
        ({"limit": 51}, "from 1 to 50"),
        ({"modified_after": "last week"}, "`modified_after` must be a date"),
        ({"time_sort": "random"}, "`time_sort` must be one of default, newest, oldest"),
        ({"doc_types": ["xls"]}, "unknown type 'xls'"),
        ({"bogus": 1}, "unknown argument `bogus`"),
    ],
)
def test_bad_search_arguments_name_the_argument(engine, arguments, message):
    with pytest.raises(ArgumentError, match=message.replace("(", r"\(").replace("`", "`")):
        search(engine, **arguments)


def test_weak_or_no_match_sets_miss_and_guidance(engine):
    result = call_tool(engine, "search", {"query": "xylophone quasar"})
    assert result.miss and result.results == []
    assert any("find_paths" in advice for advice in result.guidance)


def test_read_pages_through_a_document(engine):
    doc_id = doc(engine, "long.txt")
    page = call_tool(engine, "read", {"doc_id": doc_id, "offset": 499, "limit": 3}).to_json()
    assert [line["line"] for line in page["lines"]] == [499, 500, 501]
    assert page["lines"][1]["text"] == "The quick brown"
    assert page["total_lines"] == 1200 and page["remaining_lines"] == 699 and page["next_offset"] == 502
    last = call_tool(engine, "read", {"doc_id": doc_id, "offset": 1101, "limit": 500}).to_json()
    assert len(last["lines"]) == 100 and last["remaining_lines"] == 0 and last["next_offset"] is None
    with pytest.raises(ArgumentError, match="`limit` must be an integer from 1 to 500, got 501"):
        call_tool(engine, "read", {"doc_id": doc_id, "limit": 501})
    with pytest.raises(ToolError, match="past the end; the document has lines 1 to 1200"):
        call_tool(engine, "read", {"doc_id": doc_id, "offset": 5000})


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


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "/etc/passwd", "ABCDEF012345", "1234", "0123456789ab "])
def test_ids_that_are_not_search_ids_are_refused(engine, bad_id):
    with pytest.raises(ArgumentError, match="must be a document id from search results"):
        call_tool(engine, "read", {"doc_id": bad_id})


def test_unknown_doc_id_is_an_error(engine):
    with pytest.raises(ToolError, match="is not an indexed document"):
        call_tool(engine, "outline", {"doc_ids": ["0123456789ab"]})


def test_outline_all_levels_and_expand(engine):
    doc_id = doc(engine, "outline.md")
    full = call_tool(engine, "outline", {"doc_ids": [doc_id]}).to_json()["documents"][0]
    assert full["has_outline"] is True
    (guide,) = full["nodes"]
    assert guide["id"] == "1" and [c["title"] for c in guide["children"]] == ["Install", "Use"]
    assert [c["id"] for c in guide["children"][0]["children"]] == ["1.1.1", "1.1.2"]
    lines = call_tool(engine, "read", {"doc_id": doc_id}).to_json()["lines"]
    linux = guide["children"][0]["children"][0]
    assert lines[linux["start_line"] - 1]["text"] == "### Linux"
    folded = call_tool(engine, "outline", {"doc_ids": [doc_id], "expand": ["1"]}).to_json()["documents"][0]
    install = folded["nodes"][0]["children"][0]
    assert install["children"] == [] and install["collapsed"] == 2
    with pytest.raises(ArgumentError, match="not in the outline"):
        call_tool(engine, "outline", {"doc_ids": [doc_id], "expand": ["9.9"]})


def test_find_paths_buckets_folders_and_drops_filename_only_matches(engine):
    result = call_tool(engine, "find_paths", {"patterns": ["notion", "NOTION-export"]}).to_json()
    (folder,) = result["directories"]
    assert folder["path"] == str(engine.root / "Notion-Export-c58e")
    assert folder["file_count"] == 2 and result["total_files"] == 2 and result["truncated"] is False
    escaped = call_tool(engine, "find_paths", {"patterns": ["draft"]}).to_json()["directories"][0]
    assert escaped["path_glob"] == str(engine.root) + r"/papers/\[draft]\*"
    hits = search(engine, path_glob=escaped["path_glob"]).results
    assert rel(engine, hits) == ["papers/[draft]*/notes.txt"]
    truncated = call_tool(engine, "find_paths", {"patterns": ["papers", "Notion"], "limit": 1}).to_json()
    assert truncated["truncated"] is True and len(truncated["directories"]) == 1
    assert truncated["total_files"] == 5


def test_explore_and_list_libraries(engine):
    overview = call_tool(engine, "explore", {}).to_json()
    assert {"type": "md", "count": 7} in overview["doc_types"]
    root = overview["directories"][0]
    assert root["file_count"] == 9 and root["median_word_count"] > 0
    assert any(child["path"].endswith("/papers") for child in root["children"])
    assert any(k["keyword"].lower().startswith("shopping") for k in overview["keywords"])
    (library,) = call_tool(engine, "list_libraries", {}).to_json()["libraries"]
    assert library["name"] == "docs" and library["document_count"] == 9 and library["paths"] == [str(engine.root)]


def test_rendering_adds_meta_to_successes_only(engine):
    result = call_tool(engine, "list_libraries", {})
    markdown = render(result)
    assert markdown.splitlines()[-1].startswith("[meta] now=") and markdown.splitlines()[-2] == "---"
    payload = json.loads(render(result, "json"))
    assert payload["_meta"]["now"].endswith("Z")
    assert "meta" not in render_error("boom") and "_meta" not in render_error("boom", "json")


def test_read_and_grep_do_not_parse_the_outline(engine, monkeypatch):
    # A long book's outline is most of what parsing its record costs; neither tool shows it.
    from linkly_ls.core.store import records

    doc_id = doc(engine, "Notion-Export-c58e/workspace/receipts.md")
    assert engine.catalog.get(doc_id).outline, "the document has an outline to skip"

    def refuse(data):  # noqa: ANN001
        raise AssertionError("the outline was parsed")

    monkeypatch.setattr(records.OutlineNode, "from_dict", staticmethod(refuse))
    assert call_tool(engine, "read", {"doc_id": doc_id}).to_json()["lines"][0]["text"] == "# Receipts"
    assert call_tool(engine, "grep", {"doc_id": doc_id, "pattern": "grocery"}).to_json()["total_matches"] == 1
    assert engine.catalog.get(doc_id, with_outline=False).title == "Receipts"
