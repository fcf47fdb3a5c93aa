"""Open a library file once, never through a symbolic link, and read it by that descriptor.

The walker lists only regular files, but a file can be swapped for a link
between the listing and the read: someone who may write into a shared library
folder replaces `notes/a.md` with a link to `~/.ssh/id_ed25519` for the moment a
worker opens it. Each reader opening the path again (the sniffer, the hash,
MuPDF, zipfile, PIL) would follow the link. So the file is opened once with
`O_NOFOLLOW`, and every reader then opens `/proc/self/fd/N`, which is that same
file whatever the path names by then. Without `/proc` (macOS), the readers open
the path, and the path must still name the same unchanged file when they are done.

A folder on the way swapped for a link at the moment of the open is not caught:
telling it from a library whose own folder is reached through a link (a folder
moved and left as a link) needs the library's root, which a task does not carry.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import sys
from pathlib import Path

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract.base import READ_ERROR

#: where a process finds its open descriptors as paths that open the same file (Linux)
_FD_PATHS = Path("/proc/self/fd")
_HASH_BLOCK = 1 << 20


class ReadThrough(type(Path())):  # type: ignore[misc]
    """A path that opens the file a descriptor holds but is named like the library file: extractors take
    the title from `stem` and the format from `suffix`, and open `str(path)` to read. A path derived from
    it (its parent) is a plain one."""

    named: Path | None = None

    def __new__(cls, opened: str, named: Path | None = None) -> ReadThrough:
        path = super().__new__(cls, opened)
        path.named = named
        return path

    def __init__(self, opened: str, named: Path | None = None) -> None:
        if sys.version_info >= (3, 12):  # there a path's parts are read in __init__, from every argument
            super().__init__(opened)

    def with_segments(self, *segments: str) -> Path:  # Python 3.12+: what `parent` and `/` make
        return Path(*segments)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.named.name if self.named is not None else super().name

    @property
    def stem(self) -> str:  # type: ignore[override]
        return self.named.stem if self.named is not None else super().stem

    @property
    def suffix(self) -> str:  # type: ignore[override]
        return self.named.suffix if self.named is not None else super().suffix

    @property
    def suffixes(self) -> list[str]:  # type: ignore[override]
        return self.named.suffixes if self.named is not None else super().suffixes


class OpenedSource:
    """One library file, opened without following links: `read_path` is what readers open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            self.fd = os.open(path, flags)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise ExtractionError("the file is a symbolic link now (it was a file when listed): not read") from error
            raise ExtractionError(f"{READ_ERROR}{error.strerror or error}") from error
        try:
            self.stat = os.fstat(self.fd)
            if not stat.S_ISREG(self.stat.st_mode):
                raise ExtractionError("not a regular file any more (it was when listed): not read")
        except BaseException:
            os.close(self.fd)
            raise
        self.read_path: Path = ReadThrough(str(_FD_PATHS / str(self.fd)), path) if _has_fd_paths() else path

    def content_hash(self) -> str:
        """The BLAKE2b-128 of the opened file's bytes, read by its descriptor."""
        digest = hashlib.blake2b(digest_size=16)
        offset = 0
        while block := os.pread(self.fd, _HASH_BLOCK, offset):
            digest.update(block)
            offset += len(block)
        return digest.hexdigest()

    def check_unchanged(self) -> None:
        """Where readers opened the path itself: it must still be the same file, never replaced since (a
        swap changes the file's link count, so its ctime)."""
        if self.read_path is not self.path:
            return
        try:
            now = os.lstat(self.path)
        except OSError as error:
            raise ExtractionError("the file was moved or replaced while it was read: not read") from error
        held = os.fstat(self.fd)
        if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino) or held.st_ctime_ns != self.stat.st_ctime_ns:
            raise ExtractionError("the file was moved or replaced while it was read: not read")

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> OpenedSource:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _has_fd_paths() -> bool:
    return sys.platform.startswith("linux") and _FD_PATHS.is_dir()
