"""Text lines of one PDF page in reading order, with the font facts outline detection needs.

PyMuPDF's `sort=True` interleaves the columns of a two-column page, so blocks
are ordered here: on a two-column page each band between full-width blocks is
read left column first, then right column; other pages are read top to bottom.

A page's lines and boxes come from MuPDF's own JSON of its text page (read into
the typed structures `_JsonPage`), whose lines carry only their first
character's font. That is enough where the bookmarks give the outline (plain
reading). Where fonts matter (headings found by font, the title on page 1:
styled reading), each line's style is taken from MuPDF's HTML of the same text
page, which writes every span with its font and size: the size covering most
characters, and bold when nearly all are. That costs about 0.7 of reading
PyMuPDF's text dict, which gives the same lines and styles (the dict is still
read where MuPDF cannot print the page). A line keeps every character of a
line that crosses the page edge; lines wholly off the page are left out.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import html
import json
import math
import re

import msgspec
import pymupdf

from linkly_ls.core.extract.pdf_reading_order import order_blocks

if TYPE_CHECKING:
    from linkly_ls.core.extract.pdf_links import PageLink

#: keep whitespace; ligatures are expanded (ﬁ -> fi) so search finds the words. No TEXT_MEDIABOX_CLIP: it
#: cut a line crossing the page edge to a few letters ("gzip foo" -> "i f") and costs 15 % of the
#: page reading; text wholly off the page is still left out, as the text dict keeps only what overlaps it
TEXT_FLAGS = pymupdf.TEXT_PRESERVE_WHITESPACE

#: MuPDF's JSON gives coordinates and sizes as integers, scaled by this
_JSON_SCALE = 100.0
_print_json = getattr(pymupdf.mupdf, "fz_print_stext_page_as_json", None)
_print_html = getattr(pymupdf.mupdf, "fz_print_stext_page_as_html", None)
#: MuPDF's HTML of a text page: a `<p>` a line, in the order of the JSON's lines, and in it a `<span>`
#: whenever the font changes, after `<b>`, `<i>`, `<tt>`, `<sup>` as the font and position call for
_HTML_LINE = re.compile(r"<p style=[^>]*>(.*?)</p>", re.S)
_HTML_SPAN = re.compile(r'((?:<[a-z]{1,3}>)*)<span style="font-family:([^,;"]*)[^"]*?font-size:([0-9.]+)pt[^"]*">([^<]*)</span>')


class _JsonBox(msgspec.Struct, frozen=True):
    x: float
    y: float
    w: float
    h: float


class _JsonFont(msgspec.Struct, frozen=True):
    name: str = ""
    weight: str = ""
    size: float = 0.0


class _JsonLine(msgspec.Struct):
    bbox: _JsonBox
    font: _JsonFont = _JsonFont()
    text: str = ""


class _JsonBlock(msgspec.Struct):
    type: str = ""
    lines: list[_JsonLine] = []


class _JsonPage(msgspec.Struct):
    """The fields of MuPDF's JSON of a text page that the reading uses: decoded into these types (other
    fields skipped), which takes a quarter of the CPU of `json.loads` into dicts."""

    blocks: list[_JsonBlock] = []


_JSON_PAGE = msgspec.json.Decoder(_JsonPage)
_BOLD_FLAG = pymupdf.TEXT_FONT_BOLD
_BOLD_NAME_PARTS = ("bold", "black", "heavy", "semibold", "demi", "cmbx", "cmb10")


@dataclass(slots=True)
class PdfLine:
    """One visual line of text; `number` is its line in the document once written (slots: made for every line)."""

    text: str
    y0: float
    size: float
    bold: bool
    block: int
    gapped: bool = False  # pieces far apart on one baseline: a table row, not running text
    number: int = 0


@dataclass
class PdfPage:
    index: int
    height: float
    transform: pymupdf.Matrix
    lines: list[PdfLine] = field(default_factory=list)
    marker_line: int = 0
    ocr_lines: list[str] = field(default_factory=list)
    #: read with every span's font (False: each line's size and weight are its first character's)
    styled: bool = True
    #: the page's link annotations, read while it was loaded (`pdf_links.page_links`)
    links: list[PageLink] = field(default_factory=list)


#: one line as both readings hand it on: text, box (x0, y0, x1, y1), font size, bold
_RawLine = tuple[str, tuple[float, float, float, float], float, bool]


def read_page(page: pymupdf.Page, styled: bool = True) -> PdfPage:
    """The page's lines in reading order; `styled=False` reads it the cheap way (see the module's text).

    Runs for every line of every page, so the test that joins two pieces of one visual line
    is written out inline: their boxes overlap vertically by at least 0.6 of the smaller one's
    height and the second starts right of the first's end (1 pt of slack); the page's box is
    asked for once.
    """
    rect = page.rect
    blocks = _plain_blocks(page, rect, styled)
    result = PdfPage(index=page.number, height=rect.height, transform=page.transformation_matrix, styled=styled or blocks is None)
    if blocks is None:
        blocks = _styled_blocks(page)
    lines = result.lines
    for block_index, block in enumerate(order_blocks(blocks, rect.width)):
        previous: PdfLine | None = None
        top = bottom = right = 0.0  # of the line being built
        for text, box, size, bold in block["lines"]:
            x0, y0, x1, y1 = box
            if previous is not None:
                height = min(bottom - top, y1 - y0)
                if height > 0 and min(bottom, y1) - max(top, y0) >= 0.6 * height and x0 >= right - 1:
                    joiner = "" if previous.text.endswith(" ") or text.startswith(" ") else " "
                    previous.text += joiner + text
                    previous.gapped = previous.gapped or x0 - right > 1.5 * max(previous.size, 1.0)
                    right, bottom = x1, max(bottom, y1)
                    continue
            previous = PdfLine(text, y0, size, bold, block_index)
            top, right, bottom = y0, x1, y1
            lines.append(previous)
    for line in lines:
        line.text = " ".join(line.text.split())
    return result


def _shown_text_page(page: pymupdf.Page) -> pymupdf.TextPage | None:
    """For a page turned by /Rotate, its text as the page is shown; None for any other page.

    MuPDF reads a page's text as it is drawn, before the turn. A turned page is almost always drawn
    sideways so that it shows upright (a landscape table, a slide, a scan put right), so its lines
    would run down the drawn page. Read as shown, they run across, in the coordinates in which
    MuPDF also gives the page's link boxes and every link's and bookmark's target point.
    """
    if not page.rotation % 360:
        return None
    return page.get_textpage(flags=TEXT_FLAGS, matrix=page.rotation_matrix)


def _styled_blocks(page: pymupdf.Page) -> list[dict]:
    """The text blocks of PyMuPDF's text dict, each line with the style covering most of its characters."""
    blocks: list[dict] = []
    for block in page.get_text("dict", flags=TEXT_FLAGS, textpage=_shown_text_page(page))["blocks"]:
        if block.get("type") != 0:
            continue
        lines: list[_RawLine] = []
        chars = 0
        for line in block["lines"]:
            spans = [span for span in line["spans"] if span["text"]]
            text = spans[0]["text"] if len(spans) == 1 else "".join(span["text"] for span in spans)
            chars += len(text)
            if text and not text.isspace():
                lines.append((text, line["bbox"], *_dominant_style(spans)))
        blocks.append({"bbox": block["bbox"], "lines": lines, "chars": chars})
    return blocks


