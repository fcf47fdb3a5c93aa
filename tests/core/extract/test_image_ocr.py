"""Images: OCR with tesseract, and indexing by name when OCR is not available."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from linkly_ls.core.extract import extract_file, ocr
from linkly_ls.core.extract.base import ExtractLimits

#: measured: 0.99 of the reference words are found with eng+fra+deu+chi_sim on tesseract 5.3
WORD_OVERLAP_FLOOR = 0.85


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]{3,}", text.lower()))


def test_brochure_ocr_matches_the_reference_text(extracted, corpus):
    document = extracted("scans/linn-brochure.png")
    assert document.title == "linn-brochure"
    assert document.doc_type == "image" and document.text_missing_reason is None
    reference = words((corpus / "scans/linn-brochure.ocr.txt").read_text(encoding="utf-8"))
    found = words("\n".join(document.lines))
    assert len(found & reference) / len(reference) >= WORD_OVERLAP_FLOOR
    assert "The LinnSequencer" in document.lines
    assert all(line == " ".join(line.split()) and line for line in document.lines)


def test_small_jpeg_is_read(extracted):
    text = " ".join(extracted("scans/ocr-sample.jpg").lines)
    assert "The quick brown dog jumped over the" in text


def test_without_tesseract_the_image_is_indexed_by_name(corpus, monkeypatch):
    monkeypatch.setattr(ocr.shutil, "which", lambda name: None)
    document = extract_file(corpus / "scans/typewriter-linzensoep.png")
    assert document.lines == ["typewriter-linzensoep.png"]
    assert document.title == "typewriter-linzensoep"
    assert document.text_missing_reason.startswith("no OCR engine installed")
    assert "tesseract-ocr" in document.text_missing_reason
    assert any("no OCR engine installed" in warning for warning in document.warnings)


def test_ocr_turned_off(corpus):
    document = extract_file(corpus / "screenshots/aptitude.png", replace(ExtractLimits(), ocr=False))
    assert document.lines == ["aptitude.png"]
    assert document.text_missing_reason == ocr.OCR_DISABLED


def test_scanned_pdf_without_tesseract(corpus, monkeypatch):
    monkeypatch.setattr(ocr.shutil, "which", lambda name: None)
    document = extract_file(corpus / "scans/lettre-francais.pdf")
    assert "no OCR engine installed" in document.text_missing_reason


def test_cjk_spacing_and_whitespace_are_cleaned():
    assert ocr.clean_ocr_text("  中 文 字  abc   def \n\n\f 第 1 章 ") == ["中文字 abc def", "第 1 章"]


@pytest.mark.parametrize(
    "requested, installed, expected",
    [
        ("eng+fra+deu+chi_sim", frozenset({"eng", "fra", "osd"}), "eng+fra"),
        ("chi_sim", frozenset({"eng"}), "eng"),
        ("deu+eng", frozenset({"eng", "deu"}), "deu+eng"),
    ],
)
def test_only_installed_languages_are_asked_for(requested, installed, expected):
    assert ocr.choose_languages(requested, installed) == expected


def test_installed_languages_come_from_tesseract():
    binary = ocr.tesseract_path()
    assert binary, "tesseract must be installed for these tests (Debian package tesseract-ocr)"
    assert {"eng", "fra", "deu", "chi_sim"} <= ocr.installed_languages(binary)
