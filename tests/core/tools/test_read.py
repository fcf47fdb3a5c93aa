"""`read`: paging through a document, its limits, and that it never parses the outline."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from linkly_ls.core.tools import ArgumentError, ToolError, call_tool
from support.tool_library import doc


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


def test_read_grep_and_outline_say_when_the_file_changed_or_went_from_disk(engine, tmp_path):
    doc_id = doc(engine, "long.txt")
    record = engine.catalog.get(doc_id)
    path = record.path
    kept = tmp_path / "long.txt"
    shutil.copy2(path, kept)
    try:
        assert "on_disk" not in call_tool(engine, "read", {"doc_id": doc_id, "limit": 1}).to_json()
        with open(path, "a", encoding="utf-8") as file:
            file.write("one more line\n")
        for tool, arguments in (("read", {"limit": 1}), ("grep", {"pattern": "topic"})):
            result = call_tool(engine, tool, {"doc_id": doc_id, **arguments})
            assert result.to_json()["on_disk"] == "changed"
            assert "> Note: the file changed on disk since it was indexed" in result.to_markdown()
        assert call_tool(engine, "outline", {"doc_ids": [doc_id]}).to_json()["documents"][0]["on_disk"] == "changed"
        os.remove(path)
        gone = call_tool(engine, "read", {"doc_id": doc_id, "limit": 1})
        assert gone.to_json()["on_disk"] == "deleted" and "the file is gone from disk" in gone.to_markdown()
        found = call_tool(engine, "search", {"query": "quick brown fox", "mode": "keyword"})
        hit = next(hit for hit in found.to_json()["results"] if hit["doc_id"] == doc_id)
        assert hit["stale"] is True and hit["on_disk"] == "deleted" and "**stale** (deleted from disk)" in found.to_markdown()
    finally:
        shutil.copy2(kept, path)


def test_a_page_is_read_from_its_marker_to_the_next(tmp_path):
    """Search gives each hit's page; reading it took a grep for `--- page N ---` first."""
    import shutil

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools import ArgumentError, call_tool

    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy2(Path(__file__).resolve().parents[3] / "fixtures" / "papers" / "pdflatex-outline.pdf", folder)
    (folder / "note.md").write_text("# Note\n\ntext\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="p", paths=[folder])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        pdf = engine.catalog.by_path(str(folder / "pdflatex-outline.pdf"))
        starts = pdf.page_starts
        page = call_tool(engine, "read", {"doc_id": pdf.doc_id, "page": 2}).to_json()
        assert page["offset"] == starts[1] and page["lines"][0]["text"] == "--- page 2 ---"
        assert page["lines"][-1]["line"] == starts[2] - 1 and page["pages"] == {"first": 2, "last": 2}
        assert len(call_tool(engine, "read", {"doc_id": pdf.doc_id, "page": 2, "limit": 3}).to_json()["lines"]) == 3
        last = call_tool(engine, "read", {"doc_id": pdf.doc_id, "page": len(starts)}).to_json()
        assert last["remaining_lines"] == 0
        refusals = (
            ({"doc_id": pdf.doc_id, "page": len(starts) + 1}, f"the document has pages 1 to {len(starts)}"),
            ({"doc_id": pdf.doc_id, "page": 2, "offset": 30}, "give `page` or `offset`, not both"),
            ({"doc_id": engine.catalog.by_path(str(folder / "note.md")).doc_id, "page": 1}, "md documents have no pages"),
        )
        for arguments, message in refusals:
            with pytest.raises(ArgumentError, match=message.replace("`", ".")):
                call_tool(engine, "read", arguments)
    finally:
        engine.close()
