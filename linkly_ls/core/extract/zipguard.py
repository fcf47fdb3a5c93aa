"""Open ZIP-based documents (DOCX, PPTX, EPUB) without falling for damaged files or zip bombs.

The uncompressed sizes declared in the central directory are summed before
anything is decompressed, and a member whose compressed data is larger than
deflate could ever make its declared size is refused: that is a header that
lies about a bomb. Python's zipfile hands out at most a member's declared size,
but `read()` inflates up to `ZipExtFile.MAX_N` bytes (1 GiB) in one step before
cutting; that step is lowered to READ_STEP here, so reading any member costs
at most its declared size plus READ_STEP, whatever its compressed data holds.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from lxml import etree

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract.base import READ_ERROR, ExtractLimits

MAX_ZIP_ENTRIES = 100_000
#: the most zipfile inflates in one step of `read()`; it cuts to the declared size after each step
READ_STEP = 64 * 2**20
#: the most a document's media shrink when zipped (an uncompressed bitmap: about 10 times); a bomb's zeros
#: shrink a thousand times
MEDIA_MOST_SHRINKING = 100
#: the parts of a document that hold its text and structure; the others are its pictures, videos, fonts
#: and embedded files
_TEXT_PARTS = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx", ".css", ".txt", "mimetype")
#: deflate's worst case: stored blocks, 5 bytes per 65,535, plus a little
_DEFLATE_OVERHEAD = 1.001
_DEFLATE_SLACK = 1024

#: the first bytes of an OLE compound file, and the stream an encrypted Office document keeps its package in
COMPOUND_FILE_SIGNATURE = bytes.fromhex("d0cf11e0a1b11ae1")
ENCRYPTED_PACKAGE_NAME = "EncryptedPackage".encode("utf-16-le")
#: the largest XML part read to find which one is damaged
MAX_CHECKED_PART = 64 * 2**20
#: how much of a compound file is searched for that stream's name (its directory is near the start)
COMPOUND_FILE_SCAN = 4 * 2**20

zipfile.ZipExtFile.MAX_N = min(zipfile.ZipExtFile.MAX_N, READ_STEP)


def open_checked_zip(path: Path, limits: ExtractLimits, kind: str) -> zipfile.ZipFile:
    """Open `path` as a ZIP container of a `kind` document (e.g. "DOCX"), or raise ExtractionError."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise ExtractionError(_not_a_zip(path, kind, error)) from error
    except OSError as error:
        raise ExtractionError(f"{READ_ERROR}{error.strerror or error}") from error
    try:
        _check_sizes(archive, limits, kind)
    except ExtractionError:
        archive.close()
        raise
    return archive


def _not_a_zip(path: Path, kind: str, error: Exception) -> str:
    """Why `path` is no ZIP container: Office writes a file saved with a password, and wrote its formats
    before 2007, as a compound file, whose signature says so."""
    try:
        with path.open("rb") as file:
            head = file.read(COMPOUND_FILE_SCAN)
    except OSError:
        head = b""
    if head.startswith(COMPOUND_FILE_SIGNATURE):
        if ENCRYPTED_PACKAGE_NAME in head:
            return (
                f"not a readable {kind} file: it is encrypted (saved with a password); "
                "save it again without a password to index it"
            )
        return (
            f"not a readable {kind} file: it is an Office compound file, the format of a password-protected "
            "document or of Office 97-2003 (.doc, .ppt, .xls) under a newer name; save it again as "
            f"{kind} without a password to index it"
        )
    return f"not a readable {kind} file: the ZIP container is damaged or incomplete ({error})"


def check_zip(path: Path, limits: ExtractLimits, kind: str) -> None:
    """Raise ExtractionError when `path` is not a sound ZIP or would unpack past the limit."""
    open_checked_zip(path, limits, kind).close()


def _check_sizes(archive: zipfile.ZipFile, limits: ExtractLimits, kind: str) -> None:
    entries = archive.infolist()
    if len(entries) > MAX_ZIP_ENTRIES:
        raise ExtractionError(
            f"not a readable {kind} file: the ZIP container holds {len(entries):,} entries "
            f"(more than {MAX_ZIP_ENTRIES:,})"
        )
    for entry in entries:
        if entry.compress_size > entry.file_size * _DEFLATE_OVERHEAD + _DEFLATE_SLACK:
            raise ExtractionError(
                f"not a readable {kind} file: member {entry.filename[:100]!r} declares {entry.file_size:,} bytes "
                f"but holds {entry.compress_size:,} compressed bytes; a crafted header (possibly a zip bomb)"
            )
    total = sum(entry.file_size for entry in entries)
    if total > limits.max_unzipped_bytes:
        media = [entry for entry in entries if not entry.filename.lower().endswith(_TEXT_PARTS)]
        unpacked, packed = sum(entry.file_size for entry in media), sum(entry.compress_size for entry in media)
        why = (  # videos and pictures are compressed already: a zip bomb's zeros shrink thousands of times
            f"its pictures, videos and embedded files ({unpacked:,} bytes) are unpacked with its text; raise the "
            "limit to index it" if unpacked > total / 2 and packed * MEDIA_MOST_SHRINKING >= unpacked
            else "possibly a zip bomb"
        )
        raise ExtractionError(
            f"{kind} file would unpack to {total:,} bytes, over the "
            f"{limits.max_unzipped_bytes:,}-byte limit ([limits] max_unzipped_mb); {why}"
        )


def damaged_xml_member(path: Path) -> str | None:
    """The first XML part of a ZIP container that does not parse (an error message's missing name), if
    any; parts past `MAX_CHECKED_PART` bytes are not read."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        with zipfile.ZipFile(path) as archive:
            for entry in archive.infolist():
                if not entry.filename.endswith((".xml", ".rels", ".opf", ".ncx", ".xhtml")):
                    continue
                if entry.file_size > MAX_CHECKED_PART:
                    continue
                try:
                    etree.fromstring(archive.read(entry), parser)
                except etree.XMLSyntaxError:
                    return entry.filename
    except (OSError, zipfile.BadZipFile, RuntimeError):
        return None
    return None
