"""Markdown and MDX: front matter, headings, MDX scaffolding, encodings."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.extract import extract_file


def test_front_matter_gives_title_and_stays_out_of_lines(extracted):
    document = extracted("notes/web-dev/astro-docs/en/getting-started.mdx")
    assert document.title == "Getting started"
    assert document.doc_type == "mdx"
    text = "\n".join(document.lines)
    assert "i18nReady" not in text and "tableOfContents" not in text
    assert "Have a question or want to get involved?" in text


def test_mdx_imports_and_component_tags_are_dropped_but_their_text_kept(extracted):
    document = extracted("notes/web-dev/astro-docs/en/getting-started.mdx")
    stripped = [line.strip() for line in document.lines]
    assert not any(line.startswith(("import ", "export ")) for line in stripped)
    assert not any(line.startswith(("<Card", "</Card", "<CardGrid", "</CardGrid", "<ListCard")) for line in stripped)
    assert "Take a guided tour" in stripped  # the card's title attribute
    assert any("Explore [Astro starter themes]" in line for line in stripped)  # the card's inner text


def test_fenced_code_stays_verbatim_even_with_imports(extracted):
    document = extracted("notes/web-dev/astro-docs/en/basics/layouts.mdx")
    assert "import BaseHead from '../components/BaseHead.astro';" in document.lines
    assert "    <h1>{title}</h1>" in document.lines
    assert any(line.startswith("```astro") for line in document.lines)


def test_atx_headings_nest_by_level(extracted):
    document = extracted("notes/learning-rust/ch06-02-match.md")
    assert document.title == "The match Control Flow Construct"
    top = document.outline
    assert [(node.level, node.title) for node in top] == [(2, "The match Control Flow Construct")]
    assert [child.title for child in top[0].children] == [
        "Patterns That Bind to Values",
        "The Option<T> match Pattern",
        "Matches Are Exhaustive",
        "Catch-All Patterns and the _ Placeholder",
    ]
    assert all(child.level == 3 for child in top[0].children)


def test_listing_caption_is_kept_as_text(extracted):
    document = extracted("notes/learning-rust/ch06-02-match.md")
    assert not any(line.lstrip().startswith(("<Listing", "</Listing")) for line in document.lines)
    assert "An enum and a `match` expression that has the variants of the enum as its patterns" in document.lines
    assert "A function that uses a `match` expression on an `Option<i32>`" in document.lines


@pytest.mark.parametrize(
    "relative",
    [
        "notes/learning-rust/ch02-00-guessing-game-tutorial.md",
        "notes/learning-rust/ch04-01-what-is-ownership.md",
        "notes/web-dev/astro-docs/en/guides/images.mdx",
        "notes/web-dev/astro-docs/zh-cn/guides/styling.mdx",
        "odd/crlf-bom-notes.md",
    ],
)
def test_outline_points_at_heading_lines(extracted, check, relative):
    document = extracted(relative)
    check.outline_points_at_titles(document)
    check.well_formed(document, source_lines=True)


def test_crlf_and_bom_are_normalised(extracted, check):
    document = extracted("odd/crlf-bom-notes.md")
    assert document.title == "Storing Keys with Associated Values in Hash Maps"
    assert not document.lines[0].startswith("\ufeff")
    assert [(node.level, node.title) for node in check.flatten(document.outline)][:3] == [
        (2, "Storing Keys with Associated Values in Hash Maps"),
        (3, "Creating a New Hash Map"),
        (3, "Accessing Values in a Hash Map"),
    ]
    assert len(check.flatten(document.outline)) == 10


def test_setext_headings_and_hashes_in_code(tmp_path: Path, check):
    source = tmp_path / "notes.md"
    source.write_text(
        "Release notes\n=============\n\nIntro text.\n\nInstalling\n----------\n\n"
        "```sh\n# not a heading\nmake install\n```\n\n### Details *here*\n\nBody.\n",
        encoding="utf-8",
    )
    document = extract_file(source)
    nodes = check.flatten(document.outline)
    assert [(node.level, node.title) for node in nodes] == [
        (1, "Release notes"),
        (2, "Installing"),
        (3, "Details here"),
    ]
    assert document.title == "Release notes"
    assert "# not a heading" in document.lines
    check.outline_points_at_titles(document)


def test_an_empty_note_is_a_note_named_by_its_file_with_a_warning(corpus):
    document = extract_file(corpus / "odd/empty-note.md")
    assert (document.lines, document.title, document.doc_type) == ([], "empty-note", "md")
    assert document.warnings == ["empty file (0 bytes): indexed by its name, without text"]


def test_lines_are_the_files_own_lines(corpus):
    path = corpus / "notes/learning-rust/ch04-01-what-is-ownership.md"
    from linkly_ls.core.extract import extract_file

    document = extract_file(path)
    source = path.read_text(encoding="utf-8").splitlines()
    assert len(document.lines) == len(source)
    assert document.lines[457] == source[457] == "### Ownership and Functions"
    differing = [b for a, b in zip(document.lines, source) if a != b.rstrip()]
    assert differing and all("<" in line or "-->" in line for line in differing), "only tags and comments go"
    assert "section of Chapter 5" in document.lines[166], "text after a closing comment stays"


def test_front_matter_keeps_its_line_count_and_title_values(corpus):
    from linkly_ls.core.extract import extract_file

    path = corpus / "notes/web-dev/astro-docs/fr/concepts/islands.mdx"
    document = extract_file(path)
    source = path.read_text(encoding="utf-8").splitlines()
    assert len(document.lines) == len(source)
    assert document.lines[0] == "" and document.lines[1] == "Architecture en îlots"
    assert document.title == "Architecture en îlots"
    assert "import" not in document.lines[6] and document.lines[6] == ""


def test_heading_titles_keep_text_code_and_link_text_but_not_markup_or_html(tmp_path: Path, check):
    source = tmp_path / "titles.md"
    source.write_text(
        "# The `match` [construct](ch06.md) &amp; <span>more</span>\n\n"
        "> ## Quoted heading {#quoted}\n\n"
        "- ### Heading in a list\n\n"
        "A setext heading\nover two lines\n---\n\n"
        "    # indented code, no heading\n\n"
        "Ünïcode before\n\n## Après\n",
        encoding="utf-8",
    )
    document = extract_file(source)
    nodes = check.flatten(document.outline)
    assert [(node.level, node.title, node.start_line) for node in nodes] == [
        (1, "The match construct & more", 1),
        (2, "Quoted heading", 3),
        (3, "Heading in a list", 5),
        (2, "A setext heading over two lines", 7),
        (2, "Après", 15),
    ]


def test_a_parser_failure_leaves_the_document_without_an_outline(tmp_path: Path, monkeypatch):
    from linkly_ls.core.extract import markdown

    class Panic(BaseException):
        """How pyo3 raises a Rust panic: not an `Exception`."""

    def panicking(text, **options):
        raise Panic("index out of bounds")

    monkeypatch.setattr(markdown.pyromark, "events_with_range", panicking)
    source = tmp_path / "notes.md"
    source.write_text("# Title\n\nSome text about [links](other.md).\n", encoding="utf-8")
    document = extract_file(source)
    assert document.outline == []
    assert document.lines[2] == "Some text about [links](other.md)."
    assert [link.target for link in document.links] == ["other.md"]
    assert document.warnings == ["headings could not be read, so the document has no outline (Panic: index out of bounds)"]


def test_a_lone_surrogate_does_not_stop_the_headings(tmp_path: Path):
    from linkly_ls.core.extract.markdown import find_headings

    assert find_headings(["# Caf\udce9", "", "text", "## Next"]) == {0: (1, "Caf?", 1), 3: (2, "Next", 4)}


def test_the_outline_of_unsaved_lines_is_the_outline_extract_finds():
    from linkly_ls.core.extract.markdown import outline_of

    for path in sorted((Path(__file__).resolve().parents[3] / "fixtures" / "notes" / "rust").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        extracted = extract_file(path)
        assert outline_of(text.removesuffix("\n").split("\n")) == extracted.outline, path.name
    typed = outline_of(["---", "title: x", "---", "# One", "", "## Two"])
    assert [(node.title, node.start_line) for node in typed] == [("One", 4)] and typed[0].children[0].start_line == 6


def test_a_heading_shows_its_wikilinks_as_obsidian_does():
    from linkly_ls.core.extract.markdown import find_headings

    titles = [title for _, title, _ in find_headings(
        ["## Heading with [[Bob Smith]] link", "## With [[Bob Smith|Bob]] alias", "## Arrays [deprecated]",
         "## Note [[Project#Part]] x"]
    ).values()]
    assert titles == ["Heading with Bob Smith link", "With Bob alias", "Arrays [deprecated]", "Note Project > Part x"]


def test_code_keeps_its_tags_and_an_anchor_tag_its_id(tmp_path: Path):
    """A Maven example in an indented block read as empty lines, and the code spans of a line opening with
    a component (`<ReadMore>… [`<Image />`]…`) lost their text; `<a name="x">` left no anchor to link to."""
    note = tmp_path / "guide.md"
    note.write_text(
        "# Guide\n\nAdd it:\n\n    <project>\n      <groupId>com.example</groupId>\n    </project>\n\n"
        "<ReadMore>See [`<Image />`](/ref#image) and <b>more</b>.</ReadMore>\n"
        "<a name=\"LEGACY_OPTION\"><div>&nbsp;</div></a>\n\n## Install the tool { #install }\n\n"
        "## Configure {: #configure .important }\n\n<p align=\"center\">\n    <img src=\"logo.png\">\n</p>\n",
        encoding="utf-8",
    )
    document = extract_file(note)
    lines = document.lines
    assert lines[4:7] == ["    <project>", "      <groupId>com.example</groupId>", "    </project>"]
    assert lines[8] == "See [`<Image />`](/ref#image) and more."
    assert lines[9] == "" and lines[16] == "" and "&nbsp;" not in "\n".join(lines)
    assert [node.title for node in document.outline[0].children] == ["Install the tool", "Configure"]
    assert document.anchors == {"LEGACY_OPTION": 10, "install": 12, "configure": 14}
    mdx = tmp_path / "deck.mdx"
    mdx.write_text("<Tabs>\n    <TabItem value=\"a\">\n    Text\n    </TabItem>\n</Tabs>\n", encoding="utf-8")
    assert extract_file(mdx).lines == ["", "", "    Text", "", ""], "MDX: an indented line is JSX, not code"


def test_docusaurus_two_admonition_titles_and_a_md_files_imports_are_scaffolding(tmp_path: Path):
    """`:::warning Old style title` stayed as text (snippets read `:::**warning** Old style title`), and a
    `.md` page that Docusaurus reads as MDX kept `import Tabs from '@theme/Tabs';` as text."""
    note = tmp_path / "install.md"
    note.write_text(
        "# Install\n\nimport Tabs from '@theme/Tabs';\nimport TabItem from \"@theme/TabItem\"\n\n"
        ":::warning Old style title\n\nCareful.\n\n:::\n\nimport this sentence from the prose stays.\n",
        encoding="utf-8",
    )
    lines = extract_file(note).lines
    assert lines[2:4] == ["", ""] and lines[5] == "Old style title" and lines[9] == ""
    assert lines[11] == "import this sentence from the prose stays."


def test_mdx_tags_and_comments_over_several_lines_are_scaffolding(tmp_path: Path):
    """prettier writes a JSX element with three or more props over several lines: its props (and a
    multi-line `{/* ... */}` comment) were indexed as text, and the comment's words found by search."""
    page = tmp_path / "jsx.mdx"
    page.write_text(
        "# Cards\n\n{/*\n  A comment: SECRETCOMMENTWORD\n*/}\n\n<Card\n  title=\"Quick start\"\n  href=\"/docs/quick\"\n"
        "  onClick={() => go()}\n/>\nText after. {/* inline */} visible\n",
        encoding="utf-8",
    )
    lines = extract_file(page).lines
    assert "SECRETCOMMENTWORD" not in "\n".join(lines) and "href" not in "\n".join(lines)
    assert lines[2:11] == [""] * 9 and lines[11] == "Text after.  visible"
