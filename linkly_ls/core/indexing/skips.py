"""Why a file of a library's folders is not in the index, and the tally an indexing run keeps of it.

A full walk counts, per folder, the files it leaves out: kept out by a `.gitignore` or `.ignore`
file, by the library's `exclude` globs or outside its `include` globs, of a type linkly does not
read, over `[limits] max_file_mb`, a document of another library (whose folder lies inside this
one's: a document belongs to one library), not a regular file (a named pipe, a device: reading one
would wait for ever), named in bytes that are not UTF-8 (the index stores text), a symbolic link (never
followed: no loops, no escape from the library; a link to a folder counts once), in a folder that
cannot be read (counted once, as the folder: what it holds is unknown), or the cover picture of an
e-book manager's book folder (`cover.jpg` beside Calibre's `metadata.opf`: it would be a result titled
"cover" for every book, OCRed, above the book itself), or the folder of a saved web page's pictures,
scripts and frames (`Article_files/` beside `Article.html`). The counts are stored per library (the catalog's `skipped`
table), so `list_libraries`, `explore` and `linkly status` can say what is missing and why.
"""

from __future__ import annotations

from collections import Counter

GITIGNORE = "gitignore"
EXCLUDE = "exclude"
NOT_INCLUDED = "not_included"
UNSUPPORTED = "unsupported"
TOO_LARGE = "too_large"
OTHER_LIBRARY = "other_library"
SPECIAL = "special"
BAD_NAME = "bad_name"
SYMLINK = "symlink"
UNREADABLE = "unreadable"
BOOK_COVER = "book_cover"
SAVED_PAGE_FILES = "saved_page_files"

#: each reason as a person reads it, in the order reports list them
REASON_LABELS = {
    GITIGNORE: ".gitignore/.ignore",
    EXCLUDE: "exclude",
    NOT_INCLUDED: "not in include",
    UNSUPPORTED: "unsupported type",
    TOO_LARGE: "too large",
    OTHER_LIBRARY: "in another library",
    SPECIAL: "not a regular file",
    BAD_NAME: "name not UTF-8",
    SYMLINK: "symbolic link (not followed)",
    UNREADABLE: "folder that cannot be read",
    BOOK_COVER: "book cover (Calibre)",
    SAVED_PAGE_FILES: "saved web page's files",
}


class SkipTally:
    """Files left out by one run, per (folder, reason)."""

    def __init__(self) -> None:
        self.by_folder: Counter[tuple[str, str]] = Counter()

    def add(self, folder: str, reason: str, count: int = 1) -> None:
        self.by_folder[(folder, reason)] += count

    def by_reason(self) -> dict[str, int]:
        return reasons_in_order((reason, count) for (_, reason), count in self.by_folder.items())

    def total(self) -> int:
        return sum(self.by_folder.values())


def reasons_in_order(pairs) -> dict[str, int]:
    """(reason, count) pairs summed per reason, in `REASON_LABELS` order."""
    totals: Counter[str] = Counter()
    for reason, count in pairs:
        totals[reason] += count
    return {reason: totals[reason] for reason in sorted(totals, key=_rank) if totals[reason]}


def describe(reasons: dict[str, int]) -> str:
    """`.gitignore/.ignore 60, unsupported type 7`."""
    return ", ".join(f"{REASON_LABELS.get(reason, reason)} {count}" for reason, count in reasons.items())


def _rank(reason: str) -> int:
    order = list(REASON_LABELS)
    return order.index(reason) if reason in order else len(order)
