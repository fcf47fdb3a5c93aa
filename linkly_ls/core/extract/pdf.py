"""PDF with PyMuPDF: text per page in reading order, bookmarks or font-detected headings as the outline.

Every page starts with a `--- page N ---` line. Pages without a text layer
(scans) are read by OCR when tesseract is available; otherwise the page keeps
its marker and the document says the text is missing and why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path

import pymupdf
from PIL import Image

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Heading, LineBuilder
from linkly_ls.core.extract.base import READ_ERROR, ExtractLimits, title_from_path
from linkly_ls.core.extract.ocr import OCR_PENDING, OcrError, ocr_image, ocr_unavailable_reason
from linkly_ls.core.extract.pdf_links import NamedDestinations, page_links, read_links
from linkly_ls.core.extract.pdf_outline import bookmark_headings, font_headings, has_bookmarks, read_bookmarks
from linkly_ls.core.extract.pdf_text import PdfLine, PdfPage, read_page

OCR_DPI = 300
#: a first page's largest text titles the PDF only when at least this share of its characters are letters
TITLE_LETTER_SHARE = 0.5
#: a first pass OCRs at most this many scanned pages of a PDF, and only one with this many text pages per scan
MAX_FIRST_PASS_OCR_PAGES = 2
TEXT_PAGES_PER_FIRST_PASS_OCR = 100
#: a scan with a stamp (a fax header, a Bates number, "Scanned by ..."): at most STAMP_MAX_CHARS characters
#: of text, all in the top or bottom STAMP_MARGIN of the page, over one image covering SCAN_COVERAGE of it.
#: Any text at all kept such a page from OCR: its body was lost without a word
STAMP_MAX_CHARS = 200
STAMP_MARGIN = 0.15
SCAN_COVERAGE = 0.9
#: the most a line's top lies below the one above's, in font sizes, for them to be lines of one paragraph
#: (type is set 1.2 apart; a paragraph's spacing adds half a line or more)
LINE_PITCH = 1.45
#: a document's own spacing counts from this many pairs of lines on; a line goes on its paragraph up to this
#: much over it, and never over MAX_LINE_PITCH font sizes (triple spacing)
PITCH_SAMPLE_LINES = 8
PITCH_SLACK = 1.15
MAX_LINE_PITCH = 3.0
#: a line at least this share of its page's long lines' length (`_full_line_chars`) was wrapped, not ended
FULL_LINE_SHARE = 0.85
#: the fewest whole numbers counting up by one, each a line of its own, that are a margin's line numbering
LINE_NUMBER_RUN = 10
#: a PDF up to this size is read into memory whole and opened there (`open_pdf`)
IN_MEMORY_MAX_BYTES = 64 * 1024 * 1024

_GENERIC_TITLE = re.compile(
    r"^([\d.]+\s*)?(contents|table of contents|inhaltsverzeichnis|sommaire|table des matières|目录|"
    r"introduction|einleitung|abstract|preface|foreword|index)$",
    re.I,
)
_GENERATOR_TITLE = re.compile(
    r"^(untitled|title|document|slide \d+|microsoft (word|powerpoint) - .*|adobe photoshop pdf|.*\.(docx?|pdf|tex|dvi|indd|qxd|ps|rtf|odt))$",
    re.I,
)

pymupdf.TOOLS.mupdf_display_errors(False)
pymupdf.TOOLS.mupdf_display_warnings(False)


@dataclass
class PageReading:
    """The pages `read_page` made of a range of a PDF's pages, and the page numbers (1-based) it could not read."""

    page_count: int
    start: int
    pages: list[PdfPage] = field(default_factory=list)
    unreadable: list[int] = field(default_factory=list)


def extract(path: Path, limits: ExtractLimits, read: PageReading | None = None) -> ExtractedDocument:
    """`read`: the pages of the whole document, read beforehand (in page ranges by several workers)."""
    doc = open_pdf(path)
    try:
        return _extract_open(doc, path, limits, read)
    finally:
        doc.close()


