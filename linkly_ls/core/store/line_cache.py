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

import re
import sys
import threading
import unicodedata
from bisect import bisect_left
from collections import OrderedDict
from itertools import accumulate, chain, islice, repeat

from linkly_ls.core.store.line_blocks import decode_text

DEFAULT_MAX_BYTES = 192 * 2**20
#: characters between two line-number checkpoints (see `DocumentText.line_numbers`)
CHECKPOINT_CHARS = 1024

TextVersion = tuple[float, str]


#: what decomposed text holds (combining accents, as macOS and some PDFs write them; conjoining Hangul jamo; kana
#: voicing marks): text without any is composed already, told in a few milliseconds a megabyte where
#: `unicodedata.is_normalized` took 30 ms (128 ms for the 2,415-page R manual, on a grep's first call)
MAY_COMPOSE = re.compile("[\u0300-\u036f\u1100-\u11ff\u3099\u309a]")


def _composed_lines(text: str) -> str:
    """`text` with each line that holds a character of `MAY_COMPOSE` in composed form (composing never
    crosses a line break); `text` itself when none changes. Only those lines are looked at: checking the
    whole text took 128 ms on the R manual, whose few combining accents compose with nothing."""
    pieces: list[str] = []
    copied = 0  # the end of what `pieces` holds of `text`
    done = 0  # the end of the last line looked at
    for found in MAY_COMPOSE.finditer(text):
        if found.start() < done:
            continue
        start = text.rfind("\n", 0, found.start()) + 1
        done = text.find("\n", found.start())
        done = len(text) if done == -1 else done
        line = text[start:done]
        composed = unicodedata.normalize("NFC", line)
        if composed != line:
            pieces += [text[copied:start], composed]
            copied = done
    if not pieces:
        return text
    pieces.append(text[copied:])
    return "".join(pieces)


