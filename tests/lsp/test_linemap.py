"""Placing canonical lines and outlines back on the lines of the file an editor shows."""

from __future__ import annotations

from linkly_ls.core.document import Heading, build_outline
from linkly_ls.lsp.linemap import anchor_outline, normalise, source_line

MARKDOWN = """---
title: Notes
---
# Notes

Some **bold** text and a [link](https://example.org).



## The `String` Type

Intro mentioning the string type in passing.

```rust
fn main() {}
```

## Summary

fn main() {}
""".split("\n")

CANONICAL = [
    "# Notes",
    "",
    "Some bold text and a link.",
    "",
    "## The String Type",
    "",
    "Intro mentioning the string type in passing.",
    "",
    "```rust",
    "fn main() {}",
    "```",
    "",
    "## Summary",
    "",
    "fn main() {}",
]


def test_normalise_drops_markup_and_tags() -> None:
    assert normalise("## The `String` Type") == "the string type"
    assert normalise('<h2 id="x">Caf&eacute; <em>au</em> lait</h2>') == "café au lait"


def test_source_line_follows_front_matter_and_folded_blank_lines() -> None:
    source = [normalise(line) for line in MARKDOWN]
    assert MARKDOWN[source_line(CANONICAL, source, 3) - 1].startswith("Some **bold**")
    assert MARKDOWN[source_line(CANONICAL, source, 5) - 1] == "## The `String` Type"
    assert source_line(CANONICAL, source, 10) == 15  # the first `fn main() {}`, by its neighbours
    assert source_line(CANONICAL, source, 15) == 20  # the second one


def test_anchor_outline_prefers_heading_lines_over_mentions() -> None:
    outline = build_outline(
        [Heading(1, "Notes", 1), Heading(2, "The String Type", 5), Heading(2, "Summary", 13)], len(CANONICAL)
    )
    anchored = anchor_outline(outline, MARKDOWN)
    (notes,) = anchored
    assert (notes.start_line, notes.end_line) == (4, len(MARKDOWN))
    assert [(child.title, child.start_line, child.end_line) for child in notes.children] == [
        ("The String Type", 10, 17),
        ("Summary", 18, len(MARKDOWN)),
    ]


def test_anchor_outline_on_html_source() -> None:
    page = [
        "<html><body>",
        "<h1>Guide</h1>",
        "<p>text</p>",
        '<h2 class="x">Install <code>pip</code></h2>',
        "<p>more</p>",
    ]
    outline = build_outline([Heading(1, "Guide", 1), Heading(2, "Install pip", 3)], 4)
    (guide,) = anchor_outline(outline, page)
    assert guide.start_line == 2 and guide.children[0].start_line == 4


def test_html_headings_are_placed_on_their_tags_not_on_the_contents_entries_above():
    """Sphinx and Node pages list every section in a contents block first: the symbols jumped there."""
    source = [
        "<ul>",
        '<li><a href="#">Logging HOWTO</a><ul>',
        '<li><a href="#when">When to use logging</a></li>',
        "</ul></li></ul>",
        '<h1>Logging HOWTO<a class="headerlink" href="#logging-howto">¶</a></h1>',
        "<p>Text.</p>",
        '<section><h3>When to use logging<a class="headerlink" href="#when">¶</a></h3>',
    ]
    outline = build_outline([Heading(level=1, title="Logging HOWTO", line=1), Heading(level=3, title="When to use logging", line=3)], 4)
    placed = anchor_outline(outline, source)
    assert [(node.title, node.start_line) for node in placed + placed[0].children] == [("Logging HOWTO", 5), ("When to use logging", 7)]
