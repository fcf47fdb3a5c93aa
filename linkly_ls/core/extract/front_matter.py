"""YAML front matter of Markdown and text files, read without a YAML or Markdown parser.

Its own module so that what only needs the front matter (plain-text extraction,
the language server's link context) does not import the Markdown parser.
"""

from __future__ import annotations

import re

FRONT_MATTER_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$")


#: front matter keys whose value is shown as text (the value alone)
_SHOWN_VALUES = ("title", "description")
#: keys shown as `key: values`, with their list items: the names and tags a note is searched by
_SHOWN_LISTS = ("aliases", "alias", "tags", "tag", "keywords")


def front_matter_lines(lines: list[str], body_start: int) -> list[str]:
    """The text a document shows for each line of its front matter (`lines[:body_start]`): the value of
    `title:` and `description:`, the items of `aliases:` and `tags:` (`Bob, Robert Smith`, or one a line
    for a block list), and "" for the rest, which is structure, not text (nor are the keys: `tags` would
    be every note's keyword)."""
    shown: list[str] = []
    listing = False
    for line in lines[:body_start]:
        match = FRONT_MATTER_KEY.match(line)
        if match:
            key, value = match.group(1), match.group(2).strip()
            listing = key in _SHOWN_LISTS
            if key in _SHOWN_VALUES:
                shown.append(_unquoted(value))
            else:
                shown.append(", ".join(_list_items(value)) if listing and value else "")
        elif listing and line.lstrip().startswith("- "):
            shown.append(_unquoted(line.lstrip()[2:].strip()))
        else:
            listing = listing and not line.strip() == "---"
            shown.append("")
    return shown


def _list_items(value: str) -> list[str]:
    """`[Home, "Start page"]` or `Home, Start` as its items."""
    if value.startswith("[") and value.endswith("]"):
        items = [next(part for part in found.groups() if part is not None) for found in _FLOW_ITEM.finditer(value[1:-1])]
    else:
        items = _unquoted(value).split(",")
    return [item.strip() for item in items if item.strip()]


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
        else:
            value = _unquoted(value)
        fields.setdefault(key, value)
    if not fields:
        return {}, 0
    return fields, end + 1


_FLOW_ITEM = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([^,]*))\s*(?:,|$)""")


def front_matter_aliases(lines: list[str]) -> list[str]:
    """The names under `aliases:` (or `alias:`) of a front matter block (`lines` up to the body): a flow
    list (`[Home, "Start page"]`), a block list (`- Home` lines), or one value, which may list names
    with commas (`Home, Start`) as older Obsidian notes do."""
    _, body_start = parse_front_matter(lines)
    names: list[str] = []
    index = 1
    while index < body_start - 1:
        match = FRONT_MATTER_KEY.match(lines[index])
        index += 1
        if not match or match.group(1) not in ("aliases", "alias"):
            continue
        names += _list_items(match.group(2).strip())
        while index < body_start - 1 and lines[index].lstrip().startswith("- "):
            names.append(_unquoted(lines[index].lstrip()[2:].strip()))
            index += 1
    return list(dict.fromkeys(name.strip() for name in names if name.strip()))


def _unquoted(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value