class DocumentText:
    """A document's lines as one string, with the views `grep` and `read` need.

    `text` has the lines joined by newlines (as stored); `spaced` is the same
    with every newline turned into a space (same offsets), which is what
    `grep` searches so that a phrase broken across lines still matches.
    `spaced`, the list of lines and the line-number checkpoints (the line at
    every CHECKPOINT_CHARS-th character, a few kB) are computed on first use.
    `grep` and `read` need only the checkpoints: line numbers are counted from
    the nearest known one, and a line is found from the checkpoint before it.
    """

    def __init__(self, text: str, version: TextVersion, line_count: int | None = None) -> None:
        self.version = version
        self.text = text
        self._spaced: str | None = None
        if line_count is None:
            line_count = text.count("\n") + 1 if text else 0
        self.line_count = line_count
        self._lines: list[str] | None = None
        self._lines_nbytes = 0
        self._checkpoints: list[int] | None = None
        self._checkpoints_nbytes = 0
        self._composed: DocumentText | None = None

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

    def lines(self) -> list[str]:
        if self._lines is None:
            lines = self.text.split("\n") if self.text else []
            self._lines_nbytes = sys.getsizeof(lines) + sum(map(sys.getsizeof, lines))
            self._lines = lines
        return self._lines

    def line(self, number: int) -> str:
        """Line `number` (1-based)."""
        return self.line_range(number, 1)[0]

    def line_range(self, first: int, count: int) -> list[str]:
        """Lines first .. first+count-1 (1-based), fewer at the end of the document."""
        if self._lines is not None:
            return self._lines[first - 1 : first - 1 + count]
        last = min(self.line_count, first + count - 1)
        if last < first:
            return []
        end = self.line_start(last + 1) - 1 if last < self.line_count else len(self.text)
        return self.text[self.line_start(first) : end].split("\n")

    def line_start(self, number: int) -> int:
        """Offset of the first character of line `number` (1 to line_count), found from the checkpoint before it."""
        checkpoints = self._line_checkpoints()
        checkpoint = bisect_left(checkpoints, number) - 1  # the last one on an earlier line
        if checkpoint < 0:
            return 0
        offset, line = checkpoint * CHECKPOINT_CHARS, checkpoints[checkpoint]
        find = self.text.find
        while line < number:
            offset = find("\n", offset) + 1
            line += 1
        return offset

    def line_numbers(self, offsets: list[int]) -> list[int]:
        """The 1-based line number of each of the ascending `offsets` into `text` / `spaced`.

        Newlines are counted from the previous offset, or from the checkpoint
        before the offset when that is nearer: counting a whole 4.5 MB text
        costs about 2 ms, more than finding a rare word in it. Offsets closer
        together than checkpoints are counted in one pass without a Python loop.
        """
        count = self.text.count
        if len(offsets) * CHECKPOINT_CHARS > len(self.text):
            return list(islice(accumulate(map(count, repeat("\n"), chain((0,), offsets), offsets), initial=1), 1, None))
        numbers: list[int] = []
        line, counted = 1, 0
        for offset in offsets:
            if offset - counted > CHECKPOINT_CHARS:
                checkpoint = offset // CHECKPOINT_CHARS
                line, counted = self._line_checkpoints(offset)[checkpoint], checkpoint * CHECKPOINT_CHARS
            line += count("\n", counted, offset)
            counted = offset
            numbers.append(line)
        return numbers

    def _line_checkpoints(self, offset: int | None = None) -> list[int]:
        """The line number at every multiple of CHECKPOINT_CHARS up to `offset` at least (all of them when
        None), each counted once: the first page of a `grep` near the start counts only that far. The list
        at least doubles when it grows, so numbering offsets spread over the text costs one pass in all."""
        checkpoints = self._checkpoints or [1]
        known = len(checkpoints) - 1
        full = len(self.text) // CHECKPOINT_CHARS
        wanted = full if offset is None else min(max(offset // CHECKPOINT_CHARS, 2 * known), full)
        if wanted > known or self._checkpoints is None:
            starts = range(known * CHECKPOINT_CHARS, wanted * CHECKPOINT_CHARS, CHECKPOINT_CHARS)
            ends = range(starts.start + CHECKPOINT_CHARS, starts.stop + 1, CHECKPOINT_CHARS)
            counts = map(self.text.count, repeat("\n"), starts, ends)
            # a new list, swapped in whole: another thread reading this document sees the old or the new one
            checkpoints = checkpoints + list(islice(accumulate(counts, initial=checkpoints[-1]), 1, None))
            self._checkpoints = checkpoints
            self._checkpoints_nbytes = sys.getsizeof(checkpoints) + sys.getsizeof(checkpoints[-1]) * len(checkpoints)
        return checkpoints

    def line_bounds(self, offset: int) -> tuple[int, int]:
        """(start, end) offsets of the line holding `offset`; the end is its newline or the text's end."""
        start = self.text.rfind("\n", 0, offset) + 1
        end = self.text.find("\n", offset)
        return start, len(self.text) if end == -1 else end

    def composed(self) -> DocumentText:
        """This text in Unicode's composed form (NFC), which `grep` matches its (composed) pattern against:
        a `ç` written as `c` and a combining cedilla (macOS, some PDFs) is then found. Itself when the
        text is composed already (looked at once), else a composed copy, kept with it."""
        if self._composed is None:
            text = self.text if self.text.isascii() else _composed_lines(self.text)
            self._composed = self if text is self.text else DocumentText(text, self.version, self.line_count)
        return self._composed

    @property
    def nbytes(self) -> int:
        size = sys.getsizeof(self.text) + self._lines_nbytes + self._checkpoints_nbytes
        if self._composed is not None and self._composed is not self:
            size += self._composed.nbytes
        return size + (sys.getsizeof(self._spaced) if self._spaced is not None else 0)


class LineCache:
    """Least-recently-used DocumentTexts, at most `max_bytes` (the newest entry always stays).

    The total is kept up to date instead of summed on every `put` (summing made a pass over
    thousands of small documents quadratic); an entry grows when its line offsets are first
    needed, so its size is read again whenever it is used.
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, DocumentText] = OrderedDict()
        self._sizes: dict[str, int] = {}
        self._total = 0
        self._lock = threading.Lock()

    def get(self, doc_id: str, version: TextVersion) -> DocumentText | None:
        with self._lock:
            entry = self._entries.get(doc_id)
            if entry is None:
                return None
            if entry.version != version:
                self._drop(doc_id)
                return None
            self._entries.move_to_end(doc_id)
            self._resize(doc_id, entry)
            return entry

    def put(self, doc_id: str, document: DocumentText) -> None:
        with self._lock:
            self._entries[doc_id] = document
            self._entries.move_to_end(doc_id)
            self._resize(doc_id, document)
            while self._total > self.max_bytes and len(self._entries) > 1:
                self._drop(next(iter(self._entries)))

    def forget(self, doc_id: str) -> None:
        with self._lock:
            self._drop(doc_id)

    def _resize(self, doc_id: str, entry: DocumentText) -> None:
        size = entry.nbytes
        self._total += size - self._sizes.get(doc_id, 0)
        self._sizes[doc_id] = size

    def _drop(self, doc_id: str) -> None:
        if self._entries.pop(doc_id, None) is not None:
            self._total -= self._sizes.pop(doc_id, 0)

    def __contains__(self, doc_id: str) -> bool:
        with self._lock:
            return doc_id in self._entries

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(entry.nbytes for entry in self._entries.values())