def read_pages(doc: pymupdf.Document, start: int, stop: int, styled: bool | None = None) -> PageReading:
    """Read pages `start` to `stop` - 1 (0-based); a page MuPDF cannot read stays as an empty page.

    `styled` None: only where fonts matter, the first page (its title) and every page of a
    document without bookmarks (headings are found by font); see `read_page`.
    """
    if styled is None:
        styled = not has_bookmarks(doc)
    reading = PageReading(page_count=doc.page_count, start=start)
    names = NamedDestinations(doc)
    for number in range(start, stop):
        try:
            page = doc[number]
            reading.pages.append(read_page(page, styled=styled or number == 0))
        except Exception:  # noqa: BLE001 - MuPDF raises assorted errors on one broken page; keep the rest
            reading.unreadable.append(number + 1)
            reading.pages.append(PdfPage(index=number, height=0.0, transform=pymupdf.Matrix(1, 1)))
            try:
                page = doc[number]
            except Exception:  # noqa: BLE001 - not even loadable: no links either
                continue
        reading.pages[-1].links = page_links(page, names)
    return reading


def open_pdf(path: Path) -> pymupdf.Document:
    """The PDF, opened from its bytes in memory when it has at most IN_MEMORY_MAX_BYTES.

    MuPDF reads a file it opens itself in small reads, a seek and a read for almost every
    object it loads: about 5 % of its text reading on a folder of papers. A larger file is
    opened from disk so that a worker's memory stays within bounds."""
    try:
        if path.stat().st_size <= IN_MEMORY_MAX_BYTES:
            doc = pymupdf.open(stream=path.read_bytes(), filetype="pdf")
        else:
            doc = pymupdf.open(path, filetype="pdf")
    except OSError as error:
        raise ExtractionError(f"{READ_ERROR}{error.strerror or error}") from error
    except pymupdf.EmptyFileError as error:
        raise ExtractionError("empty PDF file (0 bytes)") from error
    except (pymupdf.FileDataError, RuntimeError, ValueError) as error:
        raise ExtractionError(
            "not a readable PDF: the file is damaged or incomplete (an unfinished download?) "
            "and could not be repaired"
        ) from error
    if doc.needs_pass and not doc.authenticate(""):
        doc.close()
        raise ExtractionError("password-protected PDF: needs a password to open")
    return doc


def _extract_open(
    doc: pymupdf.Document, path: Path, limits: ExtractLimits, read: PageReading | None
) -> ExtractedDocument:
    if doc.page_count == 0:  # a copy cut short, repaired into nothing: no document, but an error that says so
        raise ExtractionError(
            "not a readable PDF: no page of it can be read (its page tree is damaged, or the file is incomplete: "
            "an unfinished download or copy?)"
        )
    warnings: list[str] = []
    if doc.is_repaired:
        warnings.append("the PDF is damaged; PyMuPDF repaired what it could, so some text may be missing")
    if read is None or read.start != 0 or read.page_count != doc.page_count or len(read.pages) != doc.page_count:
        read = read_pages(doc, 0, doc.page_count)
    bookmarks = read_bookmarks(doc)
    if not bookmarks and not all(page.styled for page in read.pages):
        read = read_pages(doc, 0, doc.page_count, styled=True)  # an outline without entries: find headings by font
    pages, unreadable = read.pages, read.unreadable
    if unreadable:
        warnings.append(f"{len(unreadable)} page(s) could not be read: {_page_list(unreadable)}")

    missing_reason = _read_scanned_pages(doc, pages, limits, warnings)
    detected = [] if bookmarks else font_headings(pages)

    builder = LineBuilder()
    _write_pages(builder, pages)
    if bookmarks:
        builder.headings = bookmark_headings(bookmarks, pages)
    else:
        builder.headings = [Heading(level=level, title=line.text, line=line.number) for line, level in detected]
    lines, outline = builder.finish()

    has_text = any(page.lines or page.ocr_lines for page in pages)
    links = read_links(pages, warnings)
    return ExtractedDocument(
        lines=lines,
        title=_title(doc, pages, bookmarks, path),
        doc_type="pdf",
        outline=outline,
        warnings=warnings,
        text_missing_reason=None if has_text else (missing_reason or "the PDF contains no text"),
        page_starts=builder.page_starts,
        links=links,
    )


