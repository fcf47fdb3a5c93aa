"""Which lines of a document a `grep` pattern matches: the first match of each line, in order.

The pattern runs over the document's lines joined by newlines, each of its
spaces matching a run of blanks that may hold a newline
(`grep_layout.across_line_breaks`), so a phrase that a PDF broke across two
lines, or indented, still matches while `.` stays within its line; a pattern
whose spaces cannot be read that way runs over the lines joined by spaces
(offsets unchanged). Patterns anchored by `^` or `$` match line by line instead (in one
multiline pass over the text when the pattern provably cannot reach past a
line's end, see `grep_patterns`). A plain literal needs no regex engine. A
pattern that can match neither a space nor a newline (`is_confined`) runs on
the stored text as it is, and when it starts with a character class, only
on the lines where its literal suffix matches (`literal_suffix`). Offsets
become line numbers by counting newlines from the previous match or from the
nearest checkpoint (see `DocumentText.line_numbers`). Matching runs under one
budget of CPU time for the whole document (`MatchBudget`) so a catastrophic
pattern cannot stall the server, while waiting for a core or the GIL does
not count.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from typing import TYPE_CHECKING

from linkly_ls.core.store.line_cache import DocumentText
from linkly_ls.core.errors import ArgumentError, ToolError
from linkly_ls.core.search.analysis import CJK_RUN
from linkly_ls.core.search.pattern_size import MAX_COPIES, expanded_size
from linkly_ls.core.search.grep_layout import across_line_breaks, has_anchor, with_accented_letters, with_typographic_quotes
from linkly_ls.core.search.grep_patterns import is_confined, is_literal, line_local_pattern, literal_suffix

if TYPE_CHECKING:
    import regex

TIME_BUDGET_S = 1.0
#: two CJK characters side by side: a word a PDF's line break may split
CJK_PAIR = re.compile(f"{CJK_RUN.pattern[:-1]}{{2}}")
#: the budget reads this thread's CPU clock (~0.6 us) at most this often in wall time, and counts wall time between
CPU_CLOCK_INTERVAL_S = 0.01
#: the least timeout one engine call gets, so that a retried call can make progress
MIN_CALL_TIMEOUT_S = 0.01
#: matches on one line beyond its first that are read through before the text is searched again from the next line
SKIPPED_PER_LINE = 4
#: the suffix search gives up (and the whole text is searched) past this many suffix matches ...
SUFFIX_FREE_MATCHES = 100
#: ... plus one for every this many characters searched: denser, it would cost more than it saves
SUFFIX_CHARS_PER_MATCH = 500


class MatchBudget:
    """The time one grep may spend matching, counted in the grepping thread's own CPU time.

    The regex engine's `timeout` counts the CPU time of the whole process (C
    `clock()`) since a call or an iterator began, so while a grep waits for the
    GIL, the threads that search, index or embed meanwhile use up its time:
    under sixteen clients, benign greps were refused after 1 s. So each engine
    call gets what is left of the budget as its timeout (the process's CPU time
    never runs slower than this thread's), and when the engine gives up, this
    thread's own CPU time decides: spent, and the pattern is stopped; not
    spent, and the call is made again from where it stood.
    """

    def __init__(self, seconds: float | None = None) -> None:
        self.seconds = TIME_BUDGET_S if seconds is None else seconds
        self._cpu_start = time.thread_time()
        self._left = self.seconds
        self._read_at = time.monotonic()

    def remaining(self) -> float:
        """Seconds left (no more than this thread may still use); TimeoutError once there are none."""
        now = time.monotonic()
        left = self._left - (now - self._read_at)  # the thread used at most the wall time since the last reading
        if left <= 0 or now - self._read_at > CPU_CLOCK_INTERVAL_S:
            left = self.confirm(now)
        return left

    def confirm(self, now: float | None = None) -> float:
        """Read this thread's CPU clock: the seconds left, or TimeoutError when the budget is spent."""
        self._left = self.seconds - (time.thread_time() - self._cpu_start)
        self._read_at = time.monotonic() if now is None else now
        if self._left <= 0:
            raise TimeoutError
        return self._left

    def call_timeout(self) -> float:
        return max(self.remaining(), MIN_CALL_TIMEOUT_S)


def budgeted_finditer(pattern: regex.Pattern, text: str, budget: MatchBudget) -> Iterator[regex.Match]:
    """`pattern.finditer(text)` under `budget`: after an engine timeout with budget left, a new
    iterator goes on from the end of the last match, and yields what the first would have (but
    the empty match it finds again where the last one was empty)."""
    position, empty_at = 0, -1
    while True:
        try:
            for found in pattern.finditer(text, position, timeout=budget.call_timeout()):
                start, end = found.span()
                if start == end == empty_at:
                    continue
                position, empty_at = end, (end if start == end else -1)
                yield found
            return
        except TimeoutError:
            budget.confirm()


def budgeted_search(pattern: regex.Pattern, text: str, budget: MatchBudget) -> regex.Match | None:
    while True:
        try:
            return pattern.search(text, timeout=budget.call_timeout())
        except TimeoutError:
            budget.confirm()


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
    """The first match of every line that has one, in order, as parallel lists.

    `first` (line numbers) may be None when the offsets are known: the page
    asked for is then numbered from the checkpoints, and the whole document
    never is (count mode needs no numbers). `last` None means the same as `first`.
    """

    document: DocumentText
    start: list[int]
    last_char: list[int]
    first: list[int] | None = None
    last: list[int] | None = None

    def __len__(self) -> int:
        return len(self.start)

    def page(self, offset: int, limit: int) -> list[LineMatch]:
        window = slice(offset, offset + limit)
        starts = self.start[window]
        first = self.first[window] if self.first is not None else self.document.line_numbers(starts)
        last = self.last[window] if self.last is not None else first
        return [LineMatch(*values) for values in zip(first, last, starts, self.last_char[window], strict=True)]


def compile_pattern(source: str, case_insensitive: bool) -> regex.Pattern:
    """The pattern as `grep` runs it (regex V0); an invalid one is an ArgumentError."""
    import regex  # loaded by the first grep that needs it, not by every process that opens the tools

    size = expanded_size(source)
    if size > MAX_COPIES:
        raise ArgumentError(
            f"`pattern` is too large once its counted repeats are expanded (about {size:,} copies of its parts; "
            f"at most {MAX_COPIES:,}): use a smaller count, or `+` / `*`"
        )
    flags = regex.V0 | (regex.IGNORECASE if case_insensitive else 0)
    try:
        widened = with_typographic_quotes(source)
        return regex.compile(with_accented_letters(widened) if case_insensitive else widened, flags)
    except (regex.error, OverflowError, ValueError) as error:  # ValueError: flags that exclude each other
        raise ArgumentError(
            f"`pattern` is not a valid regular expression: {error}; to find the text as written, escape its "
            f"special characters: `{regex.escape(source, special_only=True, literal_spaces=True)}`"
        ) from None


def match_column(line: str, source: str, case_insensitive: bool) -> int:
    """Where the first match of the pattern starts in `line` (0 when it cannot be told in the time budget)."""
    if not needs_regex(source, case_insensitive):
        return max(0, line.find(source))
    try:
        found = budgeted_search(compile_pattern(source, case_insensitive), line, MatchBudget())
    except TimeoutError:
        return 0
    return found.start() if found else 0


def needs_regex(source: str, case_insensitive: bool) -> bool:
    """False for a case-sensitive plain literal, which is matched with `str.find` (and is always valid),
    unless it holds a space or a CJK word, which the text's layout may break (`across_line_breaks`), or a
    straight quote, which typeset text curls (`with_typographic_quotes`)."""
    return (
        case_insensitive
        or not is_literal(source)
        or "'" in source
        or '"' in source
        or any(char.isspace() for char in source)
        or CJK_PAIR.search(source) is not None
    )


def find_matching_lines(document: DocumentText, source: str, case_insensitive: bool) -> LineMatches:
    """The first match of every line that has one, in order."""
    try:
        if not needs_regex(source, case_insensitive):
            return _first_literal_per_line(document, source)
        return _regex_lines(document, compile_pattern(source, case_insensitive))
    except TimeoutError:
        raise ToolError(
            f"`pattern` took longer than {TIME_BUDGET_S:.0f} s on this document and was stopped; "
            "simplify it (avoid nested repetition like (a+)+)"
        ) from None


def _regex_lines(document: DocumentText, pattern: regex.Pattern) -> LineMatches:
    """The budget starts when the text to search is ready, and covers every pass over it."""
    import regex

    source = pattern.pattern
    if not has_anchor(source):
        across = across_line_breaks(source)
        if not is_confined(source) or (across is not None and across != source):
            text, pattern = (document.spaced, pattern) if across is None else (document.text, regex.compile(across, pattern.flags))
            bounded = is_literal(source)  # a phrase as typed: its blank runs cannot backtrack
            return _numbered(document, *_first_spans(document, text, pattern, MatchBudget(), bounded), one_line=False)
        budget = MatchBudget()
        suffix = literal_suffix(source)
        if suffix is not None:
            found = _lines_with_suffix(document, pattern, regex.compile(suffix, pattern.flags), budget)
            if found is not None:
                return found
        # a confined pattern finds the same matches whether lines are joined by newlines or spaces
        return _numbered(document, *_first_spans(document, document.text, pattern, budget), one_line=True)
    per_line = line_local_pattern(source)
    if per_line is None:
        return _matching_lines_one_by_one(document, pattern)
    multiline = regex.compile(per_line, pattern.flags | regex.MULTILINE)
    # empty matches count here, as they do line by line
    return _numbered(document, *_first_spans(document, document.text, multiline, MatchBudget()), one_line=True)


def _first_literal_per_line(document: DocumentText, literal: str) -> LineMatches:
    """A literal without whitespace or CJK words: its first occurrence on each line, found with `str.find`.

    Matches never overlap a line break, so the first occurrence on a line is
    the first non-overlapping match there; the rest of the line is skipped.
    """
    starts: list[int] = []
    find = document.text.find
    position = find(literal)
    while position != -1:
        starts.append(position)
        line_end = find("\n", position + len(literal))
        if line_end == -1:
            break
        position = find(literal, line_end + 1)
    width = len(literal) - 1
    return LineMatches(document, starts, [start + width for start in starts])


def _first_spans(
    document: DocumentText, text: str, pattern: regex.Pattern, budget: MatchBudget, bounded: bool = False
) -> tuple[list[int], list[int]]:
    """The first match in `text` on each line (by its first character, a line's newline its own), empty ones
    included: offsets of its first and last character. After a line's first match, the next line is
    searched from its start, or from where that match ended when it ran on into a later line.

    The matches are read one after the other (one engine call for many: a call costs microseconds,
    more with a time limit), and the text searched again from the next line once a line has shown
    more than SKIPPED_PER_LINE matches beyond its first (`grep ' '` of a manual of 650,000 spaces
    stepped through them all) or one of them runs on into the next line (which a search from
    there may match). A plain literal cannot backtrack, and neither can one whose spaces became blank runs
    (`bounded`: they are possessive), so they run without the time budget, whose clock the engine reads
    at every match (four times the cost of `grep ' '`).
    """
    starts: list[int] = []
    last_chars: list[int] = []
    find = document.text.find
    unbudgeted = bounded or is_literal(pattern.pattern)
    line_end = -1  # the newline (or end) of the line of the last match kept
    position = 0
    while position <= len(text):
        resume = len(text) + 1
        try:
            found_all = (
                pattern.finditer(text, position) if unbudgeted else pattern.finditer(text, position, timeout=budget.call_timeout())
            )
            skipped = 0
            for found in found_all:
                start, end = found.span()
                if start > line_end:
                    starts.append(start)
                    last_chars.append(max(end - 1, start))
                    line_end = find("\n", start)
                    line_end = len(text) if line_end == -1 else line_end
                    skipped = 0
                    if end > line_end + 1:  # it ran on into a later line: search again from where it ended
                        resume = end
                        break
                    continue
                skipped += 1
                if skipped > SKIPPED_PER_LINE or end > line_end + 1:
                    resume = line_end + 1
                    break
        except TimeoutError:
            budget.confirm()  # spent: the pattern is stopped; else the search goes on from the next line
            resume = max(line_end + 1, position)
        position = resume
    return starts, last_chars


def _lines_with_suffix(
    document: DocumentText, pattern: regex.Pattern, suffix: regex.Pattern, budget: MatchBudget
) -> LineMatches | None:
    """The first match per line, searching only the lines where `suffix` matches; None when too many do.

    `pattern` cannot match a space or a newline and `suffix` is its tail from a
    literal on, so each of its matches lies inside one line and holds a match
    of `suffix` there; and `finditer` of `suffix` reports a match on every line
    that has one. Those lines, joined by newlines, give `pattern` the same
    surroundings as the whole text: a newline or an end either side, which
    `\\b` and `\\B` see as they see the spaces that stand for newlines.
    """
    text = document.text
    find, rfind = text.find, text.rfind
    line_starts: list[int] = []
    line_ends: list[int] = []
    line_end = -1
    for number, found in enumerate(budgeted_finditer(suffix, text, budget), start=1):
        start, end = found.span()
        if number > SUFFIX_FREE_MATCHES + start // SUFFIX_CHARS_PER_MATCH:
            return None
        if start < line_end:
            continue
        line_starts.append(rfind("\n", 0, start) + 1)
        line_end = find("\n", end)
        line_end = len(text) if line_end == -1 else line_end
        line_ends.append(line_end)
    pieces = [text[start:end] for start, end in zip(line_starts, line_ends, strict=True)]
    joined_starts = list(accumulate((len(piece) + 1 for piece in pieces), initial=0))
    starts: list[int] = []
    last_chars: list[int] = []
    previous = -1
    for found in budgeted_finditer(pattern, "\n".join(pieces), budget):
        start, end = found.span()
        piece = bisect_right(joined_starts, start) - 1
        if piece == previous:
            continue
        previous = piece
        offset = line_starts[piece] + start - joined_starts[piece]
        starts.append(offset)
        last_chars.append(offset + end - start - 1)
    return LineMatches(document, starts, last_chars)


def _numbered(document: DocumentText, starts: list[int], last_chars: list[int], one_line: bool) -> LineMatches:
    """The first matches of their lines, with the line of their last character unless `one_line`."""
    if one_line:
        return LineMatches(document, starts, last_chars)
    first = document.line_numbers(starts)
    count = document.text.count
    last = [line + count("\n", start, last_char) for line, start, last_char in zip(first, starts, last_chars)]
    return LineMatches(document, starts, last_chars, first, last)


def _matching_lines_one_by_one(document: DocumentText, pattern: regex.Pattern) -> LineMatches:
    """Each line on its own: for anchored patterns that could see past a line's end."""
    lines = document.lines()
    budget = MatchBudget()  # one for the whole document
    matched: list[int] = []
    for number, line in enumerate(lines, start=1):
        if budgeted_search(pattern, line, budget):
            matched.append(number)
    unknown = [-1] * len(matched)
    return LineMatches(document, unknown, unknown.copy(), matched)
