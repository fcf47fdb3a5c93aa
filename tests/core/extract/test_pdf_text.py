"""Reading PDF pages: styled (every span's font, from MuPDF's HTML) where fonts matter, plain (MuPDF's JSON) elsewhere."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pymupdf

from linkly_ls.core.extract import extract_file, pdf, pdf_text
from linkly_ls.core.extract.pdf_outline import font_headings, has_bookmarks

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


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


def _dict_reading(page: pymupdf.Page, monkeypatch) -> pdf_text.PdfPage:
    """The styled reading the old way: PyMuPDF's text dict, with every span's font."""
    with monkeypatch.context() as patched:
        patched.setattr(pdf_text, "_print_html", None)
        return pdf_text.read_page(page, styled=True)


def _styles_by_text(page: pdf_text.PdfPage) -> Counter:
    return Counter((line.text, line.size, line.bold) for line in page.lines)


def test_the_styled_reading_gives_the_text_dicts_sizes_and_weights(monkeypatch):
    # Fixtures without bookmarks, read with their fonts: MuPDF's HTML gives each line the style that
    # the text dict's spans give it, on the same lines
    for path in sorted(FIXTURES.rglob("*.pdf")):
        doc = pymupdf.open(path)
        for page in doc:
            styled = pdf_text.read_page(page, styled=True)
            assert styled.styled
            assert _styles_by_text(styled) == _styles_by_text(_dict_reading(page, monkeypatch)), (path.name, page.number)


def test_the_styled_reading_finds_the_headings_the_text_dict_finds_on_every_corpus_pdf(corpus, monkeypatch):
    # Every PDF of the corpus (its first 60 pages): the same headings by font, and the same style on
    # all but a few lines (a line running off the page is kept whole; a control character has no size)
    lines = same = documents = 0
    for path in sorted(corpus.rglob("*.pdf")):
        try:
            doc = pymupdf.open(path)
            count = 0 if doc.needs_pass else min(doc.page_count, 60)
        except RuntimeError:
            continue  # the damaged and locked PDFs of odd/
        if not count:
            continue
        by_dict = [_dict_reading(doc[number], monkeypatch) for number in range(count)]
        by_html = [pdf_text.read_page(doc[number], styled=True) for number in range(count)]
        assert [(level, line.text) for line, level in font_headings(by_html)] == [
            (level, line.text) for line, level in font_headings(by_dict)
        ], path.name
        for old, new in zip(by_dict, by_html):
            expected, found = _styles_by_text(old), _styles_by_text(new)
            lines += sum(expected.values())
            same += sum((expected & found).values())
        documents += 1
    assert documents >= 10 and same >= 0.995 * lines


def test_a_page_is_read_from_the_text_dict_when_mupdfs_html_and_json_disagree(corpus, monkeypatch):
    page = pymupdf.open(corpus / "papers/standards/fhs-3.0.pdf")[3]
    monkeypatch.setattr(pdf_text, "_html_line_spans", lambda page_html: [])
    assert pdf_text._plain_blocks(page, page.rect, styled=True) is None
    reading = pdf_text.read_page(page, styled=True)
    assert reading.styled and reading.lines
    assert _styles_by_text(reading) == _styles_by_text(_dict_reading(page, monkeypatch))


def test_a_page_is_read_from_the_text_dict_when_mupdfs_html_reads_otherwise_than_expected(corpus, monkeypatch):
    page = pymupdf.open(corpus / "papers/standards/fhs-3.0.pdf")[3]
    monkeypatch.setattr(pdf_text, "_HTML_SPAN", re.compile("<never-written>(x)(x)(x)(x)"))
    assert pdf_text._plain_blocks(page, page.rect, styled=True) is None
    assert _styles_by_text(pdf_text.read_page(page, styled=True)) == _styles_by_text(_dict_reading(page, monkeypatch))


def test_html_spans_count_an_entity_as_one_character_and_take_a_bold_name_from_the_json():
    page_html = (
        '<p style="top:1pt;left:1pt;line-height:10.0pt"><span style="font-family:Times New Roman,serif;'
        'font-size:10.0pt;color:#000000">&#x2022;</span><b><span style="font-family:Times New Roman,serif;'
        'font-size:10.0pt;color:#000000"> setserial</span></b></p>\n'
        '<p style="top:9pt;left:1pt;line-height:14.6pt"><span style="font-family:SourceSansPro,serif;'
        'font-size:14.6pt;color:#707070">Contents</span></p>'
    )
    bullet, heading = pdf_text._html_line_spans(page_html)
    assert bullet == [(10.0, 1, False), (10.0, 9, True)]
    assert pdf_text._line_style(bullet, first_bold=False) == (10.0, True)  # 9 of 10 characters bold
    assert pdf_text._line_style(heading, first_bold=False) == (14.6, False)
    assert pdf_text._line_style(heading, first_bold=True) == (14.6, True)  # SourceSansPro-Black, by its name


def test_a_turned_page_is_read_as_it_is_shown(landscape):
    # drawn sideways on a portrait page and turned by /Rotate 90: as drawn, its rows run down the page
    page = pymupdf.open(landscape.pdf(lambda doc: None))[1]
    assert page.rect.height == 595
    for styled in (False, True):
        reading = pdf_text.read_page(page, styled=styled)
        assert [line.text for line in reading.lines] == [f"row {row} of the turned page" for row in range(1, 5)]
        assert [round(line.y0) for line in reading.lines] == [round(row[1]) for row in landscape.ROWS_SHOWN]
        assert reading.height == 595


def test_mupdfs_json_with_a_control_character_in_a_text_is_read_all_the_same():
    """MuPDF writes a control character of a text as it is, which JSON does not allow."""
    line = {"bbox": {"x": 7200, "y": 9000, "w": 5000, "h": 1200}, "font": {"name": "Times-Bold", "weight": "bold",
                                                                          "size": 1200}, "text": "a\x01b"}
    printed = json.dumps({"blocks": [{"type": "text", "lines": [line]}, {"type": "image"}]}, ensure_ascii=False)
    printed = printed.replace("\\u0001", "\x01").encode()
    page = pdf_text._json_page(printed)
    assert [(block.type, [(line.text, line.font.weight, line.bbox.w) for line in block.lines]) for block in page.blocks] == [
        ("text", [("a\x01b", "bold", 5000)]), ("image", [])
    ]
