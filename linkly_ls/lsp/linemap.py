"""From the catalog's canonical lines to the lines of the file an editor shows.

Markdown and text documents keep the file's own lines (scaffolding blanked,
trailing spaces dropped), so their positions map one to one; HTML becomes its
visible text, and a file edited since it was indexed has moved lines. For
those, a `file:` location is found again by the line's text.
"""

from __future__ import annotations

import bisect
import html
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from linkly_ls.core.document import Heading, OutlineNode, build_outline
from linkly_ls.core.extract.base import decode_text

MAX_SOURCE_BYTES = 16 * 2**20
NEIGHBOURS = 3
_TAG = re.compile(r"<[^>]*>")
_NOT_WORD = re.compile(r"[\W_]+")
_HEADING_TAG = re.compile(r"<h[1-6][\s>]", re.I)


def normalise(text: str) -> str:
    """Words only, case-folded, without HTML tags or Markdown markup: what survives extraction."""
    text = html.unescape(_TAG.sub(" ", text)) if "<" in text or "&" in text else text
    return " ".join(_NOT_WORD.sub(" ", text.casefold()).split())


@dataclass
class SourceText:
    lines: list[str]
    normalised: list[str]


class SourceFiles:
    """Lines of recently used files (as read and normalised), keyed by path and modification time."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._cache: OrderedDict[tuple[str, int], SourceText] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str) -> SourceText | None:
        file = Path(path)
        try:
            stat = file.stat()
            if stat.st_size > MAX_SOURCE_BYTES:
                return None
            key = (path, stat.st_mtime_ns)
            with self._lock:
                cached = self._cache.get(key)
                if cached is not None:
                    self._cache.move_to_end(key)
                    return cached
            text, _encoding = decode_text(file.read_bytes())
        except OSError:
            return None
        lines = text.split("\n")
        source = SourceText(lines=lines, normalised=[normalise(line) for line in lines])
        with self._lock:
            self._cache[key] = source
            while len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return source


#: the server's one cache of files' own lines (workspace symbols and link positions both place lines there)
SOURCES = SourceFiles()


def read_source(path: str) -> list[str] | None:
    """A file's own lines as read from disk now (recently read ones cached), None when unreadable or huge."""
    source = SOURCES.get(path)
    return source.lines if source is not None else None


def same_lines(canonical: list[str], buffer_lines: list[str]) -> bool:
    """True when the buffer is the indexed text line for line (the usual case for Markdown and text)."""
    trimmed = [line.rstrip() for line in buffer_lines]
    while trimmed and trimmed[-1] == "" and len(trimmed) > len(canonical):
        trimmed.pop()
    return trimmed == canonical


def source_line(canonical: list[str], source: list[str], line: int) -> int:
    """The 1-based line of the file (`source`: its normalised lines) holding canonical line `line`.

    Candidates are the file lines containing the line's words; the one whose
    neighbours above and below also match the canonical ones wins, the nearest to the
    canonical position breaking ties. Falls back to `line` when nothing matches.
    """
    if not canonical or not source:
        return line
    index = min(max(line, 1), len(canonical)) - 1
    window = range(max(index - NEIGHBOURS, 0), min(index + NEIGHBOURS + 1, len(canonical)))
    if all(j < len(source) and normalise(canonical[j]) == source[j] for j in window):
        return line
    anchor = index
    while anchor > 0 and not normalise(canonical[anchor]):
        anchor -= 1
    target = normalise(canonical[anchor])
    if not target:
        return line
    candidates = [j for j, text in enumerate(source) if target in text]
    if not candidates:
        return line
    before = [normalise(text) for text in canonical[max(anchor - NEIGHBOURS, 0) : anchor]]
    after = [normalise(text) for text in canonical[anchor + 1 : anchor + 1 + NEIGHBOURS]]

    def score(j: int) -> tuple[int, int]:
        above = source[max(j - 2 * NEIGHBOURS, 0) : j]
        below = source[j + 1 : j + 1 + 2 * NEIGHBOURS]
        matched = sum(1 for text in before if text and any(text in near for near in above))
        matched += sum(1 for text in after if text and any(text in near for near in below))
        return matched, -abs(j - anchor)

    best = max(candidates, key=score)
    return min(best + (index - anchor), len(source) - 1) + 1


def anchor_outline(nodes: list[OutlineNode], buffer_lines: list[str]) -> list[OutlineNode]:
    """Re-place an outline on the buffer lines where its titles stand (Markdown markup, HTML source).

    Titles are searched in document order, an HTML heading tag's line holding the title first, then a
    line that is just the title (`### The String Type`), then one that mentions it; a title that is
    not found goes after the previous heading, so order and nesting never break.
    """
    flat: list[OutlineNode] = []

    def walk(items: list[OutlineNode]) -> None:
        for item in items:
            flat.append(item)
            walk(item.children)

    walk(nodes)
    normalised = [normalise(line) for line in buffer_lines]
    tagged = [number for number, line in enumerate(buffer_lines) if "<" in line and _HEADING_TAG.search(line)]
    headings: list[Heading] = []
    cursor = 0
    for node in flat:
        title = normalise(node.title)
        # an HTML heading's own line, not the sidebar's or the contents' entry naming it above
        found = next((i for i in tagged[bisect.bisect_left(tagged, cursor) :] if title and title in normalised[i]), None)
        if found is None:
            found = next((i for i in range(cursor, len(normalised)) if title and title == normalised[i]), None)
        if found is None:
            found = next((i for i in range(cursor, len(normalised)) if title and title in normalised[i]), None)
        line = found if found is not None else min(cursor, max(len(buffer_lines) - 1, 0))
        headings.append(Heading(level=node.level, title=node.title, line=line + 1))
        if found is not None:
            cursor = found + 1
    return build_outline(headings, len(buffer_lines))
