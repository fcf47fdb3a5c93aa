"""Completion of link targets: what a wikilink writes to name a note."""

from __future__ import annotations

from linkly_ls.lsp.features.link_completion import wiki_names


def test_wikilink_names_tell_notes_of_one_name_apart():
    names = wiki_names(["/docs/en/basics/intro.md", "/docs/zh-cn/basics/intro.md", "/docs/en/setup.md", "/notes/intro.mdx"])
    assert names == {
        "/docs/en/basics/intro.md": "en/basics/intro",
        "/docs/zh-cn/basics/intro.md": "zh-cn/basics/intro",
        "/docs/en/setup.md": "setup",
        "/notes/intro.mdx": "notes/intro",
    }


def test_wikilink_names_of_other_files_keep_their_suffix():
    """Obsidian writes `[[paper.pdf]]` and `![[diagram.png]]`: a PDF beside a note of its name is not the note."""
    names = wiki_names(["/v/paper.md", "/v/paper.pdf", "/v/img/diagram.png", "/v/old/diagram.png"])
    assert names == {
        "/v/paper.md": "paper",
        "/v/paper.pdf": "paper.pdf",
        "/v/img/diagram.png": "img/diagram.png",
        "/v/old/diagram.png": "old/diagram.png",
    }
