"""`grep`: regex matches inside one document, with context and paging.

The pattern runs over the document's lines joined by newlines turned into
spaces (offsets unchanged), so a phrase that a PDF broke across two lines
still matches; patterns with `^` or `$` match line by line instead (in one
multiline pass over the text when the pattern provably cannot reach past a
line's end, see `grep_patterns`). Matches are mapped to line numbers through
the cached line starts. Matching runs under a time budget so a catastrophic
pattern cannot stall the server.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linkly_ls.core.catalog import DocumentRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.line_cache import DocumentText
from linkly_ls.core.tools.common import get_document
from linkly_ls.core.tools.errors import ArgumentError, ToolError
from linkly_ls.core.tools.grep_patterns import is_literal, line_local_pattern
from linkly_ls.core.tools.schema import validate

if TYPE_CHECKING:
    import numpy as np
    import regex

TIME_BUDGET_S = 1.0
MAX_LINE_CHARS_SHOWN = 1000


@dataclass
class GrepMatch:
    line: int
    text: str
    end_line: int
    before: list[tuple[int, str]] = field(default_factory=list)
    after: list[tuple[int, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "line": self.line,
            "text": self.text,
            "before": [{"line": n, "text": t} for n, t in self.before],
            "after": [{"line": n, "text": t} for n, t in self.after],
        }
        if self.end_line != self.line:
            data["end_line"] = self.end_line
        return data


@dataclass
class GrepResult:
    record: DocumentRecord
    pattern: str
    total_matches: int
    matches: list[GrepMatch]
    offset: int
    output_mode: str

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "doc_id": self.record.doc_id,
            "title": self.record.title,
            "pattern": self.pattern,
            "total_matches": self.total_matches,
            "total_lines": self.record.total_lines,
        }
        if self.output_mode == "content":
            data["offset"] = self.offset
            data["matches"] = [match.to_json() for match in self.matches]
            shown_to = self.offset + len(self.matches)
            data["next_offset"] = shown_to if shown_to < self.total_matches else None
        return data

    def to_markdown(self) -> str:
        head = f"{self.total_matches} matching line(s) for `{self.pattern}` in {self.record.title} (`{self.record.doc_id}`)"
        if self.output_mode == "count":
            return head
        out = [head, ""]
        previous_end = None
        for match in self.matches:
            first = match.before[0][0] if match.before else match.line
            if previous_end is not None and first > previous_end + 1:
                out.append("--")
            for number, text in match.before:
                if previous_end is None or number > previous_end:
                    out.append(f"{number}-\t{text}")
            out.append(f"{match.line}:\t{match.text}")
            for number, text in match.after:
                out.append(f"{number}-\t{text}")
            previous_end = match.after[-1][0] if match.after else match.line
        shown_to = self.offset + len(self.matches)
        if shown_to < self.total_matches:
            out.append(f"\n[{self.total_matches - shown_to} more match(es); continue with offset={shown_to}]")
        return "\n".join(out)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS_SHOWN else text[:MAX_LINE_CHARS_SHOWN] + " …"


@dataclass(frozen=True)
class LineMatch:
    """The first match on a line: its first and last line, and offsets of its first and last character
    (-1 when the match was found line by line)."""

    first: int
    last: int
    start: int = -1
    last_char: int = -1


@dataclass
class LineMatches:
    """The first match of every line that has one, in order, as parallel arrays."""

    first: np.ndarray
    last: np.ndarray
    start: np.ndarray
    last_char: np.ndarray

    def __len__(self) -> int:
        return len(self.first)

    def page(self, offset: int, limit: int) -> list[LineMatch]:
        window = slice(offset, offset + limit)
        return [
            LineMatch(*values)
            for values in zip(
                self.first[window].tolist(),
                self.last[window].tolist(),
                self.start[window].tolist(),
                self.last_char[window].tolist(),
                strict=True,
            )
        ]


def find_matching_lines(document: DocumentText, pattern: regex.Pattern, case_insensitive: bool) -> LineMatches:
    """The first match of every line that has one, in order."""
    import regex

    source = pattern.pattern
    anchored = any(token in source for token in ("^", "$", "\\A", "\\Z"))
    try:
        if not anchored:
            # a literal without whitespace never matches where a newline became a space
            plain = is_literal(source) and not any(char.isspace() for char in source)
            text = document.text if plain else document.spaced
            return _first_per_line(document, *_spans(text, pattern, source, case_insensitive))
        per_line = line_local_pattern(source)
        if per_line is None:
            return _matching_lines_one_by_one(document.lines(), pattern)
        multiline = regex.compile(per_line, pattern.flags | regex.MULTILINE)
        starts = [found.start() for found in multiline.finditer(document.text, timeout=TIME_BUDGET_S)]
        return _first_per_line(document, starts, starts)  # empty matches count here, as they do per line
    except TimeoutError:
        raise ToolError(
            f"`pattern` took longer than {TIME_BUDGET_S:.0f} s on this document and was stopped; "
            "simplify it (avoid nested repetition like (a+)+)"
        ) from None


def _spans(text: str, pattern: regex.Pattern, source: str, case_insensitive: bool) -> tuple[list[int], list[int]]:
    """Start and end offsets of the non-empty, non-overlapping matches, left to right.

    A plain literal cannot backtrack, so it runs without the time budget (whose
    check costs about a microsecond per match), and with `str.find` when case
    matters, which finds exactly the matches `finditer` would.
    """
    starts: list[int] = []
    if is_literal(source) and not case_insensitive:
        width = len(source)
        find = text.find
        position = find(source)
        while position != -1:
            starts.append(position)
            position = find(source, position + width)
        return starts, [start + width for start in starts]
    ends: list[int] = []
    found_all = pattern.finditer(text) if is_literal(source) else pattern.finditer(text, timeout=TIME_BUDGET_S)
    for found in found_all:
        start, end = found.span()
        if start != end:
            starts.append(start)
            ends.append(end)
    return starts, ends


def _first_per_line(document: DocumentText, starts: list[int], ends: list[int]) -> LineMatches:
    """Keep the first match of each line; find the last line of those kept."""
    import numpy as np

    first = np.asarray(document.line_numbers(starts), dtype=np.int64)
    keep = np.ones(len(first), dtype=bool)
    keep[1:] = first[1:] != first[:-1]
    kept_starts = np.asarray(starts, dtype=np.int64)[keep]
    last_chars = np.maximum(np.asarray(ends, dtype=np.int64)[keep] - 1, kept_starts)
    kept_first = first[keep]
    last = document.later_line_numbers(kept_first.tolist(), kept_starts.tolist(), last_chars.tolist())
    return LineMatches(kept_first, np.asarray(last, dtype=np.int64), kept_starts, last_chars)


def _matching_lines_one_by_one(lines: list[str], pattern: regex.Pattern) -> LineMatches:
    """Each line on its own: for anchored patterns that could see past a line's end."""
    import numpy as np

    matched: list[int] = []
    deadline = time.monotonic() + TIME_BUDGET_S
    for number, line in enumerate(lines, start=1):
        remaining = deadline - time.monotonic()
        if remaining <= 0:  # the budget is for the whole document, not for each line
            raise TimeoutError
        if pattern.search(line, timeout=remaining):
            matched.append(number)
    numbers = np.asarray(matched, dtype=np.int64)
    unknown = np.full(len(numbers), -1, dtype=np.int64)
    return LineMatches(numbers, numbers, unknown, unknown)


