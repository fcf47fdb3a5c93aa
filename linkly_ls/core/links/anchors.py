"""Places inside a note that a link's fragment names besides its headings: an explicit anchor
(`{#install}`, `<a id="install">`) or an Obsidian block (`^abc123` at the end of a paragraph or list
item, or on a line of its own after a table or a quote, for the block above it)."""

from __future__ import annotations

import re


def explicit_anchor_line(lines: list[str], fragment: str) -> int | None:
    """The 1-based line holding `{#fragment}` or an `id`/`name` attribute of that value, if any."""
    wanted = re.compile(r"\{#" + re.escape(fragment) + r"\}|\b(?:id|name)\s*=\s*[\"']" + re.escape(fragment) + r"[\"']")
    for number, line in enumerate(lines, start=1):
        if fragment in line and wanted.search(line):
            return number
    return None


def block_line(lines: list[str], block_id: str) -> int | None:
    """The 1-based line of the block `^block_id` marks: the line it ends, or for a marker on a line of its
    own, the last line of text above it."""
    marker = "^" + block_id
    ending = re.compile(r"(?:^|\s)" + re.escape(marker) + r"\s*$")
    for number, line in enumerate(lines, start=1):
        if marker in line and ending.search(line):
            if line.strip() != marker:
                return number
            above = next((row for row in range(number - 1, 0, -1) if lines[row - 1].strip()), None)
            return above or number
    return None
