"""`read`: numbered lines of a document, a page at a time, and the document pages they span.

Only the stored blocks that hold the requested lines are decompressed, unless
the whole document is already in the line cache (after a `grep`, say).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.remote.names import split_doc_id
from linkly_ls.core.tools.common import get_document, add_on_disk, on_disk_note
from linkly_ls.core.tools.remote_documents import RemoteResult, ask_remote, sent_arguments
from linkly_ls.core.errors import ArgumentError, ToolError
from linkly_ls.core.provenance import Provenance, page_range_label
from linkly_ls.core.tools.validation import validate


@dataclass
class ReadResult:
    record: DocumentRecord
    offset: int
    lines: list[tuple[int, str]]
    units = "lines"

    @property
    def pages(self) -> tuple[int, int] | None:
        """The first and last page (PDF page, slide, chapter) of the lines shown; None without pages."""
        if not self.lines:
            return None
        pages = Provenance.of_pages(self.record.doc_id, self.record.page_starts)
        return pages.page_range(self.lines[0][0], self.lines[-1][0])

    def unit_count(self) -> int:
        return len(self.lines)

    def first_units(self, count: int) -> ReadResult:
        return replace(self, lines=self.lines[:count])

    def continuation(self, count: int) -> str:
        return f"continue with offset={self.lines[count][0]}"

    @property
    def remaining(self) -> int:
        last = self.lines[-1][0] if self.lines else self.offset - 1
        return max(0, self.record.total_lines - last)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "doc_id": self.record.doc_id,
            "title": self.record.title,
            "doc_type": self.record.doc_type,
            "path": self.record.path,
            "offset": self.offset,
            "lines": [{"line": number, "text": text} for number, text in self.lines],
            "total_lines": self.record.total_lines,
            "remaining_lines": self.remaining,
            "next_offset": self.lines[-1][0] + 1 if self.remaining else None,
        }
        if self.pages:
            data["pages"] = {"first": self.pages[0], "last": self.pages[1]}
        if self.record.text_missing_reason:
            data["text_missing_reason"] = self.record.text_missing_reason
        add_on_disk(data, self.record)
        return data

    def to_markdown(self) -> str:
        return read_markdown(self.to_json())


def read_markdown(data: dict[str, Any]) -> str:
    """The markdown of a `read` answer, from its JSON form (a remote's answer renders the same way)."""
    lines = [(entry["line"], entry["text"]) for entry in data["lines"]]
    width = len(str(lines[-1][0])) if lines else 1
    out = [f"{number:>{max(width, 6)}}\t{text}" for number, text in lines]
    if data.get("text_missing_reason"):
        out.append(f"[text missing: {data['text_missing_reason']}]")
    if data.get("pages"):
        out.append(f"[{page_range_label(data.get('doc_type', ''), data['pages']['first'], data['pages']['last'])}]")
    if data["remaining_lines"]:
        out.append(
            f"[{data['remaining_lines']} more line(s) of {data['total_lines']}; "
            f"continue with offset={data['next_offset']}]"
        )
    else:
        out.append(f"[end of document: {data['total_lines']} lines]")
    return "\n".join(out + on_disk_note(data))


def read(engine: Engine, **arguments: Any) -> ReadResult | RemoteResult:
    params = validate("read", arguments)
    remote, doc_id = split_doc_id(params["doc_id"])
    if remote is not None:
        return RemoteResult(ask_remote(engine, remote, "read", sent_arguments(params, doc_id=doc_id)), read_markdown)
    record = get_document(engine.catalog, params["doc_id"], with_outline=False)
    offset, limit = params["offset"], params["limit"]
    if params.get("page") is not None:
        offset, limit = _page_lines(record, params["page"], arguments, limit)
    total = record.total_lines
    if total and offset > total:
        raise ToolError(f"`offset` {offset} is past the end; the document has lines 1 to {total}")
    count = max(0, min(offset + limit, total + 1) - offset)
    lines = engine.catalog.line_range(record.doc_id, offset, count)  # only the blocks that hold them
    return ReadResult(record=record, offset=offset, lines=list(zip(range(offset, offset + len(lines)), lines)))


#: the most lines one call reads, and the lines it reads unless told (the schema's `limit` maximum and default)
MAX_READ_LINES, DEFAULT_READ_LINES = 500, 200


def _page_lines(record: DocumentRecord, page: int, arguments: dict[str, Any], limit: int) -> tuple[int, int]:
    """(first line, lines to read) of a page: from its marker, the page's lines unless `limit` was given. The
    faces pass the schema's defaults as given (the CLI's `--offset` is 1 unless set): those mean "not given"."""
    if arguments.get("offset") not in (None, 1):
        raise ArgumentError("give `page` or `offset`, not both: `page` starts at that page's first line")
    starts = record.page_starts
    if not starts:
        raise ArgumentError(f"{record.doc_type} documents have no pages: read them by `offset` (lines)")
    if page > len(starts):
        raise ArgumentError(f"`page` {page} is past the end; the document has pages 1 to {len(starts)}")
    end = starts[page] if page < len(starts) else record.total_lines + 1
    given = arguments.get("limit") not in (None, DEFAULT_READ_LINES)
    return starts[page - 1], limit if given else min(max(end - starts[page - 1], 1), MAX_READ_LINES)
