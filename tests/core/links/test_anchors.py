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
