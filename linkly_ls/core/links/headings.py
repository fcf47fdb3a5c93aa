"""A document's headings as links name them: by anchor (`heading_slug`, with the `-1` / `_1` of a
repeated heading) or by title (`HeadingIndex`), and its sections by line (`SectionIndex`). Each index
is built once per target document: a long reference is linked hundreds of times.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Callable

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.provenance import PAGE_MARKER
from linkly_ls.core.links.targets import heading_slug, loose_heading_slug

#: a heading's number ("2.3 ", "A.1 ", "Appendix B "), which a destination named by the heading leaves out
_HEADING_NUMBER = re.compile(r"^(?:appendix\s+)?(?:\d+|[a-z])(?:\.\d+)*\.?\s+(?=\S)")
_NODE_REPEAT = re.compile(r"^(.+)_(\d+)$")
#: lines a destination may sit above the section it opens, and the longest such label line
LABEL_LINES = 3
LABEL_CHARS = 30


def _is_label(text: str) -> bool:
    """A line that labels the heading below it (`Chapter 2`, `Part I`), or a blank one: not a sentence, not a
    page marker (a destination on one page opens no section of the next)."""
    text = text.strip()
    return len(text) <= LABEL_CHARS and not text.endswith(".") and not PAGE_MARKER.match(text)


def flatten(nodes: list[OutlineNode]) -> list[OutlineNode]:
    flat: list[OutlineNode] = []
    for node in nodes:
        flat.append(node)
        flat.extend(flatten(node.children))
    return flat


def heading_anchors(nodes: list[OutlineNode], slug_of: Callable[[str], str] = heading_slug) -> list[tuple[str, OutlineNode]]:
    """(anchor, heading) in document order; a repeated anchor gets `-1`, `-2` as renderers do."""
    seen: dict[str, int] = {}
    anchors: list[tuple[str, OutlineNode]] = []
    for node in flatten(nodes):
        slug = slug_of(node.title)
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.append((slug if count == 0 else f"{slug}-{count}", node))
    return anchors


class HeadingIndex:
    """A document's headings by anchor and by title, built once for the links that name them.

    A long reference (hundreds of headings, hundreds of links into it) would
    otherwise compute every anchor again for each link.
    """

    def __init__(self, nodes: list[OutlineNode]) -> None:
        self.by_anchor: dict[str, OutlineNode] = {}
        self.by_title: dict[str, OutlineNode] = {}
        for anchor, node in heading_anchors(nodes):
            self.by_anchor.setdefault(anchor, node)
            self.by_title.setdefault(node.title.casefold(), node)
        for anchor, node in heading_anchors(nodes, loose_heading_slug):
            self.by_anchor.setdefault(anchor, node)
        self._by_unnumbered_title: dict[str, OutlineNode] | None = None

    def titled(self, title: str) -> OutlineNode | None:
        """The heading of that title, or of that title after its number ("2.3 Arrays" for "Arrays").

        How a PDF's named destination is found in it when none of its own links names it: Texinfo
        names each destination after its node, whose title is the section's
        (`R-FAQ.pdf#nameddest=R and Emacs`).
        """
        wanted = title.casefold()
        node = self.by_title.get(wanted)
        if node is None:
            if self._by_unnumbered_title is None:
                self._by_unnumbered_title = {}
                for key, titled in self.by_title.items():
                    self._by_unnumbered_title.setdefault(_HEADING_NUMBER.sub("", key), titled)
            node = self._by_unnumbered_title.get(wanted)
        return node

    def named(self, fragment: str, wiki: bool = False) -> OutlineNode | None:
        """The heading a link's fragment names: its anchor, or its title (as wikilinks write it, and as
        Obsidian writes a Markdown link's `#🚀%20Launch%20plan`), or for a heading path
        (`[[note#Parent#Child]]`) its last heading.

        A repeated heading's anchor takes `-1`, `-2` (GitHub, mdBook) or `_1`, `_2`
        (the Node.js documentation's generator); both spellings are understood.
        """
        wanted = unicodedata.normalize("NFC", fragment).casefold()  # an anchor typed decomposed names a composed heading
        repeated = _NODE_REPEAT.match(wanted)
        keys = [heading_slug(fragment) if wiki else wanted, wanted]
        if repeated:
            keys.append(f"{repeated.group(1)}-{repeated.group(2)}")
        node = next((self.by_anchor[key] for key in keys if key in self.by_anchor), None)
        if node is None:
            node = self.by_title.get(wanted) or self.by_title.get(" ".join(wanted.split()))
        if node is None and "#" in fragment.strip("#"):
            node = self.named(fragment.strip("#").rsplit("#", 1)[1], wiki)
        return node


def heading_named(nodes: list[OutlineNode], fragment: str, wiki: bool = False) -> OutlineNode | None:
    """`HeadingIndex(nodes).named(fragment, wiki)`, for one lookup."""
    return HeadingIndex(nodes).named(fragment, wiki)


class SectionIndex:
    """The sections of one outline by first line: `at(line)` is the innermost section holding it.

    Built once per target document: a PDF with thousands of internal links
    would otherwise walk its whole outline for every link.
    """

    def __init__(self, nodes: list[OutlineNode]) -> None:
        self.nodes = sorted(flatten(nodes), key=lambda node: node.start_line)  # stable: a child after its parent
        self.starts = [node.start_line for node in self.nodes]

    def at(self, line: int) -> OutlineNode | None:
        """Of the sections holding `line`, the one that starts last (the later, deeper one on a tie)."""
        for index in range(bisect_right(self.starts, line) - 1, -1, -1):
            if self.nodes[index].end_line >= line:
                return self.nodes[index]
        return None

    def opened_at(self, line: int, lines: list[str]) -> OutlineNode | None:
        """The section a link's destination at `line` opens: one that starts within LABEL_LINES after it
        with nothing but short label lines between (a PDF's `Chapter 2` above its bookmarked title `First
        steps`, where LaTeX puts the chapter's destination), else the one holding `line`."""
        index = bisect_left(self.starts, line)
        if index < len(self.starts) and self.starts[index] != line and self.starts[index] - line <= LABEL_LINES:
            between = lines[line - 1 : self.starts[index] - 1]
            if all(_is_label(text) for text in between):
                return self.nodes[index]
        return self.at(line)

