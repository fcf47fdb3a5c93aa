"""Library folders that cannot be walked right now, so their documents are kept, not removed.

A library on a USB disk, a network share or an encrypted home that is
unmounted for a while looks, to a folder walk, exactly like a library whose
files were all deleted. Removing every document because a mount is briefly
gone would wipe an index that took hours to build, silently. So a library
root that is missing, unreadable, or an empty folder although documents were
indexed from it, and any folder the walk could not read, is reported as an
error and the documents under it stay until it can be read again. Files that
disappear from a folder that *is* readable are removed as usual.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path


def path_identity(path: str | Path) -> tuple[int, int] | None:
    """Which file or folder is at `path` now, (device, inode), or None when nothing is: a folder deleted
    and made again at the same path is another one."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


def is_under(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or inside it (plain string paths, as the catalog stores them)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def root_problem(root: Path, indexed_paths: Iterable[str]) -> str | None:
    """Why a library root cannot be walked now, or None when it can."""
    try:
        if not root.exists():
            if root.is_symlink():
                return "library folder is a link whose target is missing (unmounted?)"
            return "library folder is missing (unmounted, moved or deleted?)"
        if not root.is_dir():
            return None
        with os.scandir(root) as entries:
            empty = next(entries, None) is None
    except OSError as error:  # the folder, or one above it, cannot be read
        return f"library folder cannot be read ({error.strerror or error})"
    if empty and any(is_under(path, str(root)) for path in indexed_paths):
        return "library folder is empty although documents were indexed from it (an unmounted disk or share?)"
    return None


def unreadable_problem(error: OSError) -> str:
    return f"cannot be read ({error.strerror or error})"


def keep_message(reason: str, kept: int) -> str:
    if not kept:
        return f"{reason}; nothing in it is indexed (counted among the skipped until it can be read)"
    return f"{reason}; its {kept} indexed document(s) are kept until it can be read again"
