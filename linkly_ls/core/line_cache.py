"""Decoded document text kept in memory for repeated `grep`, `read` and chunking.

Decompressing and decoding a large document (4.5 MB of text for a 2,400-page
PDF) takes tens of milliseconds; `grep` and `read` on the same document come in
bursts, so the decoded text is kept in a least-recently-used cache bounded by
bytes. Each entry carries the version it was decoded from (the document's
`indexed_at` and `content_hash`); the catalog compares it with the current row
on every use, so a document re-indexed by another process is never served
stale.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict

from typing import TYPE_CHECKING

from linkly_ls.core.line_blocks import decode_text

if TYPE_CHECKING:
    import numpy as np

DEFAULT_MAX_BYTES = 192 * 2**20

TextVersion = tuple[float, str]


def line_starts(text: str) -> np.ndarray:
    import numpy as np  # loaded by the first grep or read, not by every process that opens the catalog

    """Offset of the first character of every line of `text` (lines split on newlines).

    The text is copied once into an array of its own code-point width (1, 2 or
    4 bytes: what CPython stores it as, so the copy is cheap) to find the newlines.
    """
    if text.isascii():
        codes = np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    else:
        width = _code_point_width(text)
        if width == 1:
            codes = np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
        elif width == 2:
            codes = np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
        else:
            codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    newlines = np.flatnonzero(codes == 10)
    starts = np.empty(len(newlines) + 1, dtype=np.int64)
    starts[0] = 0
    starts[1:] = newlines + 1
    return starts


def _code_point_width(text: str) -> int:
    """Bytes per character of CPython's compact representation of a non-ASCII `text`."""
    overhead = sys.getsizeof("\u00e9") - 2  # header and terminator of a 1-byte-wide string
    width = (sys.getsizeof(text) - overhead) // (len(text) + 1)
    return width if width in (1, 2, 4) else 4


class DocumentText:
    """A document's lines as one string, with the views `grep` and `read` need.

    `text` has the lines joined by newlines (as stored); `spaced` is the same
    with every newline turned into a space (same offsets), which is what
    `grep` searches so that a phrase broken across lines still matches.
    `spaced` and the line starts are computed on first use: `grep` finds line
    numbers by counting newlines, which is cheaper when only a few offsets
    are asked, and searches a plain word in `text` directly.
    """

    def __init__(self, text: str, version: TextVersion, line_count: int | None = None) -> None:
        self.version = version
        self.text = text
        self._spaced: str | None = None
        if line_count is None:
            line_count = text.count("\n") + 1 if text else 0
        self.line_count = line_count
        self._starts: np.ndarray | None = None
        self._lines: list[str] | None = None
        self._lines_nbytes = 0

    @classmethod
    def from_blob(cls, blob: bytes, version: TextVersion) -> DocumentText:
        """The text of a catalog blob (either storage format)."""
        text, line_count = decode_text(blob)
        return cls(text, version, line_count)

    @property
    def spaced(self) -> str:
        if self._spaced is None:
            self._spaced = self.text.replace("\n", " ")
        return self._spaced

    @property
    def starts(self) -> np.ndarray:
        if self._starts is None:
            self._starts = line_starts(self.text)
        return self._starts

    def lines(self) -> list[str]:
        if self._lines is None:
            lines = self.text.split("\n") if self.text else []
            self._lines_nbytes = sys.getsizeof(lines) + sum(map(sys.getsizeof, lines))
            self._lines = lines
        return self._lines

    def line(self, number: int) -> str:
        """Line `number` (1-based)."""
        start = int(self.starts[number - 1])
        end = int(self.starts[number]) - 1 if number < self.line_count else len(self.text)
        return self.text[start:end]

    def line_range(self, first: int, count: int) -> list[str]:
        """Lines first .. first+count-1 (1-based), fewer at the end of the document."""
        if self._lines is not None:
            return self._lines[first - 1 : first - 1 + count]
        last = min(self.line_count, first + count - 1)
        return [self.line(number) for number in range(first, last + 1)]

    def line_numbers(self, offsets: list[int]) -> list[int]:
        """The 1-based line number of each of the ascending `offsets` into `text` / `spaced`."""
        if self._starts is not None or len(offsets) > 20_000:
            import numpy as np

            found = np.searchsorted(self.starts, np.asarray(offsets, dtype=np.int64), side="right")
            return found.tolist()
        numbers: list[int] = []
        count = self.text.count
        line, previous = 1, 0
        for offset in offsets:
            line += count("\n", previous, offset)
            previous = offset
            numbers.append(line)
        return numbers

    def later_line_numbers(self, numbers: list[int], offsets: list[int], later: list[int]) -> list[int]:
        """Line numbers of the `later` offsets, each at or after the offset of known line number."""
        if self._starts is not None:
            return self.line_numbers(later)
        count = self.text.count
        return [number + count("\n", offset, end) for number, offset, end in zip(numbers, offsets, later, strict=True)]

    def line_bounds(self, offset: int) -> tuple[int, int]:
        """(start, end) offsets of the line holding `offset`; the end is its newline or the text's end."""
        start = self.text.rfind("\n", 0, offset) + 1
        end = self.text.find("\n", offset)
        return start, len(self.text) if end == -1 else end

    @property
    def has_line_index(self) -> bool:
        return self._starts is not None or self._lines is not None

    @property
    def nbytes(self) -> int:
        size = sys.getsizeof(self.text) + self._lines_nbytes
        size += sys.getsizeof(self._spaced) if self._spaced is not None else 0
        return size + (self._starts.nbytes if self._starts is not None else 0)


class LineCache:
    """Least-recently-used DocumentTexts, at most `max_bytes` (the newest entry always stays)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, DocumentText] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, doc_id: str, version: TextVersion) -> DocumentText | None:
        with self._lock:
            entry = self._entries.get(doc_id)
            if entry is None:
                return None
            if entry.version != version:
                del self._entries[doc_id]
                return None
            self._entries.move_to_end(doc_id)
            return entry

    def put(self, doc_id: str, document: DocumentText) -> None:
        with self._lock:
            self._entries[doc_id] = document
            self._entries.move_to_end(doc_id)
            total = sum(entry.nbytes for entry in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                _, evicted = self._entries.popitem(last=False)
                total -= evicted.nbytes

    def forget(self, doc_id: str) -> None:
        with self._lock:
            self._entries.pop(doc_id, None)

    def __contains__(self, doc_id: str) -> bool:
        with self._lock:
            return doc_id in self._entries

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(entry.nbytes for entry in self._entries.values())
