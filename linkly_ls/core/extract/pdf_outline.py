"""Outlines for PDFs: bookmarks placed on the lines where their titles stand, or headings found by font.

Bookmarks: each entry is looked up only on its own target page; its title is
matched against the page's lines (case, spacing and punctuation ignored), and
the bookmark's target point breaks ties and places entries whose title is not
on the page (wrong or generic bookmark titles).

Without bookmarks: lines clearly larger than the body text, or bold and
short, are headings; distinct sizes become levels 1-3 (largest first), and
running headers/footers repeated on many pages are ignored.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import pymupdf

from linkly_ls.core.document import Heading
from linkly_ls.core.extract.pdf_text import PdfLine, PdfPage, body_font_size

_NON_WORD = re.compile(r"[\W_]+")
_DOT_LEADER = re.compile(r"(\.\s?){4,}")
_DIGITS = re.compile(r"\d")

LARGE_FACTOR = 1.15
MAX_LEVELS = 3
MAX_HEADING_WORDS = 12


@dataclass
class Bookmark:
    level: int
    title: str
    page: int | None  # 0-based page index, None when the bookmark has no usable target
    target_y: float | None  # PDF user-space y of the target point, when given


def read_bookmarks(doc: pymupdf.Document) -> list[Bookmark]:
    """The document's bookmarks in order; targets outside the document become None.

    Walks MuPDF's outline directly, which already knows each entry's page and
    target point: `get_toc(simple=False)` gives the same, but first builds a
    Python dict of every named destination (1 s for a 2,400-page manual).
    """
    bookmarks: list[Bookmark] = []
    try:
        _walk_outline(doc, doc.outline, 1, bookmarks, {})
    except (RuntimeError, ValueError, AttributeError):
        return []
    return bookmarks


def has_bookmarks(doc: pymupdf.Document) -> bool:
    """Whether the document has an outline (MuPDF loads it when the document opens: no cost here)."""
    try:
        outline = doc.outline
    except AttributeError:  # an encrypted document that was not opened with its password
        return False
    return outline is not None and bool(outline.this.m_internal)


def _walk_outline(
    doc: pymupdf.Document,
    item: pymupdf.Outline | None,
    level: int,
    out: list[Bookmark],
    to_user_space: dict[int, pymupdf.Matrix],
) -> None:
    """`to_user_space`: each page's inverse transformation, kept per page (loading a page costs more than the rest)."""
    while item and item.this.m_internal:
        page: int | None = None
        target_y: float | None = None
        if not item.is_external and item.uri:
            number = item.page
            if number == -1:
                number = doc.resolve_link(item.uri)[0]
            if 0 <= number < doc.page_count:
                page = number
                if not math.isnan(item.y):
                    # the outline's point is in MuPDF page space; Bookmark keeps PDF user space. That
                    # matrix never moves y by x, and a destination that gives a top alone has no x
                    if page not in to_user_space:
                        to_user_space[page] = ~doc[page].transformation_matrix
                    target_y = float((pymupdf.Point(0, item.y) * to_user_space[page]).y)
        out.append(Bookmark(level=level, title=str(item.title or " "), page=page, target_y=target_y))
        if item.down:
            _walk_outline(doc, item.down, level + 1, out, to_user_space)
        item = item.next


def bookmark_headings(bookmarks: list[Bookmark], pages: list[PdfPage]) -> list[Heading]:
    """One heading per bookmark, in bookmark order, pointing at the line its title stands on."""
    _fill_missing_pages(bookmarks)
    by_page: dict[int, list[int]] = defaultdict(list)
    for index, bookmark in enumerate(bookmarks):
        if bookmark.page is not None and bookmark.page < len(pages):
            by_page[bookmark.page].append(index)
    lines_for: dict[int, int] = {}
    for page_index, indexes in by_page.items():
        page = pages[page_index]
        normalised = [_normalise(line.text) for line in page.lines]
        for index in indexes:
            lines_for[index] = _locate(bookmarks[index], page, normalised)
    first_line = pages[0].marker_line if pages else 1
    return [
        Heading(level=bookmark.level, title=bookmark.title, line=lines_for.get(index, first_line))
        for index, bookmark in enumerate(bookmarks)
    ]


def _fill_missing_pages(bookmarks: list[Bookmark]) -> None:
    """A bookmark without a target (often a parent entry) starts where the next targeted one does."""
    following: int | None = None
    for bookmark in reversed(bookmarks):
        if bookmark.page is None:
            bookmark.page = following
            bookmark.target_y = None
        else:
            following = bookmark.page
    previous: int | None = None
    for bookmark in bookmarks:
        if bookmark.page is None:
            bookmark.page = previous if previous is not None else 0
        previous = bookmark.page


