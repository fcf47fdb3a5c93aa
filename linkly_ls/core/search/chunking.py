"""Cut a document into passages by its structure (sections, pages, slides).

A chunk never spans two documents, starts a new chunk at every heading and page
boundary, and is cut at blank lines to stay near `target_words`, so a passage
embeds well (about 120-180 words) and a keyword hit points at a small line range.
"""

from __future__ import annotations

from dataclasses import dataclass

from linkly_ls.core.search.analysis import CJK_RUN
from linkly_ls.core.document import OutlineNode

TARGET_WORDS = 150
MAX_WORDS = 220


@dataclass
class Chunk:
    number: int
    start_line: int
    end_line: int
    headings: str
    text: str


def _section_starts(outline: list[OutlineNode]) -> dict[int, str]:
    """line -> heading path ("Chapter 2 > Installing") for every outline node."""
    starts: dict[int, str] = {}

    def walk(nodes: list[OutlineNode], trail: tuple[str, ...]) -> None:
        for node in nodes:
            path = trail + (node.title,)
            starts.setdefault(node.start_line, " > ".join(path))
            walk(node.children, path)

    walk(outline, ())
    return starts


def chunk_document(
    lines: list[str],
    outline: list[OutlineNode],
    page_starts: list[int],
    target_words: int = TARGET_WORDS,
    max_words: int = MAX_WORDS,
) -> list[Chunk]:
    sections = _section_starts(outline)
    boundaries = set(sections) | set(page_starts)
    chunks: list[Chunk] = []
    current_heading = ""
    buffer: list[str] = []
    start = 1
    words = 0

    def flush(end_line: int) -> None:
        nonlocal buffer, words
        text = "\n".join(line for line in buffer if line)
        if text.strip():
            chunks.append(
                Chunk(
                    number=len(chunks),
                    start_line=start,
                    end_line=end_line,
                    headings=current_heading,
                    text=text,
                )
            )
        buffer = []
        words = 0

    for number, line in enumerate(lines, start=1):
        if number in boundaries and buffer:
            flush(number - 1)
        if not buffer:
            start = number
        if number in sections:
            current_heading = sections[number]
        line_words = len(line.split())
        if not line.isascii():  # CJK characters count as half a word each
            line_words += sum(len(run) for run in CJK_RUN.findall(line)) // 2
        if buffer and words + line_words > max_words:
            flush(number - 1)
            start = number
        buffer.append(line)
        words += line_words
        if words >= target_words and not line.strip():
            flush(number)
    if buffer:
        flush(len(lines))
    return chunks
