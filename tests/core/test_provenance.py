"""Page and section of every search hit, grep match and read page, on real fixture documents."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.provenance import Place, Provenance, page_range_label
from linkly_ls.core.search.snippets import SNIPPET_CHARS, QueryMatcher, best_snippet
from linkly_ls.core.store.records import DocumentLayout
from linkly_ls.core.tools import call_tool

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
FILES = [
    "papers/pdflatex-outline.pdf",
    "slides/rust ownership - lunch and learn.pptx",
    "books/sample-ebook.epub",
    "notes/rust/ch04-01-what-is-ownership.md",
]
MARKER = re.compile(r"^\W*--- (page|slide|chapter) \d+")


def outline_node(title: str, start: int, end: int, children: list[dict] | None = None) -> dict:
    return {"id": "", "title": title, "level": 1, "start_line": start, "end_line": end, "children": children or []}


LAYOUT = DocumentLayout(
    doc_id="0123456789ab",
    page_starts=[1, 11, 21],
    outline=[
        outline_node("6 Package maintainer scripts", 3, 18, [
            outline_node("6.1 Introduction", 3, 9),
            outline_node("6.5 Summary", 10, 18),
        ]),
        outline_node("7 Relationships", 19, 30),
    ],
)


def test_page_is_the_count_of_page_starts_at_or_before_the_line():
    provenance = Provenance(LAYOUT)
    assert [provenance.page(line) for line in (1, 10, 11, 20, 21, 99)] == [1, 1, 2, 2, 3, 3]
    assert Provenance(DocumentLayout("0123456789ab", [5, 9], [])).page(4) is None
    assert Provenance(None).page(3) is None and Provenance(None).page_range(1, 9) is None


def test_section_is_the_heading_path_of_the_innermost_enclosing_node():
    provenance = Provenance(LAYOUT)
    assert provenance.section(12) == "6 Package maintainer scripts > 6.5 Summary"
    assert provenance.section(19) == "7 Relationships"
    assert provenance.section(2) is None and provenance.section(31) is None
    assert provenance.place(12) == Place(page=2, section="6 Package maintainer scripts > 6.5 Summary")
    assert provenance.page_range(9, 22) == (1, 3)


def test_a_heading_nested_under_a_title_of_its_own_name_is_named_once():
    """A DOCX's title style and its first heading of one name: `5.4 dpkg > 5.4 dpkg > 5.4.2 Removing`."""
    layout = DocumentLayout("0123456789ab", [], [
        outline_node("5.4 dpkg", 1, 30, [outline_node("5.4 dpkg", 2, 30, [outline_node("5.4.2 Removing", 20, 30)])]),
    ])
    assert Provenance(layout).section(25) == "5.4 dpkg > 5.4.2 Removing"


def test_labels_name_pages_slides_and_chapters():
    place = Place(page=29, section="6.5 Summary")
    assert place.label("pdf") == "p. 29 · 6.5 Summary"
    assert Place(page=3, section="Ownership Rules").label("pptx") == "slide 3 · Ownership Rules"
    assert Place(page=2, section="Slide 2").label("pptx") == "slide 2"
    assert Place(section="Install").label("md") == "Install" and Place().label("md") == ""
    assert Place(page=2).add_to({}) == {"page": 2} and Place().add_to({}) == {}
    assert page_range_label("pdf", 28, 30) == "pp. 28-30" and page_range_label("epub", 2, 2) == "ch. 2"


def test_marker_lines_are_left_out_of_snippets_and_a_title_only_page_shows_its_title():
    lines = ["--- page 1 ---", "CHAPTER", "", "--- page 2 ---", "The summary of the rules.", "--- chapter 3: Winter Sports ---"]
    markers = Provenance(DocumentLayout("0123456789ab", [1, 4, 6], [])).marker_lines(lines)
    assert markers == {1, 4, 6}
    snippet = best_snippet(QueryMatcher("rules"), lines, 1, 5, markers)
    assert snippet.text == "CHAPTER The summary of the **rules**." and snippet.line == 5
    assert best_snippet(QueryMatcher("winter"), lines, 6, 6, markers).text == "**Winter** Sports"
    text_pages = Provenance(DocumentLayout("0123456789ab", [1, 2], []))
    assert text_pages.marker_lines(["first page", "second page"]) == frozenset()


def test_a_long_line_is_shown_from_the_sentence_that_holds_the_query_terms():
    filler = "Words that say nothing in particular go on for a while here. " * 8
    line = filler + "The keeper restarts the watcher after a crash. More text follows it."
    snippet = best_snippet(QueryMatcher("watcher crash"), [line], 1, 1)
    assert snippet.text.startswith("… The keeper restarts the **watcher** after a **crash**.")
    assert len(snippet.text) <= SNIPPET_CHARS + 4


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    root = tmp_path_factory.mktemp("provenance")
    for relative in FILES:
        target = root / "library" / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / relative, target)
    engine = Engine(Config(
        data_dir=root / "data",
        libraries=[LibraryConfig(name="fixtures", paths=[root / "library"])],
        raw={"embedding": {"model": "none"}},
    ))
    engine.index()
    yield engine
    engine.close()