def _grep_match(document: DocumentText, found: LineMatch, before: int, after: int) -> GrepMatch:
    """The matched line(s) and their context, found from the match's offsets when known."""
    if found.start < 0:
        return GrepMatch(
            line=found.first,
            text=_clip(" ".join(document.line_range(found.first, found.last - found.first + 1))),
            end_line=found.last,
            before=[(n, _clip(document.line(n))) for n in range(max(1, found.first - before), found.first)],
            after=[(n, _clip(document.line(n))) for n in range(found.last + 1, min(document.line_count, found.last + after) + 1)],
        )
    text = document.text
    first_start, _ = document.line_bounds(found.start)
    _, last_end = document.line_bounds(found.last_char)
    preceding: list[tuple[int, str]] = []
    end = first_start - 1
    for number in range(found.first - 1, max(1, found.first - before) - 1, -1):
        start = text.rfind("\n", 0, end) + 1
        preceding.append((number, _clip(text[start:end])))
        end = start - 1
    following: list[tuple[int, str]] = []
    start = last_end + 1
    for number in range(found.last + 1, min(document.line_count, found.last + after) + 1):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        following.append((number, _clip(text[start:end])))
        start = end + 1
    return GrepMatch(
        line=found.first,
        text=_clip(text[first_start:last_end].replace("\n", " ")),
        end_line=found.last,
        before=preceding[::-1],
        after=following,
    )


def grep(engine: Engine, **arguments: Any) -> GrepResult:
    import regex  # loaded by the first grep, not by every process that opens the tools

    params = validate("grep", arguments)
    record = get_document(engine.catalog, params["doc_id"])
    flags = regex.V0 | (regex.IGNORECASE if params["case_insensitive"] else 0)
    try:
        pattern = regex.compile(params["pattern"], flags)
    except (regex.error, OverflowError) as error:
        raise ArgumentError(f"`pattern` is not a valid regular expression: {error}") from None
    document = engine.catalog.document_text(record.doc_id)
    if document is None:
        raise ToolError(f"`doc_id` {record.doc_id!r} is not an indexed document; use an id from search results")
    found = find_matching_lines(document, pattern, params["case_insensitive"])
    before = params["before"] if params["before"] is not None else params["context"]
    after = params["after"] if params["after"] is not None else params["context"]
    offset, limit = params["offset"], params["limit"]
    matches: list[GrepMatch] = []
    if params["output_mode"] == "content":
        matches = [_grep_match(document, line_match, before, after) for line_match in found.page(offset, limit)]
    return GrepResult(
        record=record,
        pattern=params["pattern"],
        total_matches=len(found),
        matches=matches,
        offset=offset,
        output_mode=params["output_mode"],
    )
