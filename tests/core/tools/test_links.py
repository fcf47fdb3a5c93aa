"""The `links` tool (and `outline`'s link counts) on the linked notes fixture."""

import shutil
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.store.records import make_doc_id
from linkly_ls.core.tools import ArgumentError, ToolError, call_tool

LINKED_NOTES = Path(__file__).resolve().parents[3] / "fixtures" / "linked-notes"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    root = tmp_path_factory.mktemp("links") / "notes"
    shutil.copytree(LINKED_NOTES, root)
    engine = Engine(Config(data_dir=root.parent / "data", libraries=[LibraryConfig(name="notes", paths=[root])]))
    engine.index()
    engine.doc = lambda relative: make_doc_id(str(root / relative))
    yield engine
    engine.close()


def test_links_lists_every_link_with_its_status_and_the_backlinks(engine):
    result = call_tool(engine, "links", {"doc_id": engine.doc("index.md")}).to_json()
    assert result["counts"] == {"links": 9, "backlinks": 2, "broken": 3}
    first = result["links"][0]
    assert first == {
        "line": 3, "kind": "inline", "target": "guide.md#install-it", "text": "the guide", "status": "ok",
        "doc_id": engine.doc("guide.md"), "path": first["path"], "title": "Guide", "target_line": 5, "heading": "Install it",
    }
    ambiguous = next(link for link in result["links"] if link["status"] == "ambiguous")
    assert len(ambiguous["candidates"]) == 2
    assert {(link["doc_id"], link["title"], link["line"]) for link in result["backlinks"]} == {
        (engine.doc("guide.md"), "Guide", 7),
        (engine.doc("sub/index.md"), "Sub page", 3),
    }


def test_direction_broken_only_and_limit(engine):
    broken = call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "broken_only": True, "direction": "out"})
    assert [link["status"] for link in broken.to_json()["links"]] == ["ambiguous", "missing", "missing_heading"]
    assert broken.to_json()["backlinks"] == []
    markdown = broken.to_markdown()
    assert "**broken**: ambiguous link Guide" in markdown and "link target not found: missing note" in markdown
    limited = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "in", "limit": 1}).to_json()
    assert len(limited["backlinks"]) == 1 and limited["counts"]["backlinks"] == 3 and limited["links"] == []


def test_outline_counts_links_and_backlinks(engine):
    document = call_tool(engine, "outline", {"doc_ids": [engine.doc("guide.md")]}).to_json()["documents"][0]
    assert (document["links"], document["backlinks"]) == (1, 3)


def test_bad_arguments_are_clear_errors(engine):
    with pytest.raises(ArgumentError, match="document id"):
        call_tool(engine, "links", {"doc_id": "../etc/passwd"})
    with pytest.raises(ToolError, match="not an indexed document"):
        call_tool(engine, "links", {"doc_id": "0123456789ab"})
    with pytest.raises(ArgumentError, match="direction"):
        call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "direction": "sideways"})
