"""Places a fragment names inside a note besides its headings: Obsidian blocks."""

from __future__ import annotations

from linkly_ls.core.links.anchors import block_ids, block_line

NOTE = [
    "# Plan",
    "",
    "Ship the beta by May. ^ship-date",
    "",
    "| a | b |",
    "| 1 | 2 |",
    "",
    "^table-1",
    "x ^ y is xor",
    "See ^not-at-the-end of this line",
]


def test_block_ids_name_each_marked_block_and_its_line():
    assert block_ids(NOTE) == [("ship-date", 3), ("table-1", 6)]


def test_block_ids_and_block_line_agree():
    for block_id, line in block_ids(NOTE):
        assert block_line(NOTE, block_id) == line
    assert block_line(NOTE, "not-at-the-end") is None


def test_links_reach_the_anchors_a_note_sets_by_html_or_by_an_attribute_list(tmp_path):
    """serverless' deprecations page sets `<a name="X"><div>&nbsp;</div></a>` before each entry and MkDocs
    Material teaches `## Title { #id }`: links to them were broken (the indexed line keeps no tag)."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.links.resolver import LinkResolver

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "anchors.md").write_text(
        "# Anchors\n\n<a name=\"LEGACY_OPTION\"><div>&nbsp;</div></a>\n\n## Legacy option\n\n"
        "<span id=\"span-anchor\">Span</span>\n\n## Install { #install }\n", encoding="utf-8"
    )
    (tmp_path / "docs" / "links.md").write_text(
        "[a](anchors.md#LEGACY_OPTION) [b](anchors.md#span-anchor) [c](anchors.md#install) [d](anchors.md#nowhere)\n",
        encoding="utf-8",
    )
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="docs", paths=[tmp_path / "docs"])]))
    try:
        engine.index()
        source = engine.catalog.by_path(str(tmp_path / "docs" / "links.md"))
        found = {link.target.split("#")[1]: (link.status, link.target_line) for link in LinkResolver(engine.catalog).links_of(source)}
        assert found == {"LEGACY_OPTION": ("ok", 3), "span-anchor": ("ok", 7), "install": ("ok", 9), "nowhere": ("missing_heading", 1)}
    finally:
        engine.close()


def test_a_link_to_a_symlinked_page_leads_to_the_file_it_names(tmp_path):
    """MkDocs sites link `changelog.md`, a symbolic link to `../CHANGELOG.md`: it read as `unindexed`, and
    its anchors went unchecked."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.links.resolver import LinkResolver

    site = tmp_path / "site"
    (site / "docs").mkdir(parents=True)
    (site / "CHANGELOG.md").write_text("# Changelog\n\n## 1.0\n\nFirst.\n", encoding="utf-8")
    (site / "docs" / "changelog.md").symlink_to("../CHANGELOG.md")
    (site / "docs" / "index.md").write_text("[log](changelog.md#10) [gone](changelog.md#nope)\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="site", paths=[site])]))
    try:
        engine.index()
        source = engine.catalog.by_path(str(site / "docs" / "index.md"))
        found = {link.target: (link.status, link.path) for link in LinkResolver(engine.catalog).links_of(source)}
        assert found == {
            "changelog.md#10": ("ok", str(site / "CHANGELOG.md")),
            "changelog.md#nope": ("missing_heading", str(site / "CHANGELOG.md")),
        }
    finally:
        engine.close()
