"""`explore` and `list_libraries` on a known library."""

from __future__ import annotations

from linkly_ls.core.tools import call_tool


def test_explore_and_list_libraries(engine):
    overview = call_tool(engine, "explore", {}).to_json()
    assert {"type": "md", "count": 7} in overview["doc_types"]
    root = overview["directories"][0]
    assert root["file_count"] == 9 and root["median_word_count"] > 0
    assert any(child["path"].endswith("/papers") for child in root["children"])
    assert any(k["keyword"].lower().startswith("shopping") for k in overview["keywords"])
    (library,) = call_tool(engine, "list_libraries", {}).to_json()["libraries"]
    assert library["name"] == "docs" and library["document_count"] == 9 and library["paths"] == [str(engine.root)]
