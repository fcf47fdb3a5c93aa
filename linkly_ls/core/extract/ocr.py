"""Read text in images with the tesseract command-line tool.

Used by the image extractor and for PDF pages that have no text layer. The
tesseract binary is optional: callers ask `ocr_unavailable_reason()` first and
index the file by name when OCR cannot run.

Every extra language pack slows tesseract down (eng+fra+deu+chi_sim takes
about twice as long as eng alone), so an image is first read with the first
requested language only. That reading is kept when tesseract is confident of
it and the text is not in another requested language; text in another
requested language is read again with that language's pack, and text that
tesseract could not read confidently (another script, such as Chinese read
with the English model) is read again with every requested language.

Tesseract runs at nice 19 (`core.background.lower_process`): OCR is
background work, and a search or an editor should not wait behind it.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
from functools import lru_cache

from dataclasses import dataclass

from PIL import Image

from linkly_ls.core.background import lower_process
from linkly_ls.core.search.analysis import detect_language
from linkly_ls.core.extract.base import ExtractLimits

NO_OCR_ENGINE = (
    "no OCR engine installed (install Debian's tesseract-ocr package, plus "
    "tesseract-ocr-fra / -deu / -chi-sim for other languages, to read text in images)"
)
OCR_DISABLED = "OCR is turned off (ocr = false in the [limits] section of the config file)"
#: how a warning (and text_missing_reason) starts while OCR of the file is left for the second pass
OCR_PENDING = "OCR pending"

#: seconds one tesseract run may take before it is stopped
OCR_TIMEOUT = 120
#: images are scaled down to at most this many pixels before OCR
MAX_OCR_PIXELS = 40_000_000
#: mean word confidence (0-100, weighted by characters) above which a one-language reading is kept;
#: measured with tesseract 5.3: Latin-script pages read with eng score 85-96, Chinese pages 32-41
CONFIDENT_READING = 70.0
#: tesseract's orientation confidence below which a page is not turned (it reports 9-11 for a clearly turned
#: page of text, under 1 for a page it cannot tell)
MIN_ORIENTATION_CONFIDENCE = 2.0
_OSD_ROTATE = re.compile(r"^Rotate: (\d+)", re.M)
_OSD_CONFIDENCE = re.compile(r"^Orientation confidence: ([\d.]+)", re.M)
#: tesseract language pack of a language that `detect_language` reports
LANGUAGE_PACKS = {
    "en": "eng", "fr": "fra", "de": "deu", "es": "spa", "it": "ita", "nl": "nld", "pt": "por",
    "ru": "rus", "zh-cn": "chi_sim", "zh-tw": "chi_tra", "zh": "chi_sim", "ja": "jpn", "ko": "kor",
}

_CJK = r"\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_SPACE_BETWEEN_CJK = re.compile(f"(?<=[{_CJK}])[ \\t]+(?=[{_CJK}])")


class OcrError(Exception):
    """Tesseract ran but failed (timeout, crash, unreadable image)."""


def tesseract_path() -> str | None:
    return shutil.which("tesseract")


def ocr_pending(warnings: list[str]) -> bool:
    """True when a document's warnings say its OCR was left for the second pass."""
    return any(warning.startswith(OCR_PENDING) for warning in warnings)


def ocr_unavailable_reason(limits: ExtractLimits) -> str | None:
    """Why OCR cannot run for these limits, or None when it can."""
    if not limits.ocr:
        return OCR_DISABLED
    if tesseract_path() is None:
        return NO_OCR_ENGINE
    return None


