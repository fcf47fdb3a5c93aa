"""PDF: pages, bookmarks placed on their lines, font-detected outlines, reading order, odd files."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pymupdf
import pytest

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract import pdf as pdf_extractor
from linkly_ls.core.extract.base import ExtractLimits

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
BOOKMARKED = ["papers/latex/pdflatex-outline.pdf", "papers/debian/maint-guide.en.pdf", "books/R/R-intro.pdf"]


def page_range(document, page_number: int) -> tuple[int, int]:
    start = document.page_starts[page_number - 1]
    end = document.page_starts[page_number] - 1 if page_number < len(document.page_starts) else len(document.lines)
    return start, end


@pytest.mark.parametrize("relative", BOOKMARKED)
def test_bookmarks_become_the_outline_in_order(extracted, check, corpus, relative):
    document = extracted(relative)
    with pymupdf.open(corpus / relative) as pdf:
        toc = pdf.get_toc()
        page_count = pdf.page_count
    nodes = check.flatten(document.outline)
    assert [(node.level, node.title) for node in nodes] == [(level, " ".join(title.split())) for level, title, _ in toc]
    assert len(document.page_starts) == page_count
    for node, (_level, title, page) in zip(nodes, toc):
        start, end = page_range(document, page)
        assert start <= node.start_line <= end, f"{title!r} should start on page {page}"


@pytest.mark.parametrize("relative", BOOKMARKED)
def test_bookmarks_point_at_the_line_with_their_title(extracted, check, corpus, relative):
    document = extracted(relative)
    with pymupdf.open(corpus / relative) as pdf:
        toc = pdf.get_toc()
        page_texts = {page: check.normalise(pdf[page - 1].get_text()) for _level, _title, page in toc}
    nodes = check.flatten(document.outline)
    checked = 0
    for node, (_level, title, page) in zip(nodes, toc):
        if check.normalise(title) in page_texts[page]:
            checked += 1
            assert check.title_on_line(document, node, wrapped=True), (title, document.lines[node.start_line - 1])
    assert checked >= 0.9 * len(toc)


def test_every_page_starts_with_its_marker(extracted):
    document = extracted("books/R/R-intro.pdf")
    assert document.title == "An Introduction to R"
    for number, start in enumerate(document.page_starts, start=1):
        assert document.lines[start - 1] == f"--- page {number} ---"


def test_unbookmarked_pdf_gets_an_outline_from_fonts(extracted, check):
    document = extracted("papers/standards/fhs-3.0.pdf")
    assert document.title == "Filesystem Hierarchy Standard"
    nodes = check.flatten(document.outline)
    levels = {node.title: node.level for node in nodes}
    chapters = [node.title for node in document.outline if node.title.startswith("Chapter ")]
    assert chapters == [
        "Chapter 1. Introduction",
        "Chapter 2. The Filesystem",
        "Chapter 3. The Root Filesystem",
        "Chapter 4. The /usr Hierarchy",
        "Chapter 5. The /var Hierarchy",
        "Chapter 6. Operating System Specific Annex",
        "Chapter 7. Appendix",
    ]
    assert levels["1.1. Purpose"] == 2
    # a heading set on two lines is one outline entry, on one line
    assert levels["3.4. /bin : Essential user command binaries (for use by all users)"] == 2
    assert 40 <= len(nodes) <= 120
    assert not any("...." in node.title for node in nodes)  # table-of-contents lines are not headings
    check.outline_points_at_titles(document)
    check.well_formed(document)


def test_two_columns_are_read_column_by_column(extracted, check):
    document = extracted("papers/latex/multicolumn.pdf")
    assert document.title == "Two-Column Document with Lorem Ipsum"
    text = "\n".join(document.lines)
    left_first = text.index("This is a sample document with two columns filled")
    left_last = text.index("Nulla malesuada porttitor diam")
    right_first = text.index("pellentesque ante. Phasellus adipiscing semper elit.")
    assert left_first < left_last < right_first
    assert "ﬁ" not in text  # ligatures are expanded so the words can be found
    assert [node.title for node in check.flatten(document.outline)][0] == "Two-Column Document with Lorem Ipsum"


def test_mistitled_bookmarks_use_their_target_point(extracted, check):
    document = extracted("odd/mistitled-outlines.pdf")
    nodes = check.flatten(document.outline)
    assert len(nodes) == 27
    first_lines = [document.lines[node.start_line - 1] for node in nodes[:5]]
    assert [node.title for node in nodes[:5]] == ["First", "Second", "Third", "Fourth", "Fifth"]
    assert first_lines == ["1 Foo", "2 Bar", "3 Baz", "4 Foo", "5 Bar"]


def test_a_pdf_cut_short_is_an_error_that_says_so(tmp_path):
    # repaired into a document of no page, it was indexed as an empty one: a truncated copy silently
    # replaced the text the index held
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes((FIXTURES / "papers/pdflatex-outline.pdf").read_bytes()[:20_000])
    with pytest.raises(ExtractionError, match="not a readable PDF: no page of it can be read"):
        extract_file(truncated)


def test_a_page_tree_as_broken_as_its_bookmarks_is_an_error_that_says_so(corpus):
    with pytest.raises(ExtractionError, match="not a readable PDF: no page of it can be read"):
        extract_file(corpus / "odd/cyclic-toc.pdf")


@pytest.mark.parametrize("relative", ["odd/locked-statement.pdf", "odd/graph-encrypted.pdf"])
def test_encrypted_pdfs_say_they_need_a_password(corpus, relative):
    with pytest.raises(ExtractionError, match="password-protected PDF: needs a password to open"):
        extract_file(corpus / relative)


@pytest.mark.parametrize("relative", ["odd/header-only.pdf", "odd/fhs-3.0-partial-download.pdf"])
def test_truncated_pdfs_are_a_clear_error(corpus, relative):
    with pytest.raises(ExtractionError, match="damaged or incomplete"):
        extract_file(corpus / relative)


def test_scanned_pdf_without_ocr_keeps_its_page_and_says_why(corpus):
    limits = replace(ExtractLimits(), ocr=False)
    document = extract_file(corpus / "scans/huckleberry-finn-p22.pdf", limits)
    assert document.lines == ["--- page 1 ---"]
    assert document.text_missing_reason and "OCR" in document.text_missing_reason
    assert any("without a text layer" in warning for warning in document.warnings)


def test_scanned_french_letter_is_read_by_ocr(extracted):
    document = extracted("scans/lettre-francais.pdf")
    text = " ".join(document.lines)
    for word in ("whisky", "intérieure", "côté", "l'alcôve", "bûches", "l'âtre", "capharnaüm"):
        assert word in text
    assert any("OCR" in warning for warning in document.warnings)
    assert document.text_missing_reason is None


def test_the_largest_pdf_is_fast_and_complete(corpus, check):
    started = time.process_time()  # CPU time: other work on a shared machine does not count
    document = extract_file(corpus / "books/R/R-fullrefman.pdf")
    elapsed = time.process_time() - started
    assert elapsed < 30, f"R-fullrefman.pdf took {elapsed:.1f} s of CPU time"
    assert len(document.page_starts) == 2415
    assert len(check.flatten(document.outline)) == 1426
    assert document.title == "R: A Language and Environment for Statistical Computing"


def test_a_line_cut_by_the_page_edge_keeps_its_words_and_text_off_the_page_is_left_out(tmp_path):
    # A table row running over the bottom edge (as in the Debian reference) was read as "i f"
    # when MuPDF clipped glyphs to the page; text wholly outside the page stays out.
    doc = pymupdf.open()
    page = doc.new_page(width=300, height=200)
    page.insert_text((20, 50), "A first line of ordinary text", fontsize=10)
    page.insert_text((20, 206), "gzip foo", fontsize=10, fontname="cour")
    page.insert_text((20, 260), "entirely below the page", fontsize=10)
    path = tmp_path / "edge.pdf"
    doc.save(path)
    lines = extract_file(path).lines
    assert "gzip foo" in lines
    assert not any("below the page" in line for line in lines)


def test_link_annotations_become_links_to_lines_or_urls(extracted):
    document = extracted("papers/standards/fhs-3.0.pdf")
    inside = [link for link in document.links if link.target_line is not None]
    assert len(inside) >= 150  # a contents line links its title and its page number to one place: one link
    first = inside[0]
    assert first.target == "#page=8" and document.lines[first.line - 1].startswith("1.1. Purpose")
    assert document.lines[first.target_line - 1] == "1.1. Purpose"
    urls = [link for link in extracted("books/R/R-intro.pdf").links if link.target.startswith("mailto:")]
    assert urls and all(link.target_line is None for link in urls)


def test_a_bookmark_to_a_point_of_a_turned_page_starts_at_the_line_there(landscape):
    def bookmark_row_three(doc):
        doc.set_toc([[1, "Opening", 1], [1, "Table", 2]])
        table = next(xref for xref in range(1, doc.xref_length()) if doc.xref_get_key(xref, "Title")[1] == "Table")
        x, y = landscape.user_space(doc[1], (142, landscape.ROWS_SHOWN[2][1] - 8))  # just above row 3
        doc.xref_set_key(table, "A", "null")
        doc.xref_set_key(table, "Dest", f"[{doc[1].xref} 0 R /XYZ {x} {y} 0]")

    document = extract_file(landscape.pdf(bookmark_row_three))
    table = document.outline[1]
    assert table.title == "Table"
    assert document.lines[table.start_line - 1] == "row 3 of the turned page"


def test_a_bookmark_whose_destination_gives_only_a_top_starts_at_the_line_there(tmp_path):
    # hyperref writes /XYZ null TOP null for many sections: MuPDF gives no x, and the top alone decides
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    for row in range(6):
        page.insert_text((72, 100 + 100 * row), f"paragraph {row + 1} of the page", fontsize=12)
    doc.set_toc([[1, "Part five", 1]])
    part = next(xref for xref in range(1, doc.xref_length()) if doc.xref_get_key(xref, "Title")[1] == "Part five")
    doc.xref_set_key(part, "A", "null")
    doc.xref_set_key(part, "Dest", f"[{page.xref} 0 R /XYZ null {842 - 480} null]")  # just above paragraph 5
    path = tmp_path / "top-only.pdf"
    doc.save(path)
    doc.close()
    document = extract_file(path)
    assert document.lines[document.outline[0].start_line - 1] == "paragraph 5 of the page"


@pytest.mark.parametrize("relative", ["papers/pdflatex-outline.pdf", "papers/multicolumn.pdf"])
def test_a_pdf_read_from_memory_is_the_one_read_from_disk(monkeypatch, relative):
    path = FIXTURES / relative
    assert path.stat().st_size <= pdf_extractor.IN_MEMORY_MAX_BYTES
    in_memory = extract_file(path)
    monkeypatch.setattr(pdf_extractor, "IN_MEMORY_MAX_BYTES", 0)  # every file over the cap: MuPDF reads it from disk
    from_disk = extract_file(path)
    assert in_memory.lines == from_disk.lines and len(in_memory.lines) > 20
    assert in_memory.title == from_disk.title
    assert in_memory.outline == from_disk.outline
    assert in_memory.links == from_disk.links
    assert in_memory.page_starts == from_disk.page_starts


def test_a_pdf_that_cannot_be_read_from_disk_is_a_clear_error(tmp_path):
    with pytest.raises(ExtractionError, match="cannot read file"):
        pdf_extractor.open_pdf(tmp_path / "gone.pdf")


def test_a_first_page_title_of_mostly_symbols_is_no_title():
    """A font whose encoding maps letters to dingbats titled a paper `P❡♥❛❧✐③❡❞…`: its file name tells more."""
    import pymupdf

    from linkly_ls.core.extract.pdf import _largest_text
    from linkly_ls.core.extract.pdf_text import PdfLine, PdfPage

    def page(*texts: str) -> PdfPage:
        return PdfPage(index=0, height=800, transform=pymupdf.Matrix(), lines=[PdfLine(text, 40.0 * n, 20.0, True, n) for n, text in enumerate(texts)])

    assert _largest_text(page("P❡♥❛❧✐③❡❞ ▲❡❛st ❙q✉❛r❡s")) is None
    assert _largest_text(page("R: A Language for Data Analysis")) == "R: A Language for Data Analysis"
    assert _largest_text(page("数据库管理 2024")) == "数据库管理 2024"


def _scan_with_text(
    path: Path, text: str, at: tuple[float, float], image_box: pymupdf.Rect | None = None, size: tuple[int, int] = (612, 792)
) -> Path:
    """A one-page PDF: the sample scan over `image_box` (the whole page by default) and a line of real text."""
    with pymupdf.open() as pdf:
        page = pdf.new_page(width=size[0], height=size[1])
        page.insert_image(image_box or page.rect, filename=str(FIXTURES / "scans/ocr-sample.jpg"), keep_proportion=False)
        page.insert_text(at, text, fontsize=9)
        pdf.save(path)
    return path


def test_a_scan_whose_only_text_is_a_stamp_in_its_margin_is_read_by_ocr(tmp_path):
    """A fax header, a Bates number: any line of text kept a scanned page from OCR, its body lost."""
    from linkly_ls.core.extract import ocr

    faxed = _scan_with_text(tmp_path / "faxed.pdf", "FAX 2024-01-03 10:42 +49 30 1234567 P.001", (36, 20))
    unread = extract_file(faxed, replace(ExtractLimits(), ocr=False))
    assert any("1 page(s) are scanned images without a text layer" in warning for warning in unread.warnings)
    if ocr.tesseract_path() is None:
        pytest.skip("tesseract is not installed")
    document = extract_file(faxed)
    text = "\n".join(document.lines)
    assert "The quick brown dog jumped over the" in " ".join(document.lines)
    assert text.count("FAX 2024-01-03") == 1  # the stamp once: its reading in the image is left out
    assert any("was read by OCR" in warning for warning in document.warnings)


def test_a_figure_with_text_on_the_page_or_a_stamp_over_part_of_a_page_is_not_taken_for_a_scan(tmp_path):
    caption = _scan_with_text(tmp_path / "figure.pdf", "Figure 3: the sample scan.", (36, 400))
    small = _scan_with_text(tmp_path / "small.pdf", "Page 7", (36, 780), pymupdf.Rect(36, 36, 400, 500))
    slide = _scan_with_text(tmp_path / "slide.pdf", "Results", (36, 40), size=(960, 540))  # a title over a photo
    for path in (caption, small, slide):
        document = extract_file(path, replace(ExtractLimits(), ocr=False))
        assert not any("without a text layer" in warning for warning in document.warnings), path.name


def test_a_reference_list_set_with_hanging_indents_reads_as_paragraphs_without_blank_lines(tmp_path):
    """MuPDF makes a block of each line of a hanging-indent entry: a blank line between `Ma-` and `trix`
    kept the entry's words and phrases from search and grep."""
    with pymupdf.open() as pdf:
        page = pdf.new_page()
        top = 100
        for first, rest in [
            ("Andrews DWK (1991). Heteroskedasticity and Autocorrelation Consistent Covariance Ma-", "trix Estimation."),
            ("Bai J, Perron P (1998). Estimating and Testing Linear Models with Multiple Struc-", "tural Changes."),
        ]:
            page.insert_text((81, top), first, fontsize=9)
            page.insert_text((92, top + 11), rest, fontsize=9)
            top += 22
        page.insert_text((81, top + 30), "A paragraph after a gap.", fontsize=9)
        pdf.save(tmp_path / "references.pdf")
    document = extract_file(tmp_path / "references.pdf", replace(ExtractLimits(), ocr=False))
    assert document.lines[1:] == [
        "Andrews DWK (1991). Heteroskedasticity and Autocorrelation Consistent Covariance Ma-",
        "trix Estimation.",
        "Bai J, Perron P (1998). Estimating and Testing Linear Models with Multiple Struc-",
        "tural Changes.",
        "",
        "A paragraph after a gap.",
    ]


