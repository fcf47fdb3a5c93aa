"""The `related` tool on the linked notes fixture (keywords: this index has no vectors)."""

import pytest

from linkly_ls.core.tools import ArgumentError, ToolError, call_tool
from support.tool_library import copy_rust_chapters_and_slides, index_linked_notes


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = index_linked_notes(tmp_path_factory.mktemp("related"))
    yield engine
    engine.close()


def test_related_documents_share_key_terms_and_leave_out_linked_ones(engine):
    result = call_tool(engine, "related", {"doc_id": engine.doc("sub/guide.md")}).to_json()
    assert result["mode"] == "keyword" and "key terms" in result["mode_reason"]
    assert result["results"][0]["doc_id"] == engine.doc("sailing.md")
    top = result["results"][0]
    assert top["reason"].startswith("shared terms: ") and {"sail", "boat"} & {t.lower().rstrip("s") for t in top["shared_terms"]}
    assert {"relevance", "snippet", "passage", "line", "doc_type"} <= set(top)
    sections = {hit["path"].rsplit("/", 1)[-1]: hit.get("section") for hit in result["results"]}
    assert sections["book.md"] == "Book > Ch 2", "a hit says where it stands, as a search hit does"
    assert engine.doc("sub/guide.md") not in {hit["doc_id"] for hit in result["results"]}
    guide = call_tool(engine, "related", {"doc_id": engine.doc("guide.md")}).to_json()
    assert guide["excluded_links"] == 1  # it links to index.md, which is not offered back
    assert engine.doc("index.md") not in {hit["doc_id"] for hit in guide["results"]}


def test_a_line_relates_only_its_section(engine):
    section = call_tool(engine, "related", {"doc_id": engine.doc("sailing.md"), "line": 7}).to_json()
    assert section["section"] == {"start_line": 5, "end_line": 7}
    assert all(hit["doc_id"] != engine.doc("sailing.md") for hit in section["results"])


def test_a_line_past_the_end_is_refused_as_read_refuses_it(engine):
    with pytest.raises(ToolError, match="`line` 999999 is past the end; the document has lines 1 to 7"):
        call_tool(engine, "related", {"doc_id": engine.doc("sailing.md"), "line": 999999})


def test_limit_is_checked(engine):
    with pytest.raises(ArgumentError, match="limit"):
        call_tool(engine, "related", {"doc_id": engine.doc("guide.md"), "limit": 51})
    assert len(call_tool(engine, "related", {"doc_id": engine.doc("book.md"), "limit": 1}).to_json()["results"]) <= 1


def test_a_related_document_changed_on_disk_is_marked_stale(tmp_path):
    engine = index_linked_notes(tmp_path)
    try:
        before = call_tool(engine, "related", {"doc_id": engine.doc("sub/guide.md")}).to_json()["results"][0]
        assert before["stale"] is False and before["content_hash"]
        changed = tmp_path / "notes" / "sailing.md"
        changed.write_text(changed.read_text(encoding="utf-8") + "\nA line written after indexing.\n", encoding="utf-8")
        after = call_tool(engine, "related", {"doc_id": engine.doc("sub/guide.md")}).to_json()["results"][0]
        assert after["doc_id"] == engine.doc("sailing.md") and after["stale"] is True
    finally:
        engine.close()


def test_a_documents_links_within_itself_are_not_counted_as_linked_documents(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Sailing\n\nWind and sails, see [below](#knots).\n\n## Knots\n\nsailing knots\n", encoding="utf-8")
    (root / "b.md").write_text("# Boats\n\nsailing boats and wind\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        doc_id = call_tool(engine, "search", {"query": "knots"}).results[0].doc_id
        result = call_tool(engine, "related", {"doc_id": doc_id}).to_json()
        assert result["excluded_links"] == 0 and [hit["path"] for hit in result["results"]] == [str(root / "b.md")]
    finally:
        engine.close()


def test_the_files_of_one_work_are_one_result_and_the_sources_own_other_format_none(engine_for, tmp_path):
    library = copy_rust_chapters_and_slides(tmp_path)
    engine = engine_for(library)
    engine.index()
    chapter = engine.catalog.by_path(str(library / "ch04-01-what-is-ownership.md"))
    slides = engine.catalog.by_path(str(library / "rust ownership - lunch and learn.pptx"))
    from_chapter = call_tool(engine, "related", {"doc_id": chapter.doc_id}).results
    assert slides.doc_id not in [item.hit.doc_id for item in from_chapter]  # the same text in slides
    structs = engine.catalog.by_path(str(library / "ch05-01-defining-structs.md"))  # it links to the chapter
    linked = [item.hit.doc_id for item in call_tool(engine, "related", {"doc_id": structs.doc_id}).results]
    assert chapter.doc_id not in linked and slides.doc_id not in linked
    control = engine.catalog.by_path(str(library / "ch03-05-control-flow.md"))
    found = call_tool(engine, "related", {"doc_id": control.doc_id, "limit": 10}).results
    ids = [item.hit.doc_id for item in found]
    assert (chapter.doc_id in ids) != (slides.doc_id in ids)
    shown = found[ids.index(chapter.doc_id if chapter.doc_id in ids else slides.doc_id)].hit
    assert [other.doc_id for other in shown.also_as] == [slides.doc_id if shown.doc_id == chapter.doc_id else chapter.doc_id]