def _locate(bookmark: Bookmark, page: PdfPage, normalised: list[str]) -> int:
    """The line number where the bookmark's title stands on its page.

    Title matches just below the bookmark's target point win; then the best
    match anywhere on the page (weak matches only when near the target); then
    the line at the target point; then the start of the page.
    """
    target = _target_top(bookmark, page)
    title = _normalise(bookmark.title)
    candidates: list[tuple[int, float, int]] = []  # (rank, distance from target, position)
    if title:
        for position, text in enumerate(normalised):
            if title not in text and not title.startswith(text):  # every match needs one of the two
                continue
            following = normalised[position + 1] if position + 1 < len(normalised) else ""
            rank = _match_rank(title, text, following)
            if rank is not None:
                distance = abs(page.lines[position].y0 - target) if target is not None else float(position)
                candidates.append((rank, distance, position))
    if target is not None:
        window = [c for c in candidates if target - 0.02 * page.height <= page.lines[c[2]].y0 <= target + 0.12 * page.height]
        if window:
            return page.lines[min(window)[2]].number
        candidates = [c for c in candidates if c[0] < 2 or c[1] <= 0.25 * page.height]
    if candidates:
        return page.lines[min(candidates)[2]].number
    if target is not None and page.lines:
        below = next((line for line in page.lines if line.y0 >= target - 3), page.lines[-1])
        return below.number
    return page.marker_line


def _target_top(bookmark: Bookmark, page: PdfPage) -> float | None:
    if bookmark.target_y is None:
        return None
    point = pymupdf.Point(0, bookmark.target_y) * page.transform
    return point.y if 0 <= point.y <= page.height + 1 else None


def _match_rank(title: str, text: str, next_text: str) -> int | None:
    """0 exact, 1 line starts/ends with the title (numbering, "Chapter 3"), 2 wrapped over two lines, 3 inside."""
    if not text:
        return None
    if text == title:
        return 0
    if text.endswith(title) or text.startswith(title):
        return 1 if len(title) >= 0.3 * len(text) else 3
    if title.startswith(text) and len(text) >= 4 and (text + next_text).startswith(title):
        return 2
    if len(title) >= 6 and title in text:
        return 3
    return None


def _normalise(text: str) -> str:
    return _NON_WORD.sub("", text.casefold())


def font_headings(pages: list[PdfPage]) -> list[tuple[PdfLine, int]]:
    """Heading lines and levels from font size and weight, for PDFs without bookmarks (may be empty).

    A heading set over several lines is joined onto its first line (the other
    lines are emptied), so the whole title stands on the line the outline points to.
    """
    body = body_font_size(pages)
    if body <= 0:
        return []
    running = _running_lines(pages)
    found: list[tuple[PdfLine, list[PdfLine], str]] = []  # (first line, continuation lines, style)
    for page in pages:
        previous: tuple[PdfLine, list[PdfLine], str] | None = None
        for line in page.lines:
            repeated = _in_margin(line, page) and _DIGITS.sub("", _normalise(line.text)) in running
            style = None if repeated else _heading_style(line, body)
            if style is None:
                previous = None
            elif previous and previous[2] == style and previous[0].block == line.block and len(previous[1]) < 2:
                previous[1].append(line)
            else:
                previous = (line, [], style)
                found.append(previous)
    total_lines = sum(len(page.lines) for page in pages)
    if not found or len(found) > 0.4 * max(total_lines, 1):
        return []
    levels = _levels([style for _line, _rest, style in found])
    limit = min(max(20, 4 * len(pages)), 1500)
    allowed = MAX_LEVELS
    while allowed > 1 and sum(1 for _line, _rest, style in found if levels[style] <= allowed) > limit:
        allowed -= 1
    chosen = [(line, rest, levels[style]) for line, rest, style in found if levels[style] <= allowed]
    if len(chosen) > limit:
        return []
    for line, rest, _level in chosen:
        for continuation in rest:
            line.text = f"{line.text} {continuation.text}"
            continuation.text = ""
    return [(line, level) for line, _rest, level in chosen]


def _heading_style(line: PdfLine, body: float) -> str | None:
    """"size:<pt>" for a large line, "bold" for a bold body-size line, None for body text.

    A line neither large nor bold is body text whatever its words: told first, as it is most lines.
    """
    large = line.size >= LARGE_FACTOR * body
    if not large and not (line.bold and line.size >= 0.95 * body):
        return None
    text = line.text
    words = text.split()
    letters = sum(1 for char in text if char.isalpha())
    if letters < 2 or len(words) > MAX_HEADING_WORDS or len(text) > 120 or line.gapped:
        return None
    if text.endswith((".", ",", ";")) or _DOT_LEADER.search(text):
        return None
    if len(_DIGITS.findall(text)) > letters:
        return None
    if large:
        return f"size:{round(line.size * 2) / 2}"
    return "bold" if len(words) <= 8 else None


def _levels(styles: list[str]) -> dict[str, int]:
    sizes = sorted({float(style[5:]) for style in styles if style.startswith("size:")}, reverse=True)
    levels = {f"size:{size}": min(rank + 1, MAX_LEVELS) for rank, size in enumerate(sizes)}
    levels["bold"] = min(len(sizes) + 1, MAX_LEVELS)
    return levels


def _running_lines(pages: list[PdfPage]) -> set[str]:
    """Texts (digits ignored) in the top or bottom margin of many pages: running headers and footers."""
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({_DIGITS.sub("", _normalise(line.text)) for line in page.lines if _in_margin(line, page)})
    threshold = max(3, int(0.3 * len(pages)))
    return {text for text, count in seen.items() if count >= threshold and text}


def _in_margin(line: PdfLine, page: PdfPage) -> bool:
    return line.y0 < 0.1 * page.height or line.y0 > 0.88 * page.height