def test_a_double_spaced_filing_on_numbered_paper_reads_as_paragraphs_without_its_line_numbers(tmp_path):
    """Court filings: MuPDF made a block of each double-spaced line, so every line was a paragraph, and the
    margin's numbers 1 to 28 stood between them: a quote wrapping a line was found by neither search nor grep."""
    text = [
        "1. This action arises from the award of Harbor Dredging Contract HD-2023-14 to",
        "Gulfstream Marine Works, Inc. on February 3, 2024.",
        "2. Defendant Daniel O'Brien directed procurement staff to \"make sure",
        "the numbers work before Thursday.\"",
    ] * 3
    with pymupdf.open() as pdf:
        page = pdf.new_page(width=612, height=792)
        for number in range(1, 29):
            page.insert_text((40, 60 + 24 * number), str(number), fontsize=9)
        for index, line in enumerate(text):
            page.insert_text((72, 60 + 24 * (index + 1)), line, fontsize=11.5)
        pdf.save(tmp_path / "complaint.pdf")
    lines = extract_file(tmp_path / "complaint.pdf", replace(ExtractLimits(), ocr=False)).lines
    assert lines[1:6] == [text[0], text[1], "", text[2], text[3]]  # a paragraph ends on a short line
    assert not any(line.strip().isdigit() for line in lines)


def test_a_new_paragraph_one_line_below_a_short_last_line_keeps_its_blank_line(tmp_path):
    """LaTeX sets paragraphs without spacing: the next one starts one line below the last, as a wrapped
    entry's next line does, and was glued to it."""
    body = "Lorem ipsum dolor sit amet, consectetuer adipiscing elit, sed diam nonummy nibh euismod"
    with pymupdf.open() as pdf:
        page = pdf.new_page()
        lines = [(72, body), (72, body), (72, "tincidunt ut laoreet."), (87, body), (72, body), (72, "dolore magna.")]
        for index, (left, text) in enumerate(lines):
            page.insert_text((left, 100 + 12 * index), text, fontsize=10)
        pdf.save(tmp_path / "paragraphs.pdf")
    read = extract_file(tmp_path / "paragraphs.pdf", replace(ExtractLimits(), ocr=False)).lines
    assert read[1:] == [body, body, "tincidunt ut laoreet.", "", body, body, "dolore magna."]
