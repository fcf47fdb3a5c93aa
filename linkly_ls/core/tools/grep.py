"""`grep`: regex matches inside one document, with context and paging.

The pattern runs over the document's lines joined by newlines turned into
spaces (offsets unchanged), so a phrase that a PDF broke across two lines
still matches; patterns with `^` or `$` run line by line instead. Matching
runs under a time budget so a catastrophic pattern cannot stall the server.
"""

from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linkly_ls.core.catalog import DocumentRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools.common import get_document
from linkly_ls.core.tools.errors import ArgumentError, ToolError
from linkly_ls.core.tools.schema import validate

if TYPE_CHECKING:
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


def find_matching_lines(lines: list[str], pattern: regex.Pattern, anchored: bool) -> list[tuple[int, int]]:
    """(first line, last line) of every match, one entry per first line, in order."""
    matched: dict[int, int] = {}
    deadline = time.monotonic() + TIME_BUDGET_S
    try:
        if anchored:
            for number, line in enumerate(lines, start=1):
                remaining = deadline - time.monotonic()
                if remaining <= 0:  # the budget is for the whole document, not for each line
                    raise TimeoutError
                if pattern.search(line, timeout=remaining):
                    matched[number] = number
            return list(matched.items())
        text = " ".join(lines)
        starts: list[int] = []
        position = 0
        for line in lines:
            starts.append(position)
            position += len(line) + 1
        for found in pattern.finditer(text, timeout=TIME_BUDGET_S):
            if found.end() == found.start() and not found.group(0):
                continue
            first = bisect.bisect_right(starts, found.start())
            last = bisect.bisect_right(starts, max(found.end() - 1, found.start()))
            if first not in matched:
                matched[first] = last
    except TimeoutError:
        raise ToolError(
            f"`pattern` took longer than {TIME_BUDGET_S:.0f} s on this document and was stopped; "
            "simplify it (avoid nested repetition like (a+)+)"
        ) from None
    return list(matched.items())


def grep(engine: Engine, **arguments: Any) -> GrepResult:
    import regex  # loaded by the first grep, not by every process that opens the tools

    params = validate("grep", arguments)
    record = get_document(engine.catalog, params["doc_id"])
    flags = regex.V0 | (regex.IGNORECASE if params["case_insensitive"] else 0)
    try:
        pattern = regex.compile(params["pattern"], flags)
    except (regex.error, OverflowError) as error:
        raise ArgumentError(f"`pattern` is not a valid regular expression: {error}") from None
    anchored = any(token in params["pattern"] for token in ("^", "$", "\\A", "\\Z"))
    lines = engine.catalog.lines(record.doc_id)
    found = find_matching_lines(lines, pattern, anchored)
    before = params["before"] if params["before"] is not None else params["context"]
    after = params["after"] if params["after"] is not None else params["context"]
    offset, limit = params["offset"], params["limit"]
    matches: list[GrepMatch] = []
    if params["output_mode"] == "content":
        for first, last in found[offset : offset + limit]:
            matches.append(
                GrepMatch(
                    line=first,
                    text=_clip(" ".join(lines[first - 1 : last])),
                    end_line=last,
                    before=[(n, _clip(lines[n - 1])) for n in range(max(1, first - before), first)],
                    after=[(n, _clip(lines[n - 1])) for n in range(last + 1, min(len(lines), last + after) + 1)],
                )
            )
    return GrepResult(
        record=record,
        pattern=params["pattern"],
        total_matches=len(found),
        matches=matches,
        offset=offset,
        output_mode=params["output_mode"],
    )
