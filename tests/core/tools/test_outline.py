"""`outline`: every level, and `expand` of chosen sections."""

from __future__ import annotations

import pytest

from linkly_ls.core.tools import ArgumentError, call_tool
from support.tool_library import doc


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