def _plain_blocks(page: pymupdf.Page, rect: pymupdf.Rect, styled: bool = False) -> list[dict] | None:
    """The page's text blocks from MuPDF's JSON, shaped like `_styled_blocks`'s.

    A JSON line carries its first character's font only: that is its style unless `styled`, where
    each line's style comes from MuPDF's HTML of the same text page (`_html_line_spans`).
    None when this MuPDF cannot write JSON (or HTML) or wrote something unreadable, or the two
    disagree on the lines, or a line with letters has no style in the HTML: the caller reads the dict.
    """
    if _print_json is None or (styled and _print_html is None):
        return None
    try:
        text_page = (_shown_text_page(page) or page.get_textpage(flags=TEXT_FLAGS)).this
        data = _json_page(_printed(_print_json, text_page, _JSON_SCALE))
        styles = _html_line_spans(_printed(_print_html, text_page, 0).decode("utf-8", "replace")) if styled else None
    except (RuntimeError, ValueError, AttributeError):
        return None
    if styles is not None and len(styles) != _text_line_count(data):
        return None
    left, top, right, bottom = rect
    blocks: list[dict] = []
    number = -1  # of the line among all the page's lines (what `styles` is indexed by)
    for block in data.blocks:
        if block.type != "text":
            continue
        lines: list[_RawLine] = []
        chars = 0
        block_x0 = block_y0 = math.inf
        block_x1 = block_y1 = -math.inf
        for line in block.lines:
            number += 1
            corner = line.bbox
            x0, y0 = corner.x / _JSON_SCALE, corner.y / _JSON_SCALE
            x1, y1 = x0 + corner.w / _JSON_SCALE, y0 + corner.h / _JSON_SCALE
            if x1 < left or x0 > right or y1 < top or y0 > bottom:
                continue
            if x0 < block_x0:
                block_x0 = x0
            if y0 < block_y0:
                block_y0 = y0
            if x1 > block_x1:
                block_x1 = x1
            if y1 > block_y1:
                block_y1 = y1
            text = line.text
            chars += len(text)
            if text and not text.isspace():
                font = line.font
                bold = font.weight == "bold" or _is_bold_font(font.name)
                if styles is not None:
                    size, bold = _line_style(styles[number], bold)
                    if not size and any(char.isalnum() for char in text):
                        return None  # the HTML did not read as expected (another MuPDF's format?): use the dict
                else:
                    size = round(font.size / _JSON_SCALE, 1)
                lines.append((text, (x0, y0, x1, y1), size, bold))
        if block_y0 != math.inf:  # a line on the page
            blocks.append({"bbox": (block_x0, block_y0, block_x1, block_y1), "lines": lines, "chars": chars})
    return blocks


