"""Reading PDF pages: styled (every span's font) where fonts matter, plain (MuPDF's JSON) elsewhere."""

from __future__ import annotations

import pymupdf

from linkly_ls.core.extract import extract_file, pdf, pdf_text
from linkly_ls.core.extract.pdf_outline import has_bookmarks


def test_a_bookmarked_pdf_is_read_plain_but_for_its_first_page(corpus):
    doc = pymupdf.open(corpus / "books/R/R-intro.pdf")
    assert has_bookmarks(doc)
    reading = pdf.read_pages(doc, 0, 6)
    assert [page.styled for page in reading.pages] == [True, False, False, False, False, False]


def test_a_pdf_without_bookmarks_is_read_styled(corpus):
    doc = pymupdf.open(corpus / "papers/standards/fhs-3.0.pdf")
    assert not has_bookmarks(doc)
    assert all(page.styled for page in pdf.read_pages(doc, 0, doc.page_count).pages)


def test_plain_and_styled_reading_give_the_same_lines_on_ordinary_pages(corpus):
    doc = pymupdf.open(corpus / "books/R/R-intro.pdf")
    for number in range(1, 12):
        plain, styled = pdf_text.read_page(doc[number], styled=False), pdf_text.read_page(doc[number])
        assert not plain.styled and styled.styled
        assert [line.text for line in plain.lines] == [line.text for line in styled.lines]
        assert [line.block for line in plain.lines] == [line.block for line in styled.lines]
        # MuPDF's line boxes sit a little lower than the union of PyMuPDF's glyph boxes
        assert all(abs(a.y0 - b.y0) < 4 for a, b in zip(plain.lines, styled.lines))


def test_plain_reading_keeps_a_line_that_runs_off_the_page_whole(tmp_path):
    doc = pymupdf.open()
    page = doc.new_page(width=200, height=200)
    page.insert_text((20, 50), "see /usr/share/doc/base-passwd/users-and-groups.html", fontsize=10)
    page.insert_text((260, 90), "wholly off the page", fontsize=10)
    path = tmp_path / "wide.pdf"
    doc.save(path)
    page = pymupdf.open(path)[0]
    plain = [line.text for line in pdf_text.read_page(page, styled=False).lines]
    styled = [line.text for line in pdf_text.read_page(page).lines]
    assert plain == ["see /usr/share/doc/base-passwd/users-and-groups.html"]
    assert styled[0].startswith("see /usr/share/doc/") and len(styled) == 1


def test_without_mupdf_json_a_page_is_read_styled(corpus, monkeypatch):
    monkeypatch.setattr(pdf_text, "_print_json", None)
    page = pymupdf.open(corpus / "books/R/R-intro.pdf")[3]
    assert pdf_text.read_page(page, styled=False).styled


def test_an_outline_without_usable_entries_falls_back_to_headings_by_font(corpus, monkeypatch):
    # The pages were read plain (the PDF has an outline), but no bookmark came out of it:
    # the pages are read again with their fonts, so headings can be found by font.
    readings: list[pdf.PageReading] = []
    original = pdf.read_pages

    def recorded(*args, **kwargs) -> pdf.PageReading:
        readings.append(original(*args, **kwargs))
        return readings[-1]

    monkeypatch.setattr(pdf, "read_bookmarks", lambda doc: [])
    monkeypatch.setattr(pdf, "read_pages", recorded)
    document = extract_file(corpus / "papers/latex/pdflatex-outline.pdf")
    assert [all(page.styled for page in reading.pages) for reading in readings] == [False, True]
    assert document.outline
