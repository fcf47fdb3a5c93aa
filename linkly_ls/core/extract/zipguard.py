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

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract.base import READ_ERROR, ExtractLimits

MAX_ZIP_ENTRIES = 100_000
#: the most zipfile inflates in one step of `read()`; it cuts to the declared size after each step
READ_STEP = 64 * 2**20
#: deflate's worst case: stored blocks, 5 bytes per 65,535, plus a little
_DEFLATE_OVERHEAD = 1.001
_DEFLATE_SLACK = 1024

zipfile.ZipExtFile.MAX_N = min(zipfile.ZipExtFile.MAX_N, READ_STEP)


def open_checked_zip(path: Path, limits: ExtractLimits, kind: str) -> zipfile.ZipFile:
    """Open `path` as a ZIP container of a `kind` document (e.g. "DOCX"), or raise ExtractionError."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise ExtractionError(
            f"not a readable {kind} file: the ZIP container is damaged or incomplete ({error})"
        ) from error
    except OSError as error:
        raise ExtractionError(f"{READ_ERROR}{error.strerror or error}") from error
    try:
        _check_sizes(archive, limits, kind)
    except ExtractionError:
        archive.close()
        raise
    return archive


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
        raise ExtractionError(
            f"{kind} file would unpack to {total:,} bytes, over the "
            f"{limits.max_unzipped_bytes:,}-byte limit ([limits] max_unzipped_mb); possibly a zip bomb"
        )
