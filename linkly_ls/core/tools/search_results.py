"""The answer of `search`: its hits and how each face renders them (JSON and Markdown)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linkly_ls.core.provenance import Place
from linkly_ls.core.search.snippets import Snippet
from linkly_ls.core.store.records import DocumentSummary
from linkly_ls.core.tools.common import iso_utc, on_disk
from linkly_ls.core.tools.render import path_text

#: most characters of the query the markdown answer's heading repeats
QUERY_SHOWN_CHARS = 200


def one_line(text: str) -> str:
    """A name on the one line the text form gives it: a newline in a file name (legal on Linux) would
    start a line of its own, which reads as another field (`- doc_id: ...`)."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


@dataclass
class OtherFile:
    """Another file of a hit's work: a copy, or the same text in another format (`same_work`)."""

    doc_id: str
    path: str
    doc_type: str
    library: str

    def to_json(self) -> dict[str, str]:
        return {"doc_id": self.doc_id, "path": self.path, "doc_type": self.doc_type, "library": self.library}


@dataclass
class SearchHit:
    doc_id: str
    title: str
    path: str
    relevance: float
    word_count: int
    total_lines: int
    has_outline: bool
    modified_at: str
    keywords: list[str]
    snippet: str
    doc_type: str
    library: str
    line: int
    start_line: int
    end_line: int
    #: "changed" or "deleted" when the file on disk is not what was indexed (`common.on_disk`)
    on_disk: str | None = None
    text_missing_reason: str | None = None
    explain: dict[str, Any] | None = None
    #: what copies share: copies on several servers show once when their answers are merged
    content_hash: str | None = None
    #: the server that answered ("local" or a remote's name), set when several servers were searched
    server: str | None = None
    place: Place = field(default_factory=Place)
    #: the other files of this work, shown here rather than as results of their own
    also_as: list[OtherFile] = field(default_factory=list)

    @classmethod
    def from_summary(
        cls, record: DocumentSummary, relevance: float, snippet: Snippet, start_line: int, end_line: int, **extra: Any
    ) -> SearchHit:
        """A local document's hit: its catalog facts, the shown passage and snippet, and `extra` fields."""
        return cls(
            doc_id=record.doc_id,
            title=record.title,
            path=record.path,
            relevance=relevance,
            word_count=record.word_count,
            total_lines=record.total_lines,
            has_outline=record.has_outline,
            modified_at=iso_utc(record.modified_at),
            keywords=record.keywords,
            snippet=snippet.text,
            doc_type=record.doc_type,
            library=record.library,
            line=snippet.line,
            start_line=start_line,
            end_line=end_line,
            on_disk=on_disk(record),
            text_missing_reason=record.text_missing_reason,
            content_hash=record.content_hash,
            **extra,
        )

    @property
    def page(self) -> int | None:
        return self.place.page

    @property
    def section(self) -> str | None:
        return self.place.section

    def to_json(self) -> dict[str, Any]:
        data = {
            "doc_id": self.doc_id,
            "title": self.title,
            "path": self.path,
            "relevance": self.relevance,
            "word_count": self.word_count,
            "total_lines": self.total_lines,
            "has_outline": self.has_outline,
            "modified_at": self.modified_at,
            "keywords": self.keywords,
            "snippet": self.snippet,
            "doc_type": self.doc_type,
            "library": self.library,
            "line": self.line,
            "passage": {"start_line": self.start_line, "end_line": self.end_line},
            "stale": self.on_disk is not None,
        }
        if self.on_disk:
            data["on_disk"] = self.on_disk
        self.place.add_to(data)
        if self.text_missing_reason:
            data["text_missing_reason"] = self.text_missing_reason
        if self.explain is not None:
            data["explain"] = self.explain
        if self.content_hash:
            data["content_hash"] = self.content_hash
        if self.server is not None:
            data["server"] = self.server
        if self.also_as:
            data["also_as"] = [other.to_json() for other in self.also_as]
        return data


@dataclass
class SearchResult:
    query: str
    results: list[SearchHit]
    mode: str = "keyword"
    mode_reason: str = "no embedding model is configured; keyword search only"
    #: vectors are still being computed (or the model downloaded): results may improve
    indexing: bool = False
    miss: bool = False
    guidance: list[str] = field(default_factory=list)
    #: why nothing can match at all (an empty index), said instead of "No strong match."
    notice: str | None = None
    #: the query's words, when not one of them occurs in any indexed document
    absent_words: list[str] | None = None
    #: what the answer must say whatever its results (a quoted phrase searched as plain words)
    notes: list[str] = field(default_factory=list)
    #: where the next page of the same ranking (or listing) starts, when there is one
    next_offset: int | None = None
    #: how many documents pass the filters, for the `*` listing
    total_matching: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "results": [hit.to_json() for hit in self.results],
            "total": len(self.results),
            "mode": self.mode,
            "mode_reason": self.mode_reason,
            "indexing": self.indexing,
            "miss": self.miss,
        }
        if self.notes:
            data["notes"] = self.notes
        if self.next_offset is not None:
            data["next_offset"] = self.next_offset
        if self.total_matching is not None:
            data["matching"] = self.total_matching
        if self.guidance:
            data["guidance"] = self.guidance
        if self.notice:
            data["notice"] = self.notice
        return data

    def to_markdown(self) -> str:
        shown = " ".join(self.query.split())
        if len(shown) > QUERY_SHOWN_CHARS:  # a pasted page of text is searched whole, not echoed whole
            shown = shown[: QUERY_SHOWN_CHARS - 1] + f"… ({len(self.query):,} characters)"
        out = [f"## Search: {shown}", f"_{len(self.results)} result(s) · mode: {self.mode} ({self.mode_reason})_"]
        if self.indexing:
            out.append("_The index is still building (vectors are being computed); results may improve._")
        out.extend(f"_{note}_" for note in self.notes)
        out.append("")
        for rank, hit in enumerate(self.results, start=1):
            flags = {"changed": " · **stale** (changed on disk since indexed)", "deleted": " · **stale** (deleted from disk)"}.get(
                hit.on_disk or "", ""
            )
            out.append(f"### {rank}. {one_line(hit.title)}")
            out.append(
                f"- doc_id: `{hit.doc_id}` · {hit.doc_type} · relevance {hit.relevance:.2f} · "
                f"{hit.word_count} words · {hit.total_lines} lines · outline: {'yes' if hit.has_outline else 'no'}{flags}"
            )
            out.append(f"- path: {path_text(hit.path)}")
            where = hit.place.label(hit.doc_type)
            out.append(
                f"- modified: {hit.modified_at} · best passage: lines {hit.start_line}-{hit.end_line}"
                + (f" ({where})" if where else "")
            )
            if hit.keywords:
                out.append(f"- keywords: {', '.join(hit.keywords)}")
            if hit.text_missing_reason:
                out.append(f"- text missing: {hit.text_missing_reason}")
            for other in hit.also_as:
                out.append(f"- also as: {other.doc_type} · `{other.doc_id}` · {path_text(other.path)}")
            if hit.snippet:
                out.append(f"> {hit.snippet}")
            if hit.explain:
                out.append("- explain: " + " · ".join(f"{key} {'—' if value is None else value}" for key, value in hit.explain.items()))
            out.append("")
        if self.next_offset is not None:
            out.append(f"_More results: continue with offset={self.next_offset}._")
        if self.miss:
            if self.notice:
                head = f"**{self.notice}**"
            elif self.absent_words:
                head = "**No document contains these words.**"
            else:
                head = "**No strong match.**"
            out.append(head + " " + " ".join(self.guidance))
        return "\n".join(out).rstrip()
