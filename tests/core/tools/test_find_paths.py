"""`find_paths`: folders bucketed by match, file-name-only matches dropped."""

from __future__ import annotations

from linkly_ls.core.tools import call_tool
from support.tool_library import rel, search


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


def test_a_pattern_that_spans_folders_buckets_under_the_folder_where_it_ends(engine):
    spanning = call_tool(engine, "find_paths", {"patterns": ["papers/[draft"]}).to_json()["directories"]
    assert [folder["path"] for folder in spanning] == [str(engine.root / "papers" / "[draft]*")]
    trailing = call_tool(engine, "find_paths", {"patterns": ["papers/"]}).to_json()["directories"]
    assert [folder["path"] for folder in trailing] == [str(engine.root / "papers")]
