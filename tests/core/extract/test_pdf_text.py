"""Reading PDF pages: styled (every span's font) where fonts matter, plain (MuPDF's JSON) elsewhere."""

from __future__ import annotations

import json

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


def _blocks_as_json_says(page: pymupdf.Page) -> list[dict]:
    """The plain reading's blocks computed the long way, straight from MuPDF's JSON of the page."""
    buffer = pymupdf.mupdf.fz_new_buffer(16384)
    output = pymupdf.mupdf.FzOutput(buffer)
    pymupdf.mupdf.fz_print_stext_page_as_json(output, page.get_textpage(flags=pdf_text.TEXT_FLAGS).this, 100.0)
    output.fz_close_output()
    left, top, right, bottom = page.rect
    blocks = []
    for block in json.loads(buffer.fz_buffer_extract(), strict=False)["blocks"]:
        if block["type"] != "text":
            continue
        boxes = [
            (line, (box["x"] / 100, box["y"] / 100, box["x"] / 100 + box["w"] / 100, box["y"] / 100 + box["h"] / 100))
            for line, box in ((line, line["bbox"]) for line in block["lines"])
        ]
        kept = [
            (line, box) for line, box in boxes
            if not (box[2] < left or box[0] > right or box[3] < top or box[1] > bottom)
        ]
        if not kept:
            continue
        lines = [
            (
                line["text"],
                box,
                round(line["font"]["size"] / 100, 1),
                line["font"]["weight"] == "bold" or pdf_text._is_bold_font(line["font"]["name"]),
            )
            for line, box in kept
            if line["text"].strip()
        ]
        corners = list(zip(*(box for _line, box in kept)))
        bbox = (min(corners[0]), min(corners[1]), max(corners[2]), max(corners[3]))
        blocks.append({"bbox": bbox, "lines": lines, "chars": sum(len(line["text"]) for line, _box in kept)})
    return blocks


def test_the_plain_reading_keeps_every_line_of_mupdfs_json_on_every_corpus_pdf(corpus):
    # Every page of every PDF of the corpus (the first 400 of a longer one): the reading's
    # blocks are those written out the long way above, box, style and text of every line.
    pages = 0
    for path in sorted(corpus.rglob("*.pdf")):
        try:
            doc = pymupdf.open(path)
            count = 0 if doc.needs_pass else doc.page_count
        except RuntimeError:
            continue  # the damaged and locked PDFs of odd/: no pages to read
        for number in range(min(count, 400)):
            page = doc[number]
            assert pdf_text._plain_blocks(page, page.rect) == _blocks_as_json_says(page), (path.name, number)
            pages += 1
    assert pages > 1000
