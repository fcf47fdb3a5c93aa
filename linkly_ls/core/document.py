"""The canonical document: what every extractor produces and every tool reads.

A document is a list of text lines. `read` numbers them, `grep` matches them and
outline ranges point into them, so all three always agree.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass
class OutlineNode:
    """One section of a document. Lines are 1-based and inclusive."""

    title: str
    level: int
    start_line: int
    end_line: int = 0
    id: str = ""
    children: list[OutlineNode] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "level": self.level,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "children": [child.to_dict() for child in self.children],
        }

    @classmethod
    def from_dict(cls, data: dict) -> OutlineNode:
        return cls(
            title=data["title"],
            level=data["level"],
            start_line=data["start_line"],
            end_line=data["end_line"],
            id=data["id"],
            children=[cls.from_dict(child) for child in data.get("children", [])],
        )


@dataclass
class Link:
    """A link as written in a document: where it stands and what it points to.

    `line` is 1-based; `start`/`end` are character offsets in that line (0 and
    0 when the format gives no position, as in a PDF or DOCX). `target` is the
    raw target (a URL, a relative path with an optional #fragment, a wikilink
    name). `target_line` is set when the extractor itself knows the line the
    link leads to inside the same document (a PDF page, an EPUB chapter).
    """

    line: int
    target: str
    text: str = ""
    kind: str = "inline"
    start: int = 0
    end: int = 0
    target_line: int | None = None


@dataclass
class ExtractedDocument:
    """The text and structure of one file, as an extractor sees it.

    `warnings` are things a reader should know (text cut at a size cap, OCR
    unavailable, the file's content is another format than its name says).
    `text_missing_reason` is set when the file yielded no text at all but is
    still worth indexing by name (an image without OCR, a scanned PDF).
    `page_starts` holds the line number where each page (or slide, or chapter)
    begins, for chunking by structure. `links` are the document's links in
    document order.
    """

    lines: list[str]
    title: str
    doc_type: str
    outline: list[OutlineNode] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    text_missing_reason: str | None = None
    page_starts: list[int] = field(default_factory=list)
    language: str | None = None
    links: list[Link] = field(default_factory=list)
    #: other names a note goes by (front matter `aliases:`, as Obsidian writes them): a wikilink may name it by them
    aliases: list[str] = field(default_factory=list)
    #: the places a link's fragment may name besides headings: an HTML page's element ids and `<a name>`s ->
    #: the line where their text starts (`page.html#realroots` leads to the definition of realroots)
    anchors: dict[str, int] = field(default_factory=dict)


class ExtractionError(Exception):
    """A file could not be turned into a document; the message says why, for a person."""


@dataclass
class Heading:
    """A heading found while extracting: its level and the line it stands on (1-based)."""

    level: int
    title: str
    line: int


def build_outline(headings: list[Heading], total_lines: int, page_starts: Iterable[int] = ()) -> list[OutlineNode]:
    """Nest a flat, document-ordered list of headings into an outline tree.

    Each section runs until the line before the next heading of the same or a
    higher level (or the end of the document), or before the page marker just
    above that heading (`page_starts`: a slide's marker belongs to its slide). Ids are dotted positions
    ("1", "2.3"). Headings that point outside the document or backwards are
    clamped so a wrong bookmark can never produce an inverted range.
    """
    roots: list[OutlineNode] = []
    stack: list[OutlineNode] = []
    previous_line = 1
    for heading in headings:
        title = " ".join(heading.title.split())
        if not title:
            continue
        line = min(max(heading.line, previous_line, 1), max(total_lines, 1))
        previous_line = line
        node = OutlineNode(title=title, level=max(heading.level, 1), start_line=line)
        while stack and stack[-1].level >= node.level:
            stack.pop()
        if stack:
            stack[-1].children.append(node)
        else:
            roots.append(node)
        stack.append(node)
    _assign_ranges(roots, max(total_lines, 1), frozenset(page_starts))
    _assign_ids(roots, "")
    return roots


def _assign_ranges(nodes: list[OutlineNode], parent_end: int, page_starts: frozenset[int]) -> None:
    """Each node's end line; a child that starts past its parent's end (its bookmark points past the
    parent's next sibling) is moved to that end, so a section always holds its subsections."""
    for node in nodes:
        node.start_line = min(node.start_line, parent_end)
    for index, node in enumerate(nodes):
        if index + 1 < len(nodes):
            end = nodes[index + 1].start_line - 1
            if end in page_starts:
                end -= 1
            node.end_line = max(node.start_line, end)
        else:
            node.end_line = max(node.start_line, parent_end)
        _assign_ranges(node.children, node.end_line, page_starts)


def _assign_ids(nodes: list[OutlineNode], prefix: str) -> None:
    for index, node in enumerate(nodes, start=1):
        node.id = f"{prefix}{index}"
        _assign_ids(node.children, f"{node.id}.")


def count_outline_nodes(nodes: list[OutlineNode]) -> int:
    return sum(1 + count_outline_nodes(node.children) for node in nodes)


class LineBuilder:
    """Collects lines and headings while an extractor walks a file.

    Extractors call `heading()` for a section title (which is also a line of
    text), `text()` for body text (split on newlines, blank runs folded to one
    blank line), and `page()` to start a new page with a visible marker line.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.headings: list[Heading] = []
        self.page_starts: list[int] = []
        self.links: list[Link] = []

    @property
    def next_line(self) -> int:
        return len(self.lines) + 1

    def text(self, text: str) -> None:
        for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            line = raw.rstrip()
            if not line.strip():
                self.blank()
            else:
                self.lines.append(line)

    def blank(self) -> None:
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def heading(self, title: str, level: int) -> None:
        title = " ".join(title.split())
        if not title:
            return
        self.headings.append(Heading(level=level, title=title, line=self.next_line))
        self.lines.append(title)

    def page(self, marker: str) -> None:
        """Start a new page (slide, chapter) whose first line is `marker`."""
        self.blank()
        self.page_starts.append(self.next_line)
        self.lines.append(marker)

    def finish(self) -> tuple[list[str], list[OutlineNode]]:
        while self.lines and self.lines[-1] == "":
            self.lines.pop()
        return self.lines, build_outline(self.headings, len(self.lines), self.page_starts)
