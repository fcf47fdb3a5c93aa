"""A PDF's link annotations, placed on the document's lines.

A link to a page of the same file becomes a link whose `target_line` is the
line it leads to (the first line at or below its target point, else the page
marker); a link to a URL or another file keeps that target. Its own line is the
text line the link's box covers on its page.
"""

from __future__ import annotations

import pymupdf

from linkly_ls.core.document import Link
from linkly_ls.core.extract.pdf_text import PdfPage

#: most links read from one PDF: an index of every page cross-referenced stays bounded
MAX_LINKS = 20_000


def read_links(doc: pymupdf.Document, pages: list[PdfPage]) -> list[Link]:
    links: list[Link] = []
    by_index = {page.index: page for page in pages}
    for page in pages:
        try:
            found = doc[page.index].get_links()
        except Exception:  # noqa: BLE001 - a damaged annotation array: the page's text is still good
            continue
        for entry in found:
            link = _link(entry, page, by_index)
            if link is not None:
                links.append(link)
                if len(links) >= MAX_LINKS:
                    return links
    return links


def _link(entry: dict, page: PdfPage, by_index: dict[int, PdfPage]) -> Link | None:
    box = entry.get("from")
    line = _line_at(page, box.y0, box.y1) if box is not None else page.marker_line
    kind = entry.get("kind")
    if kind == pymupdf.LINK_URI and entry.get("uri"):
        return Link(line=line, target=str(entry["uri"]).strip(), kind="pdf")
    if kind == pymupdf.LINK_GOTO and entry.get("page", -1) >= 0:
        target_page = by_index.get(int(entry["page"]))
        if target_page is None:
            return None
        point = entry.get("to")
        target_line = _line_below(target_page, point.y) if point is not None else target_page.marker_line
        return Link(line=line, target=f"#page={target_page.index + 1}", kind="pdf", target_line=target_line)
    if kind == pymupdf.LINK_GOTOR and entry.get("file"):
        return Link(line=line, target=str(entry["file"]), kind="pdf")
    return None


def _line_at(page: PdfPage, top: float, bottom: float) -> int:
    """The written line whose top is nearest the middle of the box, else the page marker."""
    middle = (top + bottom) / 2
    best, distance = page.marker_line, float("inf")
    for line in page.lines:
        if line.number and abs(line.y0 - middle) < distance and line.y0 <= bottom:
            best, distance = line.number, abs(line.y0 - middle)
    return best


def _line_below(page: PdfPage, y: float) -> int:
    for line in page.lines:
        if line.number and line.y0 >= y - 2:
            return line.number
    return page.marker_line