def _write_pages(builder: LineBuilder, pages: list[PdfPage]) -> None:
    """Write each page under its marker, a blank line between blocks; note where each line landed.

    A page's lines are single lines with their spaces already folded (`pdf_text.read_page`), so they
    are appended as they are, not through `LineBuilder.text`'s splitting and stripping. A block that
    starts where the next line of a full line before it would (`_goes_on`, `_full_line_chars`) gets no
    blank line: MuPDF makes a block of each line of a hanging-indent entry (and of a double-spaced
    filing), and the blank line between `Ma-` and `trix` kept a reference list's words and phrases from
    search and grep."""
    written = builder.lines
    for page in pages:
        _leave_out_line_numbers(page)
    pitch = _line_pitch(pages)
    for page in pages:
        builder.page(f"--- page {page.index + 1} ---")
        page.marker_line = builder.page_starts[-1]
        full = _full_line_chars(page)
        previous: PdfLine | None = None
        for line in page.lines:
            if not line.text:  # the continuation of a heading joined onto its first line, a margin's line number
                continue
            if previous is not None and line.block != previous.block and not (
                len(previous.text) >= full and _goes_on(previous, line, pitch)
            ):
                builder.blank()
            previous = line
            written.append(line.text)
            line.number = len(written)
        if page.ocr_lines:
            builder.text("\n".join(page.ocr_lines))


