"""`related`: the documents closest in meaning to a document or one of its sections, with a reason each.

Results have the shape of search hits (`relevance` included), plus `reason`
and `shared_terms`; the ranking is `core/links/related.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ToolError
from linkly_ls.core.links.related import Related, find_related
from linkly_ls.core.provenance import provenance_of
from linkly_ls.core.search.snippets import QueryMatcher, best_snippet
from linkly_ls.core.tools.common import get_document, resolve_library
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.tools.search_results import OtherFile, SearchHit
from linkly_ls.core.tools.render import path_text


@dataclass
class RelatedHit:
    hit: SearchHit
    reason: str
    shared_terms: list[str]

    def to_json(self) -> dict[str, Any]:
        return {**self.hit.to_json(), "reason": self.reason, "shared_terms": self.shared_terms}


@dataclass
class RelatedResult:
    related: Related
    results: list[RelatedHit]

    def to_json(self) -> dict[str, Any]:
        source = self.related.source
        return {
            "doc_id": source.doc_id,
            "title": source.title,
            "section": {"start_line": self.related.start_line, "end_line": self.related.end_line},
            "terms": self.related.terms,
            "results": [hit.to_json() for hit in self.results],
            "total": len(self.results),
            "mode": self.related.mode,
            "mode_reason": self.related.mode_reason,
            "excluded_links": self.related.excluded_links,
        }

    def to_markdown(self) -> str:
        source = self.related.source
        out = [
            f"## Related to {source.title}",
            f"_lines {self.related.start_line}-{self.related.end_line} · {len(self.results)} result(s) · "
            f"mode: {self.related.mode} ({self.related.mode_reason}) · "
            f"{self.related.excluded_links} already-linked document(s) left out_",
            "",
        ]
        for rank, item in enumerate(self.results, start=1):
            hit = item.hit
            out.append(f"### {rank}. {hit.title}")
            out.append(f"- doc_id: `{hit.doc_id}` · {hit.doc_type} · relevance {hit.relevance:.2f} · {item.reason}")
            out.append(f"- path: {path_text(hit.path)} · best passage: lines {hit.start_line}-{hit.end_line}")
            for other in hit.also_as:
                out.append(f"- also as: {other.doc_type} · `{other.doc_id}` · {path_text(other.path)}")
            if hit.snippet:
                out.append(f"> {hit.snippet}")
            out.append("")
        if not self.results:
            out.append(f"_Nothing related: {self.related.mode_reason}._" if self.related.mode == "none" else
                       "_Nothing related found outside the documents it already links to._" if self.related.excluded_links else
                       "_Nothing related found._")
        return "\n".join(out).rstrip()


def related(engine: Engine, **arguments: Any) -> RelatedResult:
    params = validate("related", arguments)
    record = get_document(engine.catalog, params["doc_id"])
    line = params.get("line")
    if line is not None and record.total_lines and line > record.total_lines:  # as `read` says of its offset
        raise ToolError(f"`line` {line} is past the end; the document has lines 1 to {record.total_lines}")
    library = resolve_library(engine.catalog, params.get("library"))
    allowed = [doc_id for doc_id, _ in engine.catalog.documents_matching(library.name)] if library else None
    found = find_related(engine, record, params.get("line"), params["limit"], allowed)
    summaries = engine.catalog.summaries([item.doc_id for item in found.documents])
    places = provenance_of(engine.catalog, [item.doc_id for item in found.documents])
    matcher = QueryMatcher(" ".join(found.terms))
    results: list[RelatedHit] = []
    for item in found.documents:
        summary = summaries.get(item.doc_id)
        if summary is None:
            continue
        lines = engine.catalog.lines(item.doc_id)
        snippet = best_snippet(
            matcher.in_language(summary.language), lines, item.start_line, item.end_line,
            places[item.doc_id].marker_lines(lines),
        )
        hit = SearchHit.from_summary(
            summary, item.relevance, snippet, item.start_line, item.end_line, place=places[item.doc_id].place(snippet.line),
            also_as=[OtherFile(other.doc_id, other.path, other.doc_type, other.library) for other in item.also_as],
        )
        results.append(RelatedHit(hit, item.reason, item.shared_terms))
    return RelatedResult(found, results)