def hit_in(result, doc_type: str):
    return next(hit for hit in result.results if hit.doc_type == doc_type)


def test_search_hits_carry_page_and_section_and_markdown_shows_them(engine):
    # the slides are converted from the chapter: one work, so each is searched on its own
    result = call_tool(engine, "search", {"query": "ownership rules", "doc_types": ["pptx"]})
    slide = hit_in(result, "pptx")
    assert (slide.page, slide.section) == (3, "Ownership Rules")
    assert "(slide 3 · Ownership Rules)" in result.to_markdown()
    note = hit_in(call_tool(engine, "search", {"query": "ownership rules", "doc_types": ["md"]}), "md").to_json()
    assert "page" not in note and note["section"].startswith("What Is Ownership?")
    pdf = hit_in(call_tool(engine, "search", {"query": "impression letters alphabet"}), "pdf").to_json()
    lines = call_tool(engine, "read", {"doc_id": pdf["doc_id"]}).to_json()["lines"]
    marker_before = max(n for n, line in enumerate(lines, 1) if n <= pdf["line"] and line["text"].startswith("--- page"))
    assert lines[marker_before - 1]["text"] == f"--- page {pdf['page']} ---"
    assert pdf["section"] in {"Foo", "Bar", "Baz"}


@pytest.mark.parametrize("query", ["Contents", "Chapter 2", "Test EPUB Document", "slide", "page", "stack heap"])
def test_no_snippet_starts_with_a_page_marker(engine, query):
    for hit in call_tool(engine, "search", {"query": query}).results:
        assert hit.snippet and not MARKER.match(hit.snippet), (hit.title, hit.snippet)


def test_grep_matches_carry_page_and_section(engine):
    doc_id = hit_in(call_tool(engine, "search", {"query": "impression letters alphabet"}), "pdf").doc_id
    result = call_tool(engine, "grep", {"doc_id": doc_id, "pattern": "impression", "context": 0, "limit": 100})
    matches = result.to_json()["matches"]
    assert {match["page"] for match in matches} == {2, 3, 4}
    assert {match["section"] for match in matches} == {"Foo", "Bar", "Baz"}
    markdown = result.to_markdown()
    assert "[p. 2 · Foo]" in markdown and "[p. 3 · Bar]" in markdown
    note = hit_in(call_tool(engine, "search", {"query": "ownership rules", "doc_types": ["md"]}), "md").doc_id
    (match,) = call_tool(engine, "grep", {"doc_id": note, "pattern": "^### Ownership Rules"}).to_json()["matches"]
    assert "page" not in match and match["section"] == "What Is Ownership? > Ownership Rules"


def test_read_says_the_page_range_of_its_lines(engine):
    doc_id = hit_in(call_tool(engine, "search", {"query": "impression letters alphabet"}), "pdf").doc_id
    page = call_tool(engine, "read", {"doc_id": doc_id, "offset": 20, "limit": 60})
    assert page.to_json()["pages"] == {"first": 1, "last": 3}
    assert "[pp. 1-3]" in page.to_markdown()
    note = hit_in(call_tool(engine, "search", {"query": "ownership rules", "doc_types": ["md"]}), "md").doc_id
    assert "pages" not in call_tool(engine, "read", {"doc_id": note, "limit": 5}).to_json()


def test_a_slides_marker_line_belongs_to_that_slide(engine):
    doc_id = hit_in(call_tool(engine, "search", {"query": "ownership rules", "doc_types": ["pptx"]}), "pptx").doc_id
    grep = call_tool(engine, "grep", {"doc_id": doc_id, "pattern": "^--- slide 3 ---$", "context": 0}).to_json()
    (match,) = grep["matches"]
    assert (match["page"], match["section"]) == (3, "Ownership Rules")
    nodes = call_tool(engine, "outline", {"doc_ids": [doc_id]}).to_json()["documents"][0]["nodes"]
    lines = call_tool(engine, "read", {"doc_id": doc_id, "limit": 500}).to_json()["lines"]
    markers = [line["line"] for line in lines if MARKER.match(line["text"])]
    assert len(nodes) == len(markers) >= 5
    for node in nodes:  # a slide's range holds its own marker (above its title, or its untitled heading) alone
        inside = [marker for marker in markers if node["start_line"] - 1 <= marker <= node["end_line"]]
        assert len(inside) == 1, (node, inside)
