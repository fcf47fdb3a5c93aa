"""PDF links read while each page is loaded equal PyMuPDF's own `get_links()` reading of every page."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from linkly_ls.core.document import LineBuilder, Link
from linkly_ls.core.extract.pdf import _write_pages, open_pdf, read_pages
from linkly_ls.core.extract.pdf_links import MAX_LINKS, _line_at, _line_below, read_links
from linkly_ls.core.extract.pdf_text import PdfPage


def reference_links(doc: pymupdf.Document, pages: list[PdfPage]) -> list[Link]:
    """What the links were before they were read with the page: `get_links()` of every page, mapped alike."""
    links: list[Link] = []
    by_index = {page.index: page for page in pages}
    for page in pages:
        try:
            found = doc[page.index].get_links()
        except Exception:  # noqa: BLE001 - as the reading did: a damaged annotation array loses the page's links
            continue
        for entry in found:
            box = entry.get("from")
            line = _line_at(page, box.y0, box.y1) if box is not None else page.marker_line
            kind = entry.get("kind")
            if kind == pymupdf.LINK_URI and entry.get("uri"):
                links.append(Link(line=line, target=str(entry["uri"]).strip(), kind="pdf"))
            elif kind == pymupdf.LINK_GOTO and entry.get("page", -1) >= 0 and int(entry["page"]) in by_index:
                target = by_index[int(entry["page"])]
                point = entry.get("to")
                target_line = _line_below(target, point.y) if point is not None else target.marker_line
                links.append(Link(line=line, target=f"#page={target.index + 1}", kind="pdf", target_line=target_line))
            elif kind == pymupdf.LINK_GOTOR and entry.get("file"):
                links.append(Link(line=line, target=str(entry["file"]), kind="pdf"))
    return links[:MAX_LINKS]


def both_readings(path: Path) -> tuple[list[Link], list[Link], dict[int, int]]:
    """(links read with the pages, the reference reading, PyMuPDF's count of links per kind)."""
    doc = open_pdf(path)
    try:
        reading = read_pages(doc, 0, doc.page_count)
        _write_pages(LineBuilder(), reading.pages)  # gives the lines their numbers, as extraction does
        kinds: dict[int, int] = {}
        for page in doc:
            for entry in page.get_links():
                kinds[entry["kind"]] = kinds.get(entry["kind"], 0) + 1
        return read_links(reading.pages), reference_links(doc, reading.pages), kinds
    finally:
        doc.close()


@pytest.mark.parametrize("relative", ["books/R/R-intro.pdf", "papers/standards/fhs-3.0.pdf"])
def test_links_equal_the_get_links_reading_of_a_real_pdf(corpus, relative):
    links, reference, kinds = both_readings(corpus / relative)
    assert links == reference
    assert len(links) >= 30
    if relative.startswith("books/R"):
        assert kinds.get(pymupdf.LINK_NAMED, 0) >= 400  # named destinations, left out by both readings
        assert kinds.get(pymupdf.LINK_GOTOR, 0) + kinds.get(pymupdf.LINK_LAUNCH, 0) >= 1
    else:
        assert sum(link.target_line is not None for link in links) >= 300


def test_every_kind_of_link_on_a_made_pdf(tmp_path):
    doc = pymupdf.open()
    for number in range(3):
        page = doc.new_page()
        for row in range(8):
            page.insert_text((72, 100 + 60 * row), f"page {number + 1} row {row + 1} text")
    first = doc[0]
    first.insert_link({"kind": pymupdf.LINK_GOTO, "from": pymupdf.Rect(72, 90, 200, 104), "page": 2,
                       "to": pymupdf.Point(72, 280)})
    first.insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(72, 150, 200, 164),
                       "uri": "https://example.org/a"})
    first.insert_link({"kind": pymupdf.LINK_GOTOR, "from": pymupdf.Rect(72, 210, 200, 224),
                       "file": "other.pdf", "page": 3, "to": pymupdf.Point(0, 0)})
    first.insert_link({"kind": pymupdf.LINK_LAUNCH, "from": pymupdf.Rect(72, 270, 200, 284), "file": "run.sh"})
    first.insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 330, 200, 344), "name": "NextPage"})
    path = tmp_path / "links.pdf"
    doc.save(path)
    doc.close()
    links, reference, kinds = both_readings(path)
    assert kinds.get(pymupdf.LINK_NAMED) == 1  # left out by both readings
    assert links == reference
    assert {link.target for link in links} == {"#page=3", "https://example.org/a", "other.pdf", "run.sh"}
    inside = next(link for link in links if link.target == "#page=3")
    assert inside.line == 2 and inside.target_line is not None and inside.target_line > inside.line
