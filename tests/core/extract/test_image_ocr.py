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


FIXTURE_JPEG = __import__("pathlib").Path(__file__).resolve().parents[3] / "fixtures" / "scans" / "ocr-sample.jpg"


def test_a_phone_photo_is_read_as_its_exif_orientation_shows_it(tmp_path):
    """Phones store a portrait shot sideways with `Orientation = 6`: its pixels read as nonsense."""
    from PIL import Image

    with Image.open(FIXTURE_JPEG) as upright:
        sideways = upright.transpose(Image.Transpose.ROTATE_90)
        exif = Image.Exif()
        exif[0x0112] = 6  # rotate 90 degrees clockwise to show it
        sideways.save(tmp_path / "IMG_0001.jpg", exif=exif, quality=95)
    text = " ".join(extract_file(tmp_path / "IMG_0001.jpg").lines)
    assert "The quick brown dog jumped over the" in text


def _png_header_claiming(path, width: int, height: int) -> None:
    """A small PNG whose header claims `width` x `height` (Pillow decides on the header alone)."""
    import struct
    import zlib

    from PIL import Image

    Image.new("L", (8, 8), 255).save(path)
    data = bytearray(path.read_bytes())
    body = b"IHDR" + struct.pack(">II", width, height) + bytes(data[24:29])
    data[12:29] = body
    data[29:33] = struct.pack(">I", zlib.crc32(body))
    path.write_bytes(bytes(data))


def test_a_large_scan_is_opened_and_a_larger_one_refused_by_its_size(tmp_path):
    """A 12,000 x 9,000 scan (108 million pixels) was refused as a "decompression bomb DOS attack"."""
    from linkly_ls.core.document import ExtractionError
    from linkly_ls.core.extract import image

    _png_header_claiming(tmp_path / "blueprint.png", 12_000, 9_000)
    with image._open(tmp_path / "blueprint.png") as opened:
        assert opened.size == (12_000, 9_000)
    _png_header_claiming(tmp_path / "wall.png", 30_000, 30_000)
    with pytest.raises(ExtractionError, match="image too large to read \\(more than 250 million pixels\\)"):
        image._open(tmp_path / "wall.png")


def test_an_unreadable_image_says_so_by_its_type_not_by_a_file_descriptor(tmp_path):
    from linkly_ls.core.document import ExtractionError

    (tmp_path / "garbage.png").write_bytes(bytes(range(256)) * 40)
    with pytest.raises(ExtractionError) as raised:
        extract_file(tmp_path / "garbage.png")
    assert "the content is not a PNG image" in str(raised.value) and "/proc/" not in str(raised.value)


def test_a_sixteen_bit_grey_scan_is_read_like_its_eight_bit_copy(tmp_path):
    """`I;16` converted as it was clipped every value above 255 to white: only the blackest ink was left."""
    import numpy
    from PIL import Image

    with Image.open(FIXTURE_JPEG) as original:
        grey = original.convert("L").point(lambda value: 60 + value * 195 // 255)  # grey ink, as scanners see it
        wide = Image.frombytes("I;16", grey.size, (numpy.asarray(grey, dtype="<u2") * 257).tobytes())
    wide.save(tmp_path / "scan-16bit.tif")
    with Image.open(tmp_path / "scan-16bit.tif") as reopened:
        assert reopened.mode.startswith("I;16")
    text = " ".join(extract_file(tmp_path / "scan-16bit.tif").lines)
    assert "The quick brown dog jumped over the" in text


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_a_page_scanned_sideways_or_upside_down_is_read_upright(tmp_path, degrees):
    """Read as stored, a turned page was indexed as nonsense (`zjoyeıs`, `SUOIJENIIS`) without a word."""
    from PIL import Image

    if "osd" not in ocr.installed_languages(ocr.tesseract_path() or "tesseract"):
        pytest.skip("tesseract's orientation data (osd) is not installed")
    with Image.open(FIXTURE_JPEG) as upright:
        upright.rotate(degrees, expand=True).save(tmp_path / "turned.png")
    text = " ".join(extract_file(tmp_path / "turned.png").lines)
    assert "The quick brown dog jumped over the" in text
