"""Front matter read without a YAML parser: scalars, block scalars, quotes, and what is not front matter."""

from __future__ import annotations

import pytest

from linkly_ls.core.extract.front_matter import front_matter_aliases, front_matter_lines, parse_front_matter


def test_scalars_quotes_and_block_scalars_with_the_first_body_line() -> None:
    lines = [
        "---",
        'title: "Vacuum: a guide"',
        "tags:",
        "  - db",
        "description: >",
        "  Folded over",
        "  two lines",
        "draft: false",
        "---",
        "# Body",
    ]
    fields, body_start = parse_front_matter(lines)
    assert fields == {"title": "Vacuum: a guide", "tags": "", "description": "Folded over two lines", "draft": "false"}
    assert lines[body_start] == "# Body"


def test_no_front_matter_without_the_opening_or_closing_fence() -> None:
    assert parse_front_matter(["# Title", "---"]) == ({}, 0)
    assert parse_front_matter(["---", "title: never closed", "text"]) == ({}, 0)
    assert parse_front_matter([]) == ({}, 0)


def test_a_fence_pair_with_no_keys_is_a_thematic_break_not_front_matter() -> None:
    assert parse_front_matter(["---", "just text", "---", "more"]) == ({}, 0)


def test_first_key_wins_and_the_yaml_end_marker_closes() -> None:
    fields, body_start = parse_front_matter(["---", "title: one", "title: two", "...", "body"])
    assert fields == {"title": "one"}
    assert body_start == 4


def test_titles_descriptions_names_and_tags_are_shown_as_text_and_the_rest_is_not() -> None:
    lines = [
        "---", "title: 'Quoted'", "description: plain words", "tags: [a, \"b/c\"]", "aliases:", "  - Bob",
        "  - \"Robert Smith\"", "created: 2026-12-07", "cssclasses:", "  - wide", "---", "# Body",
    ]
    assert front_matter_lines(lines, 11) == [
        "", "Quoted", "plain words", "a, b/c", "", "Bob", "Robert Smith", "", "", "", "",
    ]


@pytest.mark.parametrize(
    ("front", "aliases"),
    [
        (["aliases: [Home, \"Start page\", 'A, b']"], ["Home", "Start page", "A, b"]),
        (["aliases:", "  - Home", "  - \"Edgy one\"", "tags: [x]"], ["Home", "Edgy one"]),
        (["alias: Home, Start"], ["Home", "Start"]),
        (["aliases: []", "title: T"], []),
        (["title: T"], []),
    ],
)
def test_aliases_are_read_in_each_way_obsidian_writes_them(front, aliases):
    assert front_matter_aliases(["---", *front, "---", "# Body", "aliases: [Not, These]"]) == aliases
