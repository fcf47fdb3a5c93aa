"""A PDF's link annotations, placed on the document's lines.

A link to a page of the same file becomes a link whose `target_line` is the
line it leads to (the first line at or below its target point, else the page
marker), its target `#page=N`, or `#nameddest=NAME` when it names a
destination (another PDF's link to that name is then found on the line of this
one's, `links.resolver`); a link to a URL or another file keeps that target.
Its own line is the text line the link's box covers on its page.

The links are read while `read_page` has the page loaded (`page_links`), from
MuPDF's own link list, and kept on the `PdfPage` (they travel with the pages of
a PDF read in parts). PyMuPDF's `Page.get_links()` would load every page a
second time, look up the annotation xrefs once per link, and for a link to a
named destination build a dict of every named destination of the document (in
Python, once per opened document). Here MuPDF gives such a link as
`#nameddest=NAME`, and each name is looked up once (`NamedDestinations`); a link
to a page or a name in another file (`file:OTHER.pdf#page=N`,
`file:OTHER.pdf#nameddest=NAME`) keeps that file with the page or the name as
its target, for the resolver to find in that file once it is indexed.
Otherwise a link's kind and target follow PyMuPDF's own reading of the URI
(`pymupdf.linkDest`).
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import pymupdf

from linkly_ls.core.document import Link
from linkly_ls.core.extract.pdf_text import PdfPage

#: links kept from one PDF: LINKS_PER_PAGE a page, and at least MAX_LINKS. A manual's contents, index and
#: cross-references come to about 10 a page (24,611 in a 2,415-page reference manual); a file with
#: thousands of annotations on every page stays bounded
MAX_LINKS = 20_000
LINKS_PER_PAGE = 50


@dataclass(frozen=True)
class PageLink:
    """One link annotation as read from its page: `kind` "uri", "page" (of this PDF) or "file"."""

    kind: str
    top: float
    bottom: float
    target: str = ""
    page: int = -1
    to_y: float | None = None
    #: a link of this PDF to one of its named destinations: `#nameddest=NAME` as MuPDF gives it
    named: str = ""


#: a link's place in its own PDF: (0-based page, the target point's y or None)
_PageTarget = tuple[int, float | None]


class NamedDestinations:
    """A document's named destinations, each looked up once (a manual links one section from its
    contents, its text and its index); None for a name the document lacks."""

    def __init__(self, doc: pymupdf.Document) -> None:
        self.doc = doc
        self._targets: dict[str, _PageTarget | None] = {}

    def target(self, named: str) -> _PageTarget | None:
        if named not in self._targets:
            try:
                self._targets[named] = _page_target(_resolved_uri(self.doc, named))
            except Exception:  # noqa: BLE001 - a damaged name tree: this link goes, the page's others stay
                self._targets[named] = None
        return self._targets[named]


def destination_page(path: str, name: str) -> int | None:
    """The page (0-based) that the PDF at `path` names `name` for, or None: no such name, or a file that
    cannot be read. For a destination no link of that PDF uses, which extraction therefore did not
    place (LaTeX's `section*.7` of an unnumbered section), when another PDF links to it."""
    try:
        with pymupdf.open(path) as doc:
            target = NamedDestinations(doc).target("#nameddest=" + name)
    except Exception:  # noqa: BLE001 - a file gone, changed or damaged since it was indexed
        return None
    return target[0] if target is not None else None


def page_links(page: pymupdf.Page, names: NamedDestinations) -> list[PageLink]:
    """The links of a loaded page that `read_links` keeps; none when MuPDF cannot read them."""
    found: list[PageLink] = []
    try:
        link = pymupdf.mupdf.fz_load_links(page.this)
        while link.m_internal:
            entry = _page_link(link, names)
            if entry is not None:
                found.append(entry)
            link = link.next()
    except Exception:  # noqa: BLE001 - a damaged annotation array: the page's text is still good
        return []
    return found


def _box(link: pymupdf.mupdf.FzLink) -> tuple[float, float]:
    """The link's top and bottom, as its page is shown: the coordinates of the page's lines
    (`pdf_text.read_page` reads a page turned by /Rotate as it is shown)."""
    rect = link.rect()
    return rect.y0, rect.y1


def _page_link(link: pymupdf.mupdf.FzLink, names: NamedDestinations) -> PageLink | None:
    uri = link.m_internal.uri or ""
    if not uri:
        return None
    named = ""
    if uri.startswith("#nameddest="):  # most links of a LaTeX document: no scheme, so not external
        target = names.target(uri)
        named = uri
    elif uri.startswith("#"):
        target = _page_target(uri)
    elif pymupdf.mupdf.fz_is_external_link(uri):
        if uri.startswith("file:"):
            return _file_link(link, uri[5:])
        if ":" not in uri:
            return None  # a launch action: never kept
        top, bottom = _box(link)
        return PageLink(kind="uri", top=top, bottom=bottom, target=uri.strip())
    else:
        target = _page_target(_resolved_uri(names.doc, uri))
    if target is None:
        return None
    top, bottom = _box(link)
    return PageLink(kind="page", top=top, bottom=bottom, page=target[0], to_y=target[1], named=named)


def _page_target(uri: str | None) -> _PageTarget | None:
    """The page and point of a `#page=N...` URI; None for any other."""
    if uri is None:
        return None
    params = _uri_params(uri)
    page = params.get("page")
    if page is None or not page.isdigit():
        return None
    return int(page) - 1, _target_y(params)


def _file_link(link: pymupdf.mupdf.FzLink, spec: str) -> PageLink | None:
    """`file:` URIs: a link to another file, with the place there when it gives one: `#page=N` (how MuPDF
    reads a GoToR or Launch action), `#nameddest=NAME`, or a URI's own fragment. `links.resolver` finds
    the file and the place once the file is indexed."""
    if spec.startswith("//"):
        spec = spec[2:]
    file, _, fragment = spec.partition("#")
    file = file.replace("\\", "/")
    if not file:
        return None
    if fragment.startswith("page="):
        fragment = f"page={int(fragment.split('&')[0][5:])}"  # raises as PyMuPDF did: the page keeps no links
    top, bottom = _box(link)
    return PageLink(kind="file", top=top, bottom=bottom, target=f"{file}#{fragment}" if fragment else file)


def _resolved_uri(doc: pymupdf.Document, uri: str) -> str | None:
    """An internal link not given as `#page=...`: MuPDF resolves it to a page and point, as `Link.dest` does."""
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
            y = float(zoom[2])
        except ValueError:
            pass
        else:
            return None if math.isnan(y) else y  # a destination that fits the page: its top
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


def link_limit(page_count: int) -> int:
    return max(MAX_LINKS, LINKS_PER_PAGE * page_count)


def read_links(pages: list[PdfPage], warnings: list[str] | None = None) -> list[Link]:
    """The pages' links in page order, at most `link_limit` of them; past it, a warning names the page
    where reading stopped and how many link annotations were left. Annotations of one line that lead to
    the same place are one link: a contents line often links its number, its title and its page number."""
    links: list[Link] = []
    limit = link_limit(len(pages))
    by_index = {page.index: page for page in pages}
    for place, page in enumerate(pages):
        if not page.links:
            continue
        tops = LineTops(page)
        seen: set[tuple[int, str, int | None]] = set()
        for number, entry in enumerate(page.links):
            link = _link(entry, tops.line_at(entry.top, entry.bottom), by_index)
            if link is not None and (link.line, link.target, link.target_line) not in seen:
                seen.add((link.line, link.target, link.target_line))
                links.append(link)
                if len(links) >= limit:
                    left = len(page.links) - number - 1 + sum(len(later.links) for later in pages[place + 1 :])
                    if left and warnings is not None:
                        warnings.append(
                            f"only the first {limit:,} links were kept (a PDF of {len(pages):,} pages keeps at most "
                            f"{limit:,}); {left:,} link annotations from page {page.index + 1} on were left out"
                        )
                    return links
    return links


def _link(entry: PageLink, line: int, by_index: dict[int, PdfPage]) -> Link | None:
    if entry.kind != "page":
        return Link(line=line, target=entry.target, kind="pdf")
    target_page = by_index.get(entry.page)
    if target_page is None:
        return None
    target_line = _line_below(target_page, entry.to_y if entry.to_y is not None else 0.0)
    target = entry.named or f"#page={target_page.index + 1}"
    return Link(line=line, target=target, kind="pdf", target_line=target_line)


class LineTops:
    """A page's written lines sorted by their top, to place each of its links with two bisections: a
    manual's contents or index page holds hundreds of links over as many lines."""

    def __init__(self, page: PdfPage) -> None:
        self.marker_line = page.marker_line
        placed = sorted((line.y0, order, line.number) for order, line in enumerate(page.lines) if line.number)
        self.tops = [top for top, _, _ in placed]
        self.placed = placed

    def line_at(self, top: float, bottom: float) -> int:
        """The written line whose top is nearest the middle of the box and not below its bottom (the first
        in reading order of equally near ones), else the page marker."""
        middle = (top + bottom) / 2
        eligible = bisect.bisect_right(self.tops, bottom)
        split = bisect.bisect_left(self.tops, middle, 0, eligible)
        above = middle - self.tops[split - 1] if split > 0 else math.inf
        below = self.tops[split] - middle if split < eligible else math.inf
        nearest = min(above, below)
        if nearest == math.inf:
            return self.marker_line
        candidates: list[tuple[float, int, int]] = []
        if above == nearest:
            first = bisect.bisect_left(self.tops, self.tops[split - 1], 0, split)
            candidates += self.placed[first:split]
        if below == nearest:
            last = bisect.bisect_right(self.tops, self.tops[split], split, eligible)
            candidates += self.placed[split:last]
        return min(candidates, key=lambda placed: placed[1])[2]


def _line_below(page: PdfPage, y: float) -> int:
    for line in page.lines:
        if line.number and line.y0 >= y - 2:
            return line.number
    return page.marker_line
