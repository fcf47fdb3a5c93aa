"""`grep`: regex matches inside one document, with context and paging.

`grep_lines` finds the matching lines (the first match of each); this module
pages them, adds context lines and each match's page and section, and renders
the result.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.store.line_cache import DocumentText
from linkly_ls.core.remote.names import split_doc_id
from linkly_ls.core.tools.common import get_document, add_on_disk, on_disk_note
from linkly_ls.core.tools.remote_documents import RemoteResult, ask_remote, sent_arguments
from linkly_ls.core.errors import ToolError
from linkly_ls.core.provenance import Place, provenance_of
from linkly_ls.core.search.grep_lines import LineMatch, compile_pattern, find_matching_lines, match_column, needs_regex
from linkly_ls.core.tools.validation import validate

MAX_LINE_CHARS_SHOWN = 1000


@dataclass
class GrepMatch:
    line: int
    text: str
    end_line: int
    before: list[tuple[int, str]] = field(default_factory=list)
    after: list[tuple[int, str]] = field(default_factory=list)
    place: Place = field(default_factory=Place)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "line": self.line,
            "text": self.text,
            "before": [{"line": n, "text": t} for n, t in self.before],
            "after": [{"line": n, "text": t} for n, t in self.after],
        }
        if self.end_line != self.line:
            data["end_line"] = self.end_line
        return self.place.add_to(data)


@dataclass
class GrepResult:
    record: DocumentRecord
    pattern: str
    total_matches: int
    matches: list[GrepMatch]
    offset: int
    output_mode: str
    units = "matches"

    def unit_count(self) -> int:
        return len(self.matches)

    def first_units(self, count: int) -> GrepResult:
        return replace(self, matches=self.matches[:count])

    def continuation(self, count: int) -> str:
        return f"continue with offset={self.offset + count}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "doc_id": self.record.doc_id,
            "title": self.record.title,
            "doc_type": self.record.doc_type,
            "pattern": self.pattern,
            "total_matches": self.total_matches,
            "total_lines": self.record.total_lines,
        }
        add_on_disk(data, self.record)
        if self.output_mode == "content":
            data["offset"] = self.offset
            data["matches"] = [match.to_json() for match in self.matches]
            shown_to = self.offset + len(self.matches)
            data["next_offset"] = shown_to if shown_to < self.total_matches else None
            if not self.matches and 0 < self.total_matches <= self.offset:
                data["note"] = _past_the_end(self.offset, self.total_matches)
        return data

    def to_markdown(self) -> str:
        return grep_markdown(self.to_json())


def grep_markdown(data: dict[str, Any]) -> str:
    """The markdown of a `grep` answer, from its JSON form (a remote's answer renders the same way)."""
    head = f"{data['total_matches']} matching line(s) for `{data['pattern']}` in {data['title']} (`{data['doc_id']}`)"
    if "matches" not in data:  # output_mode=count
        return "\n".join([head, *on_disk_note(data)])
    out = [head, ""]
    previous_end = None
    previous_place = Place()
    matches = data["matches"]
    for position, match in enumerate(matches):
        before = [(entry["line"], entry["text"]) for entry in match["before"]]
        first = before[0][0] if before else match["line"]
        if previous_end is not None and first > previous_end + 1:
            out.append("--")
        place = Place(match.get("page"), match.get("section"))
        label = place.label(data.get("doc_type", ""))
        if place != previous_place and label:
            out.append(f"[{label}]")
        previous_place = place
        for number, text in before:
            if previous_end is None or number > previous_end:
                out.append(f"{number}-\t{text}")
        previous_end = match.get("end_line", match["line"])
        lines = f"{match['line']}-{previous_end}" if previous_end != match["line"] else str(match["line"])
        out.append(f"{lines}:\t{match['text']}")  # a match across a line break: its lines' text, joined
        # as grep -C: a line of the next match's is shown once, as a match, not also as context before it
        next_match = matches[position + 1]["line"] if position + 1 < len(matches) else None
        for entry in match["after"]:
            if next_match is not None and entry["line"] >= next_match:
                break
            out.append(f"{entry['line']}-\t{entry['text']}")
            previous_end = entry["line"]
    shown_to = data["offset"] + len(data["matches"])
    if not data["matches"] and data["total_matches"] and data["offset"] >= data["total_matches"]:
        out.append(f"[{_past_the_end(data['offset'], data['total_matches'])}]")
    if shown_to < data["total_matches"]:
        out.append(f"\n[{data['total_matches'] - shown_to} more match(es); continue with offset={shown_to}]")
    return "\n".join(out + on_disk_note(data))


def _clip(text: str, column: int = 0) -> str:
    """At most MAX_LINE_CHARS_SHOWN characters of `text`, from a little before `column` (where the match
    starts) on, with "…" where text is left out."""
    if len(text) <= MAX_LINE_CHARS_SHOWN:
        return text
    start = max(0, min(column - MAX_LINE_CHARS_SHOWN // 4, len(text) - MAX_LINE_CHARS_SHOWN))
    end = start + MAX_LINE_CHARS_SHOWN
    return ("… " if start else "") + text[start:end] + (" …" if end < len(text) else "")


def _grep_match(
    document: DocumentText, found: LineMatch, before: int, after: int, locate: Callable[[str], int]
) -> GrepMatch:
    """The matched line(s) and their context, found from the match's offsets when known (else by
    `locate`, which finds the match in the line's text)."""
    if found.start < 0:
        matched = " ".join(document.line_range(found.first, found.last - found.first + 1))
        return GrepMatch(
            line=found.first,
            text=_clip(matched, locate(matched) if len(matched) > MAX_LINE_CHARS_SHOWN else 0),
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
        text=_clip(text[first_start:last_end].replace("\n", " "), found.start - first_start),
        end_line=found.last,
        before=preceding[::-1],
        after=following,
    )


def grep(engine: Engine, **arguments: Any) -> GrepResult | RemoteResult:
    params = validate("grep", arguments)
    source, case_insensitive = unicodedata.normalize("NFC", params["pattern"]), params["case_insensitive"]
    remote, doc_id = split_doc_id(params["doc_id"])
    record = get_document(engine.catalog, params["doc_id"], with_outline=False) if remote is None else None
    if needs_regex(source, case_insensitive):
        compile_pattern(source, case_insensitive)  # a bad pattern is reported before the text is read
    if record is None:
        return RemoteResult(ask_remote(engine, remote, "grep", sent_arguments(params, doc_id=doc_id)), grep_markdown)
    document = engine.catalog.document_text(record.doc_id)
    if document is None:
        raise ToolError(f"`doc_id` {record.doc_id!r} is not an indexed document; use an id from search results")
    document = document.composed()
    found = find_matching_lines(document, source, case_insensitive)
    before = params["before"] if params["before"] is not None else params["context"]
    after = params["after"] if params["after"] is not None else params["context"]
    offset, limit = params["offset"], params["limit"]
    matches: list[GrepMatch] = []
    if params["output_mode"] == "content":
        locate = partial(match_column, source=source, case_insensitive=case_insensitive)
        matches = [_grep_match(document, line_match, before, after, locate) for line_match in found.page(offset, limit)]
        provenance = provenance_of(engine.catalog, [record.doc_id])[record.doc_id] if matches else None
        for match in matches:
            match.place = provenance.place(match.line)
    return GrepResult(
        record=record,
        pattern=source,
        total_matches=len(found),
        matches=matches,
        offset=offset,
        output_mode=params["output_mode"],
    )


def _past_the_end(offset: int, total: int) -> str:
    return f"offset {offset} is past the last match: there are {total}; start below that"
