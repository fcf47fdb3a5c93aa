"""PDF links read while each page is loaded equal PyMuPDF's own `get_links()` reading of every page."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote

import pymupdf
import pytest

from linkly_ls.core.document import LineBuilder, Link
from linkly_ls.core.extract.pdf import _write_pages, open_pdf, read_pages
from linkly_ls.core.extract import pdf_links
from linkly_ls.core.extract.pdf_links import LineTops, _line_below, link_limit, read_links
from linkly_ls.core.extract.pdf_text import PdfLine, PdfPage


def line_at(page: PdfPage, top: float, bottom: float) -> int:
    """How a link is placed on its page, line by line: the line whose top is nearest the box's middle,
    not below its bottom, the first in reading order of equally near ones; else the page marker."""
    middle = (top + bottom) / 2
    best, distance = page.marker_line, float("inf")
    for line in page.lines:
        if line.number and abs(line.y0 - middle) < distance and line.y0 <= bottom:
            best, distance = line.number, abs(line.y0 - middle)
    return best


def reference_links(doc: pymupdf.Document, pages: list[PdfPage]) -> list[Link]:
    """What the links were before they were read with the page: `get_links()` of every page, mapped alike,
    without a page's repeats (one line's annotations leading to one place)."""
    links: list[Link] = []
    by_index = {page.index: page for page in pages}
    for page in pages:
        try:
            found = doc[page.index].get_links()
        except Exception:  # noqa: BLE001 - as the reading did: a damaged annotation array loses the page's links
            continue
        page_start = len(links)
        for entry in found:
            box = entry.get("from")
            line = line_at(page, box.y0, box.y1) if box is not None else page.marker_line
            kind = entry.get("kind")
            if kind == pymupdf.LINK_URI and entry.get("uri"):
                links.append(Link(line=line, target=str(entry["uri"]).strip(), kind="pdf"))
            elif kind == pymupdf.LINK_GOTO and entry.get("page", -1) >= 0 and int(entry["page"]) in by_index:
                target = by_index[int(entry["page"])]
                point = entry.get("to")
                target_line = _line_below(target, point.y) if point is not None else target.marker_line
                links.append(Link(line=line, target=f"#page={target.index + 1}", kind="pdf", target_line=target_line))
            elif kind == pymupdf.LINK_NAMED and entry.get("page", -1) >= 0 and int(entry["page"]) in by_index:
                # PyMuPDF's dict of named destinations gives the point from the page's bottom
                target = by_index[int(entry["page"])]
                point = entry.get("to")
                y = doc[target.index].rect.height - point.y if point is not None else 0.0
                named = f"#nameddest={entry['nameddest']}"
                links.append(Link(line=line, target=named, kind="pdf", target_line=_line_below(target, y)))
            elif kind == pymupdf.LINK_GOTOR and entry.get("file"):
                links.append(Link(line=line, target=f"{entry['file']}#page={int(entry['page']) + 1}", kind="pdf"))
            elif kind == pymupdf.LINK_LAUNCH and entry.get("file"):
                # a `file:` URI, with "#nameddest=NAME" for a link to a name in another PDF
                links.append(Link(line=line, target=unquote(entry["file"]), kind="pdf"))
        links[page_start:] = _first_of_each(links[page_start:])
    return links[: link_limit(len(pages))]


def _first_of_each(links: list[Link]) -> list[Link]:
    kept: dict[tuple[int, str, int | None], Link] = {}
    for link in links:
        kept.setdefault((link.line, link.target, link.target_line), link)
    return list(kept.values())


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
        return _unquoted(read_links(reading.pages)), reference_links(doc, reading.pages), kinds
    finally:
        doc.close()


def _unquoted(links: list[Link]) -> list[Link]:
    """The links with their targets' %-escapes decoded: MuPDF gives a name as the PDF's URI writes it,
    PyMuPDF decoded."""
    return [replace(link, target=unquote(link.target)) for link in links]


def pages_of(path: Path) -> list[PdfPage]:
    doc = open_pdf(path)
    try:
        pages = read_pages(doc, 0, doc.page_count).pages
        _write_pages(LineBuilder(), pages)
        return pages
    finally:
        doc.close()


@pytest.mark.parametrize("relative", ["books/R/R-intro.pdf", "papers/standards/fhs-3.0.pdf"])
def test_links_equal_the_get_links_reading_of_a_real_pdf(corpus, relative):
    links, reference, kinds = both_readings(corpus / relative)
    assert links == reference
    assert len(links) >= 30
    if relative.startswith("books/R"):
        assert kinds.get(pymupdf.LINK_NAMED, 0) >= 400  # named destinations (hyperref's internal links)
        assert sum(link.target_line is not None for link in links) >= 400
        assert kinds.get(pymupdf.LINK_GOTOR, 0) + kinds.get(pymupdf.LINK_LAUNCH, 0) >= 1
    else:
        assert sum(link.target_line is not None for link in links) >= 150


def test_a_lines_annotations_leading_to_one_place_are_one_link():
    path = Path(__file__).resolve().parents[3] / "fixtures" / "papers" / "autogen-multi-agent.pdf"
    doc = open_pdf(path)
    try:
        annotations = sum(len(page.get_links()) for page in doc)
    finally:
        doc.close()
    links = read_links(pages_of(path))
    assert len(_first_of_each(links)) == len(links)
    assert 10 <= len(links) < annotations  # footnote marks linked twice on one line, kept once


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
    # PyMuPDF writes this as a link to the file's first page (GoToR), as it reads it back
    first.insert_link({"kind": pymupdf.LINK_LAUNCH, "from": pymupdf.Rect(72, 270, 200, 284), "file": "run.sh"})
    # a `file:` URI without a place, as the R reference manual opens its vignettes: above row 7
    vignette = doc.get_new_xref()
    doc.update_object(vignette, "<< /Type /Annot /Subtype /Link /Rect [72 386 200 400] "
                                "/A << /S /URI /URI (file://../doc/grid.pdf) >> >>")
    doc.xref_set_key(first.xref, "Annots", f"[{doc.xref_get_key(first.xref, 'Annots')[1][1:-1]} {vignette} 0 R]")
    # a named destination, as LaTeX's hyperref writes internal links: above row 6 of page 2 (its top at 388)
    destinations = doc.get_new_xref()
    doc.update_object(destinations, f"<< /rows.six [{doc[1].xref} 0 R /XYZ 72 {doc[1].rect.height - 380} 0] >>")
    doc.xref_set_key(doc.pdf_catalog(), "Dests", f"{destinations} 0 R")
    first.insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 330, 200, 344), "nameddest": "rows.six"})
    first.insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 390, 200, 404), "nameddest": "nowhere"})
    path = tmp_path / "links.pdf"
    doc.save(path)
    doc.close()
    links, reference, kinds = both_readings(path)
    assert kinds.get(pymupdf.LINK_NAMED) == 2  # a name the document lacks is left out by both readings
    assert links == reference
    assert {link.target for link in links} == {
        "#page=3", "#nameddest=rows.six", "https://example.org/a", "other.pdf#page=4", "run.sh#page=1", "../doc/grid.pdf"
    }
    lines = {line.number: line.text for page in pages_of(path) for line in page.lines}
    assert lines[next(link for link in links if link.target == "../doc/grid.pdf").line] == "page 1 row 7 text"
    inside = next(link for link in links if link.target == "#page=3")
    assert inside.line == 2 and inside.target_line is not None and inside.target_line > inside.line
    named = next(link for link in links if link.target == "#nameddest=rows.six")
    assert lines[named.line] == "page 1 row 5 text"
    assert lines[named.target_line] == "page 2 row 6 text"


def made_pdf_with_links(path: Path, pages: int, per_page: int) -> Path:
    doc = pymupdf.open()
    for number in range(pages):
        page = doc.new_page()
        for row in range(per_page):
            page.insert_text((72, 100 + 40 * row), f"page {number + 1} row {row + 1}")
            page.insert_link({"kind": pymupdf.LINK_URI, "from": pymupdf.Rect(72, 90 + 40 * row, 200, 104 + 40 * row),
                              "uri": f"https://example.org/{number + 1}/{row + 1}"})
    doc.save(path)
    doc.close()
    return path


def test_links_past_the_limit_are_left_out_with_a_warning_naming_the_page(tmp_path, monkeypatch):
    monkeypatch.setattr(pdf_links, "MAX_LINKS", 5)
    monkeypatch.setattr(pdf_links, "LINKS_PER_PAGE", 1)
    pages = pages_of(made_pdf_with_links(tmp_path / "many.pdf", pages=3, per_page=4))
    warnings: list[str] = []
    links = read_links(pages, warnings)
    assert [link.target for link in links] == [f"https://example.org/1/{row}" for row in range(1, 5)] + ["https://example.org/2/1"]
    assert warnings == [
        "only the first 5 links were kept (a PDF of 3 pages keeps at most 5); 7 link annotations from page 2 on were left out"
    ]


def test_the_link_limit_grows_with_the_pages(tmp_path, monkeypatch):
    monkeypatch.setattr(pdf_links, "MAX_LINKS", 5)
    monkeypatch.setattr(pdf_links, "LINKS_PER_PAGE", 4)
    pages = pages_of(made_pdf_with_links(tmp_path / "every.pdf", pages=3, per_page=4))
    warnings: list[str] = []
    assert len(read_links(pages, warnings)) == 12 and warnings == []


def test_a_link_on_a_turned_page_is_placed_on_its_line(landscape):
    def link_row_four(doc):
        turned = doc[1]
        x0, top, x1, bottom = landscape.ROWS_SHOWN[3]
        corners = [landscape.user_space(turned, point) for point in ((x0, top), (x1, bottom))]
        rect = " ".join(f"{value:.2f}" for value in (*corners[0], *corners[1]))
        link = doc.get_new_xref()
        doc.update_object(link, f"<< /Type /Annot /Subtype /Link /Rect [{rect}] /A << /S /URI /URI (https://example.org/a) >> >>")
        doc.xref_set_key(turned.xref, "Annots", f"[{link} 0 R]")

    (link,) = read_links(pages := pages_of(landscape.pdf(link_row_four)))
    lines = {line.number: line.text for page in pages for line in page.lines}
    assert lines[link.line] == "row 4 of the turned page"


def test_a_link_to_a_point_of_a_turned_page_leads_to_the_line_there(landscape):
    def link_rows(doc):
        turned = doc[1]
        x, y = landscape.user_space(turned, (142, landscape.ROWS_SHOWN[2][1] - 8))  # just above row 3
        destinations = doc.get_new_xref()
        doc.update_object(destinations, f"<< /row.three [{turned.xref} 0 R /XYZ {x} {y} 0] >>")
        doc.xref_set_key(doc.pdf_catalog(), "Dests", f"{destinations} 0 R")
        first = doc[0]
        first.insert_link({"kind": pymupdf.LINK_NAMED, "from": pymupdf.Rect(72, 90, 200, 104), "nameddest": "row.three"})
        x, y = landscape.user_space(turned, (142, landscape.ROWS_SHOWN[3][1] - 8))  # just above row 4
        link = doc.get_new_xref()
        doc.update_object(link, f"<< /Type /Annot /Subtype /Link /Rect [72 638 200 652] /Dest [{turned.xref} 0 R /XYZ {x} {y} 0] >>")
        doc.xref_set_key(first.xref, "Annots", f"[{doc.xref_get_key(first.xref, 'Annots')[1][1:-1]} {link} 0 R]")

    links = read_links(pages := pages_of(landscape.pdf(link_rows)))
    lines = {line.number: line.text for page in pages for line in page.lines}
    assert [(lines[link.line], lines[link.target_line]) for link in links] == [
        ("the table is on the next page", "row 3 of the turned page"),
        ("and so is its note", "row 4 of the turned page"),
    ]


def test_line_tops_place_a_link_as_a_walk_over_the_lines_does():
    rng = random.Random(7)
    for _ in range(300):
        page = PdfPage(index=0, height=800.0, transform=pymupdf.Matrix(1, 1), marker_line=1)
        tops = [rng.choice([rng.uniform(0, 800), float(rng.randrange(0, 800, 40))]) for _ in range(rng.randrange(0, 30))]
        for order, top in enumerate(tops):
            number = 0 if rng.random() < 0.1 else order + 2  # a line not written has no number
            page.lines.append(PdfLine(text="x", y0=top, size=10.0, bold=False, block=order // 3, number=number))
        placed = LineTops(page)
        for _ in range(20):
            top = rng.choice([rng.uniform(-20, 820), float(rng.randrange(0, 800, 20))])
            bottom = top + rng.choice([0.0, 10.0, 40.0, rng.uniform(0, 80)])
            assert placed.line_at(top, bottom) == line_at(page, top, bottom), (tops, top, bottom)


def test_a_link_to_a_name_in_another_pdf_keeps_the_file_and_the_name(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((72, 100), "see the other manual", fontsize=12)
    named = doc.get_new_xref()
    doc.update_object(named, "<< /Type /Annot /Subtype /Link /Rect [72 730 200 745] /A << /S /GoToR /F (other.pdf) /D (section.2) >> >>")
    doc.xref_set_key(page.xref, "Annots", f"[{named} 0 R]")
    path = tmp_path / "other-name.pdf"
    doc.save(path)
    doc.close()
    links = read_links(pages := pages_of(path))
    lines = {line.number: line.text for page in pages for line in page.lines}
    assert [(lines[link.line], link.target, link.target_line) for link in links] == [
        ("see the other manual", "other.pdf#nameddest=section.2", None)
    ]
