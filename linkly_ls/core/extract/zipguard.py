"""Open ZIP-based documents (DOCX, PPTX, EPUB) without falling for damaged files or zip bombs.

The uncompressed sizes declared in the central directory are summed before
anything is decompressed; Python's zipfile never inflates an entry past its
declared size, so the check bounds the memory a parser library can use.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract.base import ExtractLimits

MAX_ZIP_ENTRIES = 100_000


def open_checked_zip(path: Path, limits: ExtractLimits, kind: str) -> zipfile.ZipFile:
    """Open `path` as a ZIP container of a `kind` document (e.g. "DOCX"), or raise ExtractionError."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise ExtractionError(
            f"not a readable {kind} file: the ZIP container is damaged or incomplete ({error})"
        ) from error
    except OSError as error:
        raise ExtractionError(f"cannot read file: {error.strerror or error}") from error
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
    total = sum(entry.file_size for entry in entries)
    if total > limits.max_unzipped_bytes:
        raise ExtractionError(
            f"{kind} file would unpack to {total:,} bytes, over the "
            f"{limits.max_unzipped_bytes:,}-byte limit (max_unzipped_bytes); possibly a zip bomb"
        )