def _full_line_chars(page: PdfPage) -> float:
    """How long a line of this page is when the text wrapped there rather than a paragraph ending: most of
    the length of its long lines (the upper quartile). A paragraph's last line is short; a LaTeX book's
    next paragraph starts one line below it as a wrapped entry's next line does, and was glued to it."""
    lengths = sorted(len(line.text) for line in page.lines if line.text)
    return FULL_LINE_SHARE * lengths[len(lengths) * 3 // 4] if lengths else 0.0


def _goes_on(above: PdfLine, line: PdfLine, pitch: float = LINE_PITCH) -> bool:
    """`line` starts a block one line's pitch below `above`, in the same font size: the text goes on."""
    return above.size == line.size and 0 < line.y0 - above.y0 <= pitch * line.size


def _line_pitch(pages: list[PdfPage]) -> float:
    """How far apart, in font sizes, a line may lie below the one above and still go on its paragraph:
    LINE_PITCH, or a little over the document's usual line spacing where that is wider (a double-spaced
    filing, each of whose lines MuPDF makes a block: every line was a paragraph, and a phrase wrapping a
    line was found by neither search nor grep)."""
    steps = sorted(
        (line.y0 - above.y0) / line.size
        for page in pages
        for above, line in pairwise([line for line in page.lines if line.text])
        if line.size == above.size and line.size > 0 and 0 < line.y0 - above.y0
    )
    if len(steps) < PITCH_SAMPLE_LINES:
        return LINE_PITCH
    # the lower quartile: a paragraph's own spacing is the closest common one (a manual of one-line entries
    # set apart by half a line has those gaps for its median, and its entries would run together)
    return max(LINE_PITCH, min(steps[len(steps) // 4] * PITCH_SLACK, MAX_LINE_PITCH))


def _leave_out_line_numbers(page: PdfPage) -> None:
    """Empty the lines of a margin's line numbering (pleading paper's 1 to 28, numbered listings): a run
    of at least LINE_NUMBER_RUN lines holding only whole numbers that count up by one. Read as lines of
    their own, they stood between every two lines of the text."""
    numbered = [line for line in page.lines if line.text.isdigit() and len(line.text) <= 4]
    run: list[PdfLine] = []
    for line in numbered + [None]:
        if line is not None and run and int(line.text) == int(run[-1].text) + 1:
            run.append(line)
            continue
        if len(run) >= LINE_NUMBER_RUN:
            for counted in run:
                counted.text = ""
        run = [line] if line is not None else []


def _read_scanned_pages(
    doc: pymupdf.Document, pages: list[PdfPage], limits: ExtractLimits, warnings: list[str]
) -> str | None:
    """OCR pages that have images but no text layer (or only a stamp, `_stamped_scan`); returns why text
    is missing, if it is."""
    scanned = [
        page for page in pages
        if page.height > 0 and (_stamped_scan(doc, page) if page.lines else _has_images(doc, page.index))
    ]
    if not scanned:
        return None
    reason = ocr_unavailable_reason(limits)
    if reason is not None:
        warnings.append(
            f"{len(scanned)} page(s) are scanned images without a text layer and were not read: {reason}"
        )
        return f"scanned pages without a text layer; {reason}"
    if limits.ocr_deferred and not _ocr_now(len(scanned), len(pages)):
        warnings.append(
            f"{OCR_PENDING}: {len(scanned)} scanned page(s) without a text layer are read by OCR "
            "after the other files are indexed"
        )
        return f"{OCR_PENDING}: scanned pages without a text layer are read after the other files"
    most = limits.max_ocr_pages
    if len(scanned) > most:
        warnings.append(
            f"only the first {most} of {len(scanned)} scanned pages were read by OCR ([limits] max_ocr_pages)"
        )
    failed: list[int] = []
    for page in scanned[:most]:
        try:
            stamp = {line.text for line in page.lines}  # a stamp's own text, read again from the image
            page.ocr_lines = [line for line in ocr_image(_render(doc[page.index]), limits) if " ".join(line.split()) not in stamp]
        except OcrError:
            failed.append(page.index + 1)
    read = [page.index + 1 for page in scanned[:most] if page.ocr_lines]
    if read:
        warnings.append(f"text of page(s) {_page_list(read)} was read by OCR and may contain errors")
    if failed:
        warnings.append(f"OCR failed on page(s) {_page_list(failed)}")
    return None if read else "scanned pages without a text layer; OCR found no text"


def _ocr_now(scanned: int, total: int) -> bool:
    """Whether a first pass should OCR a PDF's scanned pages rather than leave them for the second.

    The second pass reads the whole PDF again, so a long text document with a
    scanned cover or two (about 1 s of OCR each) is cheaper to OCR at once
    than to read twice (about 3 ms per text page).
    """
    return scanned <= MAX_FIRST_PASS_OCR_PAGES and total - scanned >= TEXT_PAGES_PER_FIRST_PASS_OCR * scanned


def _has_images(doc: pymupdf.Document, index: int) -> bool:
    try:
        return bool(doc[index].get_images(full=False))
    except (RuntimeError, ValueError):
        return False


def _stamped_scan(doc: pymupdf.Document, page: PdfPage) -> bool:
    """A portrait page whose only text is a stamp in its top or bottom margin over a full-page image: a
    scan. The image's box is read only for pages with that little text (title and divider pages, mostly);
    a landscape one is a slide over a photo far more often than a scan (20 of them cost 28 s of OCR)."""
    if sum(len(line.text) for line in page.lines) > STAMP_MAX_CHARS:
        return False
    margin = STAMP_MARGIN * page.height
    if any(margin < line.y0 < page.height - margin for line in page.lines):
        return False
    try:
        shown = doc[page.index]
        if shown.rect.width > shown.rect.height:  # a slide over a full-bleed photo: a scan with a stamp is a page
            return False
        area = abs(shown.rect)
        boxes = [pymupdf.Rect(image["bbox"]) for image in shown.get_image_info()]
    except (RuntimeError, ValueError):
        return False
    return area > 0 and any(abs(box) >= SCAN_COVERAGE * area for box in boxes)


def _render(page: pymupdf.Page) -> Image.Image:
    zoom = OCR_DPI / 72
    longest = max(page.rect.width, page.rect.height) * zoom
    if longest > 8000:  # oversized pages: keep the render near 8000 px
        zoom *= 8000 / longest
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csGRAY, alpha=False)
    return Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)


def _title(doc: pymupdf.Document, pages: list[PdfPage], bookmarks: list, path: Path) -> str:
    """Metadata title when it is a real one, else the largest text on page 1, else the first bookmark."""
    metadata_title = " ".join(((doc.metadata or {}).get("title") or "").split())
    if metadata_title and not _GENERATOR_TITLE.match(metadata_title) and any(c.isalpha() for c in metadata_title):
        return metadata_title
    largest = _largest_text(pages[0]) if pages else None
    if largest and not _GENERIC_TITLE.match(largest):
        return largest
    first = next((" ".join(b.title.split()) for b in bookmarks if b.title.strip()), "")
    return first if first and not _GENERIC_TITLE.match(first) else title_from_path(path)


def _largest_text(page: PdfPage) -> str | None:
    lines = [line for line in page.lines if line.text]
    if not lines:
        return None
    biggest = max(line.size for line in lines)
    parts: list[str] = []
    for line in lines:
        if abs(line.size - biggest) < 0.5 and (not parts or len(parts) < 3):
            parts.append(line.text)
        elif parts:
            break
    title = " ".join(parts)
    letters = sum(char.isalpha() for char in title)
    shown = sum(not char.isspace() for char in title)
    # a font whose encoding maps letters to dingbats (`P❡♥❛❧✐③❡❞`): mostly symbols, no title to show
    if letters < 3 or letters < TITLE_LETTER_SHARE * shown or len(title) > 200:
        return None
    return title


def _page_list(numbers: list[int]) -> str:
    shown = ", ".join(str(number) for number in numbers[:20])
    return shown + (f" and {len(numbers) - 20} more" if len(numbers) > 20 else "")
