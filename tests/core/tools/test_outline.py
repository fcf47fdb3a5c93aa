"""`outline`: every level, and `expand` of chosen sections."""

from __future__ import annotations

import pytest

from linkly_ls.core.tools import ArgumentError, ToolError, call_tool
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


def test_an_unknown_id_in_a_batch_is_named_and_the_others_are_outlined(engine):
    """An id from an older search whose file is gone cost the whole batch its outlines."""
    doc_id = doc(engine, "outline.md")
    answer = call_tool(engine, "outline", {"doc_ids": [doc_id, "000000000000"]})
    data = answer.to_json()
    assert [document["doc_id"] for document in data["documents"]] == [doc_id]
    assert data["missing"] == [{"doc_id": "000000000000", "error": "`doc_ids[1]` '000000000000' is not an indexed document; use an id from search results"}]
    assert answer.to_markdown().endswith("_Not outlined: `doc_ids[1]` '000000000000' is not an indexed document; use an id from search results._")
    with pytest.raises(ToolError, match="is not an indexed document"):
        call_tool(engine, "outline", {"doc_ids": ["000000000000"]})
    with pytest.raises(ArgumentError, match="must be"):
        call_tool(engine, "outline", {"doc_ids": [doc_id, "../etc"]})


def test_expand_on_a_document_without_an_outline_says_so(engine):
    flat = next(hit.doc_id for hit in call_tool(engine, "search", {"query": "*", "limit": 50}).results if not hit.has_outline)
    with pytest.raises(ArgumentError, match=r"the document has no outline \(has_outline: false\)"):
        call_tool(engine, "outline", {"doc_ids": [flat], "expand": ["1"]})
    with pytest.raises(ArgumentError, match=r'names node\(s\) "" that are not in the outline'):
        call_tool(engine, "outline", {"doc_ids": [doc(engine, "outline.md")], "expand": [""]})
