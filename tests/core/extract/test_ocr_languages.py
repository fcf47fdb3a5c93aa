"""OCR reads with the first language, and again with others only when the text needs them."""

from __future__ import annotations

import pymupdf
import pytest
from PIL import Image, ImageDraw

from linkly_ls.core.extract import ocr
from linkly_ls.core.extract.base import ExtractLimits

TSV_HEADER = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"


def tsv_row(line: int, word: str, confidence: float) -> str:
    return f"5\t1\t1\t1\t{line}\t1\t0\t0\t10\t10\t{confidence}\t{word}"


def test_tsv_words_become_lines_with_a_weighted_confidence():
    rows = [
        TSV_HEADER,
        "4\t1\t1\t1\t1\t0\t0\t0\t10\t10\t-1\t",
        tsv_row(1, "Hello", 90),
        tsv_row(1, "world", 90),
        tsv_row(2, "中", 30),
        tsv_row(2, "文", 30),
        tsv_row(2, " ", 95),
    ]
    reading = ocr.parse_tsv("\n".join(rows), "eng")
    assert reading.lines == ["Hello world", "中文"]
    assert reading.confidence == pytest.approx((90 * 10 + 30 * 2) / 12)


def test_no_words_means_no_confidence():
    assert ocr.parse_tsv(TSV_HEADER, "eng").confidence == 0.0


class RecordingTesseract:
    """Wraps `_read` to record the language sets tesseract was asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.asked: list[str] = []
        real = ocr._read

        def read(binary: str, pixels: bytes, languages: str) -> ocr.OcrReading:
            self.asked.append(languages)
            return real(binary, pixels, languages)

        monkeypatch.setattr(ocr, "_read", read)


def test_english_scan_is_read_once_with_english(corpus, monkeypatch):
    recorder = RecordingTesseract(monkeypatch)
    with Image.open(corpus / "scans/ocr-sample.jpg") as image:
        lines = ocr.ocr_image(image, ExtractLimits())
    assert recorder.asked == ["eng"]
    assert "The quick brown dog jumped over the" in " ".join(lines)


def gray_image(page: pymupdf.Page, clip: pymupdf.Rect) -> Image.Image:
    """The `clip` part of a page rendered at 300 dpi in grey, as the OCR reads pages."""
    pixmap = page.get_pixmap(dpi=300, colorspace=pymupdf.csGRAY, clip=clip)
    return Image.frombytes("L", (pixmap.width, pixmap.height), pixmap.samples)


def test_french_scan_is_read_again_with_french(corpus, monkeypatch):
    recorder = RecordingTesseract(monkeypatch)
    page = pymupdf.open(corpus / "scans/lettre-francais.pdf")[0]
    lines = ocr.ocr_image(gray_image(page, page.rect), ExtractLimits())
    assert recorder.asked == ["eng", "fra"]
    assert "île" in " ".join(lines)


def test_chinese_page_falls_back_to_every_language(corpus, monkeypatch):
    recorder = RecordingTesseract(monkeypatch)
    page = pymupdf.open(corpus / "books/debian/debian-reference.zh-cn.pdf")[40]
    top_third = pymupdf.Rect(0, 0, page.rect.width, page.rect.height / 3)
    lines = ocr.ocr_image(gray_image(page, top_third), ExtractLimits())
    assert recorder.asked == ["eng", "eng+fra+deu+chi_sim"]
    assert "命名管道" in "".join(lines)


def test_a_single_language_is_read_once(corpus, monkeypatch):
    recorder = RecordingTesseract(monkeypatch)
    with Image.open(corpus / "scans/ocr-sample.jpg") as image:
        ocr.ocr_image(image, ExtractLimits(ocr_languages="deu"))
    assert recorder.asked == ["deu"]


def test_a_picture_without_words_is_read_once(monkeypatch):
    recorder = RecordingTesseract(monkeypatch)
    image = Image.new("L", (1200, 800), 255)
    drawing = ImageDraw.Draw(image)
    drawing.ellipse((200, 150, 700, 650), fill=0)
    drawing.rectangle((800, 200, 1100, 600), outline=0, width=12)
    assert ocr.ocr_image(image, ExtractLimits()) == []
    assert recorder.asked == ["eng"]
