"""A PDF's link annotations, placed on the document's lines.

A link to a page of the same file becomes a link whose `target_line` is the
line it leads to (the first line at or below its target point, else the page
marker); a link to a URL or another file keeps that target. Its own line is the
text line the link's box covers on its page.

The links are read while `read_page` has the page loaded (`page_links`), from
MuPDF's own link list, and kept on the `PdfPage` (they travel with the pages of
a PDF read in parts). PyMuPDF's `Page.get_links()` would load every page a
second time, look up the annotation xrefs once per link, and for a link to a
named destination build a dict of every named destination of the document (in
Python, once per opened document). Those links are left out here as they always
were: MuPDF gives them as `#nameddest=NAME`, which PyMuPDF reports as
LINK_NAMED, a kind this module never kept. A link's kind and target follow
PyMuPDF's own reading of the URI (`pymupdf.linkDest`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pymupdf

from linkly_ls.core.document import Link
from linkly_ls.core.extract.pdf_text import PdfPage

#: most links read from one PDF: an index of every page cross-referenced stays bounded
MAX_LINKS = 20_000


@dataclass(frozen=True)
class PageLink:
    """One link annotation as read from its page: `kind` "uri", "page" (of this PDF) or "file"."""

    kind: str
    top: float
    bottom: float
    target: str = ""
    page: int = -1
    to_y: float | None = None


def page_links(page: pymupdf.Page) -> list[PageLink]:
    """The links of a loaded page that `read_links` keeps; none when MuPDF cannot read them."""
    found: list[PageLink] = []
    try:
        link = pymupdf.mupdf.fz_load_links(page.this)
        while link.m_internal:
            entry = _page_link(link, page.parent)
            if entry is not None:
                found.append(entry)
            link = link.next()
    except Exception:  # noqa: BLE001 - a damaged annotation array: the page's text is still good
        return []
    return found


def _page_link(link: pymupdf.mupdf.FzLink, doc: pymupdf.Document) -> PageLink | None:
    uri = link.m_internal.uri or ""
    if not uri:
        return None
    if pymupdf.mupdf.fz_is_external_link(uri):
        if uri.startswith("file:"):
            return _file_link(link, uri[5:])
        if ":" not in uri:
            return None  # a launch action: never kept
        rect = link.rect()
        return PageLink(kind="uri", top=rect.y0, bottom=rect.y1, target=uri.strip())
    if not uri.startswith("#"):
        uri = _resolved_uri(doc, uri)
        if uri is None:
            return None
    params = _uri_params(uri)
    page = params.get("page")
    if page is None or not page.isdigit():
        return None  # a named destination (LINK_NAMED)
    rect = link.rect()
    return PageLink(kind="page", top=rect.y0, bottom=rect.y1, page=int(page) - 1, to_y=_target_y(params))


def _file_link(link: pymupdf.mupdf.FzLink, spec: str) -> PageLink | None:
    """`file:` URIs: another file at a page (GOTOR) is kept; a bare file (LAUNCH) is not."""
    if spec.startswith("//"):
        spec = spec[2:]
    parts = spec.split("#")
    if len(parts) != 2 or not parts[1].startswith("page="):
        return None
    _page_number = int(parts[1].split("&")[0][5:])  # raises as PyMuPDF did: the page keeps no links
    file = parts[0].replace("\\", "/")
    if not file:
        return None
    rect = link.rect()
    return PageLink(kind="file", top=rect.y0, bottom=rect.y1, target=file)


def _resolved_uri(doc: pymupdf.Document, uri: str) -> str | None:
    """An internal link not given as `#...`: MuPDF resolves it to a page and point, as `Link.dest` does."""
    page, x, y = doc.resolve_link(uri)
    if page < 0:
        return None
    return f"#page={page + 1}&zoom=0,{pymupdf._format_g(x)},{pymupdf._format_g(y)}"


def _uri_params(uri: str) -> dict[str, str | None]:
    params: dict[str, str | None] = {}
    for item in uri.replace("&zoom=nan", "&zoom=0")[1:].split("&"):
        key, equals, value = item.partition("=")
        params[key] = value if equals else None
    return params


def _target_y(params: dict[str, str | None]) -> float | None:
    """The target point's y as PyMuPDF reads it: from `zoom=z,x,y`, else from a `view=` with a top."""
    zoom = (params.get("zoom") or "").split(",")
    if len(zoom) >= 3:
        try:
            float(zoom[1])
            return float(zoom[2])
        except ValueError:
            pass
    return _view_top(params.get("view"))


def _view_top(view: str | None) -> float | None:
    items = [item.strip() for item in (view or "").split(",")]
    mode = items[0] if items else ""
    if not mode:
        return None
    mode = mode if mode.startswith("/") else f"/{mode}"
    args = items[1:]
    if mode in ("/FitH", "/FitBH") and args:
        return _number(args[0])
    if mode == "/FitR" and len(args) >= 4 and _number(args[0]) is not None:
        return _number(args[3])
    if mode == "/XYZ" and len(args) >= 2:
        return _number(args[1])
    return None


def _number(text: str) -> float | None:
    text = text.strip()
    if not text or text.lower() in ("null", "nan"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def read_links(pages: list[PdfPage]) -> list[Link]:
    links: list[Link] = []
    by_index = {page.index: page for page in pages}
    for page in pages:
        for entry in page.links:
            link = _link(entry, page, by_index)
            if link is not None:
                links.append(link)
                if len(links) >= MAX_LINKS:
                    return links
    return links


def _link(entry: PageLink, page: PdfPage, by_index: dict[int, PdfPage]) -> Link | None:
    line = _line_at(page, entry.top, entry.bottom)
    if entry.kind != "page":
        return Link(line=line, target=entry.target, kind="pdf")
    target_page = by_index.get(entry.page)
    if target_page is None:
        return None
    target_line = _line_below(target_page, entry.to_y if entry.to_y is not None else 0.0)
    return Link(line=line, target=f"#page={target_page.index + 1}", kind="pdf", target_line=target_line)


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
