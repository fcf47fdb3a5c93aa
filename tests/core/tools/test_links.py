"""The `links` tool (and `outline`'s link counts) on the linked notes fixture."""

import pytest

from linkly_ls.core.tools import ArgumentError, ToolError, call_tool
from support.tool_library import index_linked_notes


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = index_linked_notes(tmp_path_factory.mktemp("links"))
    yield engine
    engine.close()


def test_links_lists_every_link_with_its_status_and_the_backlinks(engine):
    result = call_tool(engine, "links", {"doc_id": engine.doc("index.md")}).to_json()
    assert result["counts"] == {"links": 9, "links_within": 0, "backlinks": 2, "broken": 3, "backlinks_broken": 0}
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
    assert {link["doc_type"] for link in result["backlinks"]} == {"md"}  # editors open a text format as its file


def test_direction_broken_only_and_limit(engine):
    broken = call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "broken_only": True, "direction": "out"})
    assert [link["status"] for link in broken.to_json()["links"]] == ["ambiguous", "missing", "missing_heading"]
    assert broken.to_json()["backlinks"] == []
    markdown = broken.to_markdown()
    assert "**broken**: ambiguous link Guide" in markdown and "link target not found: missing note" in markdown
    limited = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "in", "limit": 1}).to_json()
    assert len(limited["backlinks"]) == 1 and limited["counts"]["backlinks"] == 3 and limited["links"] == []


def test_a_backlink_to_an_anchor_the_document_lacks_is_broken_and_kept_by_broken_only(engine):
    """After a heading is renamed, the pages linking to its old anchor: they read as good links, and
    `--broken-only --direction in` listed every backlink."""
    every = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "in"}).to_json()
    assert every["counts"]["backlinks_broken"] == 1 and every["counts"]["backlinks"] == 3
    statuses = sorted(link["status"] for link in every["backlinks"])
    assert statuses == ["missing_heading", "ok", "ok"]
    broken = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "in", "broken_only": True})
    (only,) = broken.to_json()["backlinks"]
    assert (only["target"], only["status"], only["doc_id"]) == ("guide.md#nope", "missing_heading", engine.doc("index.md"))
    assert "**broken**: no heading or anchor #nope in Guide" in broken.to_markdown()


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


def test_mentions_are_listed_only_when_asked(engine):
    plain = call_tool(engine, "links", {"doc_id": engine.doc("sailing.md")}).to_json()
    assert "mentions" not in plain and "mentions" not in plain["counts"]
    result = call_tool(engine, "links", {"doc_id": engine.doc("sailing.md"), "mentions": True})
    answer = result.to_json()
    assert answer["mention_names"] == ["Sailing"]
    assert answer["counts"]["mentions"] == 1 and answer["counts"]["mentioning_documents"] == 1
    assert answer["mentions"] == [
        {
            "doc_id": engine.doc("sub/guide.md"), "title": "Other guide", "path": answer["mentions"][0]["path"],
            "doc_type": "md", "line": 3, "column": 18, "name": "Sailing", "section": "Other guide",
            "snippet": "This one is about **sailing** boats on the lake.",
        }
    ]
    # book.md mentions it too, but links to it: a backlink, not an unlinked mention
    assert [link["doc_id"] for link in answer["backlinks"]] == [engine.doc("book.md")]
    markdown = result.to_markdown()
    assert "### Unlinked mentions of “Sailing”: 1 line(s) in 1 document(s)" in markdown
    assert "- Other guide (`" in markdown and "line 3 (Other guide): This one is about **sailing** boats" in markdown


def test_mentions_with_direction_out_still_leave_out_linking_documents_and_obey_the_limit(engine):
    out = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "out", "mentions": True}).to_json()
    assert out["backlinks"] == [] and out["counts"]["mentions"] == 1
    assert {mention["doc_id"] for mention in out["mentions"]} == {engine.doc("sub/guide.md")}
    limited = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "mentions": True, "limit": 1}).to_json()
    assert len(limited["mentions"]) == 1
    with pytest.raises(ArgumentError, match="mentions"):
        call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "mentions": "yes"})


