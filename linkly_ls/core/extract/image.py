"""Images (PNG, JPEG, BMP, WebP, TIFF): the text in them, read by OCR.

Without OCR the document is just the file name, so the image can still be
found by name, and `text_missing_reason` says why there is no text.
"""

from __future__ import annotations

import warnings
from pathlib import Path

from PIL import Image, ImageOps, ImageSequence, UnidentifiedImageError

from linkly_ls.core.document import ExtractedDocument, ExtractionError, LineBuilder
from linkly_ls.core.extract.base import ExtractLimits, title_from_path
from linkly_ls.core.extract.ocr import OCR_PENDING, OcrError, ocr_image, ocr_unavailable_reason

#: pages of a multi-page TIFF that are read at most
MAX_IMAGE_FRAMES = 50
#: the largest image read: a 1200-dpi A4 or 600-dpi A2 scan has about 100 million pixels, which Pillow's
#: default (89 million) refused as a "decompression bomb"; OCR scales it down first (`MAX_OCR_PIXELS`), and
#: the extraction worker's memory and time limits stand behind this one
MAX_IMAGE_PIXELS = 250_000_000


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    title = title_from_path(path)
    reason = ocr_unavailable_reason(limits)
    if reason is not None:
        return _name_only(path, title, reason, [f"text not read: {reason}"])
    if limits.ocr_deferred:
        pending = f"{OCR_PENDING}: the text in this image is read by OCR after the other files are indexed"
        return _name_only(path, title, pending, [pending])

    builder = LineBuilder()
    warnings_out: list[str] = []
    with _open(path) as image:
        frames = getattr(image, "n_frames", 1)
        if frames > MAX_IMAGE_FRAMES:
            warnings_out.append(f"only the first {MAX_IMAGE_FRAMES} of {frames} image pages were read")
        for index, frame in enumerate(ImageSequence.Iterator(image)):
            if index >= MAX_IMAGE_FRAMES:
                break
            if frames > 1:
                builder.page(f"--- page {index + 1} ---")
            try:
                lines = ocr_image(_upright(_load(frame, path)), limits)
            except OcrError as error:
                warnings_out.append(f"OCR failed: {error}")
                continue
            builder.text("\n".join(lines))
    lines, outline = builder.finish()
    if not any(line.strip() and not line.startswith("--- page ") for line in lines):
        failed = any(warning.startswith("OCR failed") for warning in warnings_out)
        reason = "OCR could not read this image" if failed else "OCR found no text in this image"
        return _name_only(path, title, reason, warnings_out or [reason])
    return ExtractedDocument(
        lines=lines,
        title=title,
        doc_type="image",
        outline=outline,
        warnings=warnings_out,
        page_starts=builder.page_starts,
    )


def _name_only(path: Path, title: str, reason: str, warnings_out: list[str]) -> ExtractedDocument:
    return ExtractedDocument(
        lines=[path.name],
        title=title,
        doc_type="image",
        warnings=warnings_out,
        text_missing_reason=reason,
    )


def _open(path: Path) -> Image.Image:
    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS // 2  # Pillow warns past it and refuses past twice it
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            return Image.open(path)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ExtractionError(f"image too large to read (more than {MAX_IMAGE_PIXELS // 1_000_000} million pixels)") from None
    except UnidentifiedImageError:  # its message names the worker's file descriptor, not the file
        raise ExtractionError(f"not a readable image: the content is not a {path.suffix.lstrip('.').upper() or 'known'} image") from None
    except OSError as error:
        raise ExtractionError(f"not a readable image: {error}") from error


def _upright(frame: Image.Image) -> Image.Image:
    """The picture as a viewer shows it: a phone stores a portrait shot sideways with an EXIF orientation,
    and OCR of the stored pixels read a page of text as nonsense (`SUOIJENIIS 918 9I0U}`)."""
    try:
        return ImageOps.exif_transpose(frame) or frame
    except (OSError, ValueError, KeyError, TypeError, SyntaxError):  # a damaged EXIF block: the pixels as stored
        return frame


def _load(frame: Image.Image, path: Path) -> Image.Image:
    try:
        frame.load()
    except (OSError, ValueError, Image.DecompressionBombError) as error:
        raise ExtractionError(f"not a readable image ({path.suffix}): {error}") from error
    return frame

