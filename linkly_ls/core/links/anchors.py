"""Places inside a note that a link's fragment names besides its headings: an explicit anchor
(`{#install}`, `<a id="install">`) or an Obsidian block (`^abc123` at the end of a paragraph or list
item, or on a line of its own after a table or a quote, for the block above it)."""

from __future__ import annotations

import re


def explicit_anchor_line(lines: list[str], fragment: str) -> int | None:
    """The 1-based line holding `{#fragment}` (or an attribute list naming it: MkDocs' `{ #fragment }`,
    `{: #fragment .class }`) or an `id`/`name` attribute of that value, if any."""
    wanted = re.compile(
        r"\{:?\s*(?:[^{}]*\s)?#" + re.escape(fragment) + r"(?=[\s}])[^{}]*\}"
        r"|\b(?:id|name)\s*=\s*[\"']" + re.escape(fragment) + r"[\"']"
    )
    for number, line in enumerate(lines, start=1):
        if fragment in line and wanted.search(line):
            return number
    return None


#: an Obsidian block id ending a line: letters, digits and hyphens after a caret
_BLOCK_MARKER = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)\s*$")


def block_line(lines: list[str], block_id: str) -> int | None:
    """The 1-based line of the block `^block_id` marks: the line it ends, or for a marker on a line of its
    own, the last line of text above it."""
    marker = "^" + block_id
    ending = re.compile(r"(?:^|\s)" + re.escape(marker) + r"\s*$")
    for number, line in enumerate(lines, start=1):
        if marker in line and ending.search(line):
            return _marked_line(lines, number, marker)
    return None


def block_ids(lines: list[str]) -> list[tuple[str, int]]:
    """Every block id the note marks, in order, with the 1-based line of its block (as `block_line`)."""
    found: list[tuple[str, int]] = []
    for number, line in enumerate(lines, start=1):
        if "^" in line and (marker := _BLOCK_MARKER.search(line)):
            found.append((marker.group(1), _marked_line(lines, number, "^" + marker.group(1))))
    return found


def _marked_line(lines: list[str], number: int, marker: str) -> int:
    """The block `marker` on line `number` names: that line, or for a marker alone on its line the last line
    of text above it."""
    if lines[number - 1].strip() != marker:
        return number
    above = next((row for row in range(number - 1, 0, -1) if lines[row - 1].strip()), None)
    return above or number