def test_links_leaving_the_document_come_first_and_its_links_to_itself_are_no_backlinks(tmp_path):
    from pathlib import Path

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSee [below](#later) and [b](b.md).\n\n## Later\n\nText.\n", encoding="utf-8")
    (notes / "b.md").write_text("# B\n\nBack to [a](a.md#later).\n", encoding="utf-8")
    pdf = Path(__file__).resolve().parents[3] / "fixtures" / "papers" / "pdflatex-outline.pdf"
    (notes / pdf.name).write_bytes(pdf.read_bytes())
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[notes])]))
    try:
        engine.index()
        a = engine.catalog.by_path(str(notes / "a.md")).doc_id
        result = call_tool(engine, "links", {"doc_id": a}).to_json()
        assert [link["target"] for link in result["links"]] == ["b.md", "#later"]
        assert result["counts"] == {"links": 2, "links_within": 1, "backlinks": 1, "broken": 0, "backlinks_broken": 0}
        assert [(link["title"], link["heading"]) for link in result["backlinks"]] == [("B", "Later")]
        manual = engine.catalog.by_path(str(notes / pdf.name)).doc_id
        contents = call_tool(engine, "links", {"doc_id": manual})
        assert contents.to_json()["counts"] == {"links": 9, "links_within": 9, "backlinks": 0, "broken": 0, "backlinks_broken": 0}
        assert "9 link(s) (9 within the document)" in contents.to_markdown()
        first = call_tool(engine, "links", {"doc_id": manual, "limit": 3}).to_json()
        assert [link["line"] for link in first["links"]] == [4, 6, 8] and first["counts"]["links_within"] == 9
        assert first["links"][0]["heading"] == "Foo" and first["links"][0]["target_line"] > 8
    finally:
        engine.close()


def test_a_list_cut_by_the_limit_says_how_many_more_there_are(engine):
    cut = call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "limit": 5}).to_markdown()
    assert "[4 more link(s): continue with offset=5]" in cut
    backlinks = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "in", "limit": 1}).to_markdown()
    assert "[2 more backlink(s): continue with offset=1]" in backlinks
    whole = call_tool(engine, "links", {"doc_id": engine.doc("index.md")}).to_markdown()
    assert "more link(s)" not in whole and "more backlink(s)" not in whole


def test_every_link_can_be_reached_by_paging_with_offset(engine):
    whole = call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "direction": "out"}).to_json()
    paged, offset = [], 0
    while offset is not None:
        page = call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "direction": "out", "limit": 4, "offset": offset})
        paged += page.to_json()["links"]
        offset = page.to_json()["next_offset"]
        if offset is not None:
            assert f"more link(s): continue with offset={offset}]" in page.to_markdown()
    assert paged == whole["links"] and whole["next_offset"] is None
    incoming = call_tool(engine, "links", {"doc_id": engine.doc("guide.md"), "direction": "in"}).to_markdown()
    assert "3 backlink(s)" in incoming and "link(s), " not in incoming.splitlines()[1], "no outgoing count when not asked"
    past = call_tool(engine, "links", {"doc_id": engine.doc("index.md"), "offset": 50}).to_markdown()
    assert "_Nothing from offset 50" in past


def test_an_empty_direction_says_which_direction_is_empty(engine):
    for name in ("index.md", "guide.md", "sailing.md", "book.md", "sub/index.md"):
        outgoing = call_tool(engine, "links", {"doc_id": engine.doc(name), "direction": "out"})
        if not outgoing.links:
            assert outgoing.to_markdown().endswith("_No links from this document._")
        incoming = call_tool(engine, "links", {"doc_id": engine.doc(name), "direction": "in"})
        if not incoming.backlinks:
            assert incoming.to_markdown().endswith("_No links to this document (no backlinks)._")
    assert not call_tool(engine, "links", {"doc_id": engine.doc("sailing.md"), "direction": "out"}).links
