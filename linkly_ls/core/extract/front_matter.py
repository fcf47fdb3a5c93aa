"""YAML front matter of Markdown and text files, read without a YAML or Markdown parser.

Its own module so that what only needs the front matter (plain-text extraction,
the language server's link context) does not import the Markdown parser.
"""

from __future__ import annotations

import re

FRONT_MATTER_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")


def front_matter_text(line: str) -> str:
    """The value of a front matter `title:` or `description:` line, else "" (such lines are shown as text)."""
    match = FRONT_MATTER_KEY.match(line)
    if match and match.group(1) in ("title", "description"):
        value = match.group(2).strip()
        return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value
    return ""


def parse_front_matter(lines: list[str]) -> tuple[dict[str, str], int]:
    """Top-level `key: value` pairs of a YAML front matter block, and the index of the first body line.

    Only scalars are read (quoted, plain or `>`/`|` block scalars); nested
    structures are skipped. Without front matter the result is ({}, 0).
    """
    if not lines or lines[0].strip() != "---":
        return {}, 0
    end = next(
        (index for index in range(1, min(len(lines), 500)) if lines[index].strip() in ("---", "...")),
        None,
    )
    if end is None:
        return {}, 0
    fields: dict[str, str] = {}
    index = 1
    while index < end:
        match = FRONT_MATTER_KEY.match(lines[index])
        index += 1
        if not match:
            continue
        key, value = match.group(1), match.group(2).strip()
        if value[:1] in (">", "|"):
            block = []
            while index < end and (not lines[index].strip() or lines[index][:1] in (" ", "\t")):
                block.append(lines[index].strip())
                index += 1
            value = " ".join(part for part in block if part)
        elif len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        fields.setdefault(key, value)
    if not fields:
        return {}, 0
    return fields, end + 1