def _json_page(printed: bytes) -> _JsonPage:
    """MuPDF's JSON of a text page, read into `_JsonPage`. MuPDF writes a control character in a text as
    it is, which JSON does not allow: such a page is read by the standard library, which does."""
    try:
        return _JSON_PAGE.decode(printed)
    except msgspec.DecodeError:
        return msgspec.convert(json.loads(printed, strict=False), _JsonPage)


def _text_line_count(data: _JsonPage) -> int:
    return sum(len(block.lines) for block in data.blocks if block.type == "text")


def _printed(printer: Callable[..., None], text_page: object, option: float) -> bytes:
    """What one of MuPDF's text page printers (JSON, HTML) writes."""
    buffer = pymupdf.mupdf.fz_new_buffer(16384)
    output = pymupdf.mupdf.FzOutput(buffer)
    printer(output, text_page, option)
    output.fz_close_output()
    return buffer.fz_buffer_extract()


#: one span of a line as MuPDF's HTML gives it: size, characters other than spaces, bold
_HtmlSpan = tuple[float, int, bool]


def _html_line_spans(page_html: str) -> list[list[_HtmlSpan]]:
    """Each line's spans from MuPDF's HTML of a text page. Bold: MuPDF's `<b>`, or a bold name.

    The HTML names a font by its family only (`SourceSansPro` for `SourceSansPro-Black`), so a weight
    told by the name alone is lost here; `_line_style` takes it from the JSON for the first span.
    """
    lines: list[list[_HtmlSpan]] = []
    for line in _HTML_LINE.findall(page_html):
        spans: list[_HtmlSpan] = []
        for tags, family, size_text, text in _HTML_SPAN.findall(line):
            if "&" in text:
                text = html.unescape(text)
            spans.append((float(size_text), len(text) - text.count(" "), "<b>" in tags or _is_bold_font(family)))
        lines.append(spans)
    return lines


def _line_style(spans: list[_HtmlSpan], first_bold: bool) -> tuple[float, bool]:
    """A line's (size, bold) as `_dominant_style` gives them from the text dict's spans: the size
    covering most characters, bold when 80 % or more of them are. `first_bold`: the JSON's word on the
    first span's font (the font of the line's first character), with its whole name."""
    sizes: dict[float, int] = {}
    bold_chars = total = 0
    for place, (size, count, bold) in enumerate(spans):
        if count <= 0:
            continue
        sizes[size] = sizes.get(size, 0) + count
        total += count
        if bold or (place == 0 and first_bold):
            bold_chars += count
    if not sizes:
        return 0.0, False
    size = next(iter(sizes)) if len(sizes) == 1 else max(sizes, key=sizes.__getitem__)
    return round(size, 1), bold_chars >= 0.8 * total


def body_font_size(pages: list[PdfPage]) -> float:
    """The most common font size, weighted by characters."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[round(line.size * 2) / 2] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _dominant_style(spans: list[dict]) -> tuple[float, bool]:
    """The font size covering most characters, and whether (nearly) all characters are bold.

    Runs for every line of every page, so it is written for speed: PyMuPDF's
    spans always carry "size", "flags" and "font".
    """
    if len(spans) == 1:  # most lines: the loop below reduces to this
        span = spans[0]
        if len(span["text"]) == span["text"].count(" "):
            return 0.0, False
        return round(span["size"], 1), bool(span["flags"] & _BOLD_FLAG) or _is_bold_font(span["font"])
    sizes: dict[float, int] = {}
    bold_chars = 0
    total = 0
    for span in spans:
        text = span["text"]
        count = len(text) - text.count(" ")
        if count <= 0:
            continue
        size = span["size"]
        sizes[size] = sizes.get(size, 0) + count
        total += count
        if span["flags"] & _BOLD_FLAG or _is_bold_font(span["font"]):
            bold_chars += count
    if not sizes:
        return 0.0, False
    size = next(iter(sizes)) if len(sizes) == 1 else max(sizes, key=sizes.__getitem__)
    return round(size, 1), bold_chars >= 0.8 * total


@lru_cache(maxsize=512)
def _is_bold_font(name: str) -> bool:
    lowered = name.lower()
    return any(part in lowered for part in _BOLD_NAME_PARTS)