@lru_cache(maxsize=4)
def installed_languages(binary: str) -> frozenset[str]:
    """The language packs tesseract reports with --list-langs (asked once per binary)."""
    try:
        result = subprocess.run(
            [binary, "--list-langs"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    names = (result.stdout + "\n" + result.stderr).splitlines()
    return frozenset(
        name.strip() for name in names if name.strip() and " " not in name.strip() and ":" not in name
    )


def missing_packs_note(limits: ExtractLimits) -> str | None:
    """What a run says when `ocr_languages` names packs tesseract lacks (`rus+eng` without the Russian pack
    read Russian pages as Latin look-alikes, without a word); None when it names none, or there is no tesseract."""
    binary = tesseract_path()
    if binary is None:
        return None
    installed = installed_languages(binary)
    missing = [pack for pack in limits.ocr_languages.split("+") if pack and pack not in installed]
    if not missing:
        return None
    has = ", ".join(sorted(pack for pack in installed if pack != "osd")) or "none"
    return (
        f"OCR language pack(s) {', '.join(missing)} named by [limits] ocr_languages are not installed "
        f"(tesseract has {has}): text in those languages is read as another script"
    )


def choose_languages(requested: str, installed: frozenset[str]) -> str:
    """The requested `a+b+c` languages that are installed, in order; "eng" when none are."""
    chosen = [lang for lang in requested.split("+") if lang and lang in installed]
    return "+".join(chosen) if chosen else "eng"


@dataclass
class OcrReading:
    """The text tesseract read with some languages, and how sure it was."""

    lines: list[str]
    languages: str
    confidence: float


def ocr_image(image: Image.Image, limits: ExtractLimits) -> list[str]:
    """OCR one image; returns clean text lines (possibly none). Raises OcrError on failure."""
    binary = tesseract_path()
    if binary is None:
        raise OcrError(NO_OCR_ENGINE)
    packs = choose_languages(limits.ocr_languages, installed_languages(binary)).split("+")
    pixels = _to_pnm(image)
    first = _read(binary, pixels, packs[0])
    if first.confidence < CONFIDENT_READING and "osd" in installed_languages(binary):
        pixels, first = _upright(binary, image, pixels, first, packs[0])
    if len(packs) == 1 or not first.lines:
        # no word at all in the first language: a picture or a logo (measured on the Debian
        # manuals' covers: all four languages found nothing either, at twice the cost)
        return first.lines
    if first.confidence < CONFIDENT_READING:
        return _read(binary, pixels, "+".join(packs)).lines
    language = detect_language(first.lines) if first.lines else None
    pack = LANGUAGE_PACKS.get(language or "")
    if pack in packs and pack != packs[0]:
        again = _read(binary, pixels, pack)
        return again.lines if again.lines else first.lines
    return first.lines


def _upright(binary: str, image: Image.Image, pixels: bytes, first: OcrReading, pack: str) -> tuple[bytes, OcrReading]:
    """A page tesseract read with little confidence, turned as its orientation detection says and read again,
    when that reads better: a page scanned sideways or upside down was indexed as nonsense (`zjoyeıs`)."""
    degrees = _rotation(binary, pixels)
    if not degrees:
        return pixels, first
    turned = _to_pnm(image.rotate(-degrees, expand=True))
    again = _read(binary, turned, pack)
    return (turned, again) if again.confidence > first.confidence else (pixels, first)


def _rotation(binary: str, pixels: bytes) -> int:
    """Degrees (clockwise) tesseract's orientation detection turns the page by to stand it upright; 0 when
    it is upright, or too unsure (or the page has too few letters to tell)."""
    try:
        result = subprocess.run(
            [binary, "stdin", "stdout", "--psm", "0"], input=pixels, capture_output=True, timeout=OCR_TIMEOUT,
            env=dict(os.environ, OMP_THREAD_LIMIT="1"), check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return 0
    said = result.stdout.decode("utf-8", "replace")
    found, sure = _OSD_ROTATE.search(said), _OSD_CONFIDENCE.search(said)
    if found is None or sure is None or float(sure.group(1)) < MIN_ORIENTATION_CONFIDENCE:
        return 0
    return int(found.group(1)) % 360


def _read(binary: str, pixels: bytes, languages: str) -> OcrReading:
    """One tesseract run over a PNM image, with word confidences (TSV output)."""
    # One thread per run: tesseract's OpenMP threads make it several times slower on small machines.
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    try:
        process = subprocess.Popen(
            [binary, "stdin", "stdout", "-l", languages, "tsv"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
    except OSError as error:
        raise OcrError(f"could not run tesseract: {error}") from error
    lower_process(process.pid)
    try:
        stdout, stderr = process.communicate(pixels, timeout=OCR_TIMEOUT)
    except subprocess.TimeoutExpired as error:
        process.kill()
        process.communicate()
        raise OcrError(f"OCR took longer than {OCR_TIMEOUT} s and was stopped") from error
    if process.returncode != 0:
        detail = stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise OcrError(f"tesseract failed: {detail[-1] if detail else f'exit code {process.returncode}'}")
    return parse_tsv(stdout.decode("utf-8", errors="replace"), languages)


def parse_tsv(tsv: str, languages: str) -> OcrReading:
    """Lines (words of one tesseract line joined by spaces) and the character-weighted mean confidence."""
    lines: list[str] = []
    current: list[str] = []
    current_key: tuple[str, ...] | None = None
    weighted = 0.0
    characters = 0
    for row in tsv.splitlines()[1:]:
        fields = row.split("\t")
        if len(fields) < 12 or fields[0] != "5" or not fields[11].strip():
            continue
        key = tuple(fields[1:5])  # page, block, paragraph, line
        if key != current_key and current:
            lines.append(" ".join(current))
            current = []
        current_key = key
        word = fields[11]
        current.append(word)
        try:
            confidence = float(fields[10])
        except ValueError:
            continue
        weighted += max(confidence, 0.0) * len(word)
        characters += len(word)
    if current:
        lines.append(" ".join(current))
    return OcrReading(
        lines=clean_ocr_text("\n".join(lines)),
        languages=languages,
        confidence=weighted / characters if characters else 0.0,
    )


def clean_ocr_text(text: str) -> list[str]:
    """Normalise OCR output: collapse spaces, drop empty lines, join CJK characters tesseract spaced out."""
    lines = []
    for raw in text.replace("\f", "\n").splitlines():
        line = " ".join(raw.split())
        line = _SPACE_BETWEEN_CJK.sub("", line)
        if line:
            lines.append(line)
    return lines


def _eight_bit(image: Image.Image) -> Image.Image:
    """A 16- or 32-bit grey image (archival scanners write 16-bit TIFFs) as 8-bit grey, its range stretched
    over 0-255: converting it as it is clipped every value above 255 to white, leaving only the blackest ink
    (40 % of a page's words read, against 98 % by tesseract from the file)."""
    wide = image.convert("I")
    low, high = wide.getextrema()
    span = max(high - low, 1)
    return wide.point(lambda value: (value - low) * 255 / span).convert("L")


def _to_pnm(image: Image.Image) -> bytes:
    """The image as grey or RGB PNM: uncompressed, so encoding it costs nothing next to PNG (0.03 s vs 0.26 s for 11 MP)."""
    if image.width * image.height > MAX_OCR_PIXELS:
        scale = (MAX_OCR_PIXELS / (image.width * image.height)) ** 0.5
        image = image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale))))
    if image.mode == "I" or image.mode.startswith("I;16"):
        image = _eight_bit(image)
    if image.mode == "P" and "transparency" in image.info:
        image = image.convert("RGBA")
    if "A" in image.getbands():
        # Transparent pixels are often black underneath; lay the image on white paper.
        rgba = image.convert("RGBA")
        image = Image.new("RGB", rgba.size, "white")
        image.paste(rgba, mask=rgba.getchannel("A"))
    elif image.mode not in ("L", "RGB"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PPM")
    return buffer.getvalue()
