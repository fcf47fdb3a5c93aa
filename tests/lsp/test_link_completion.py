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
