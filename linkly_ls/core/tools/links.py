"""`links`: a document's links (where each leads, or why it is broken) and its backlinks.

One tool for both directions, so an agent walks the notes graph with doc ids
it already has: every resolved link and backlink carries the other
document's `doc_id`, and the line to `read` there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver, ResolvedLink
from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.tools.common import get_document
from linkly_ls.core.tools.schema import validate


@dataclass
class LinksResult:
    record: DocumentRecord
    links: list[ResolvedLink]
    backlinks: list[ResolvedLink]
    total_links: int
    total_backlinks: int
    broken: int
    source_titles: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.record.doc_id,
            "title": self.record.title,
            "path": self.record.path,
            "links": [link.to_json() for link in self.links],
            "backlinks": [self._backlink_json(link) for link in self.backlinks],
            "counts": {"links": self.total_links, "backlinks": self.total_backlinks, "broken": self.broken},
        }

    def _backlink_json(self, link: ResolvedLink) -> dict[str, Any]:
        return {
            "doc_id": link.source_id,
            "title": self.source_titles.get(link.source_id, ""),
            "path": link.source_path,
            "line": link.line,
            "text": link.text,
            "target": link.target,
            "target_line": link.target_line,
            "heading": link.heading,
        }

    def to_markdown(self) -> str:
        record = self.record
        out = [
            f"## Links of {record.title}",
            f"doc_id `{record.doc_id}` · {record.path} · {self.total_links} link(s), "
            f"{self.broken} broken · {self.total_backlinks} backlink(s)",
            "",
        ]
        if self.links:
            out.append("### Links")
            for link in self.links:
                out.append(f"- line {link.line}: {_describe(link)}")
            out.append("")
        if self.backlinks:
            out.append("### Backlinks")
            for link in self.backlinks:
                title = self.source_titles.get(link.source_id, link.source_path)
                where = f" → line {link.target_line}" if link.target_line and link.target_line > 1 else ""
                out.append(f"- {title} (`{link.source_id}`) line {link.line}: {_written(link)}{where}")
            out.append("")
        if not self.links and not self.backlinks:
            out.append("_No links from or to this document._")
        return "\n".join(out).rstrip()


def _written(link: ResolvedLink) -> str:
    """The link as its source writes it, more or less."""
    if link.kind == "wiki":
        return f"[[{link.target}]]" if link.text in ("", link.target) else f"[[{link.target}|{link.text}]]"
    return f"[{link.text}]({link.target})" if link.text and link.text != link.target else link.target


def _describe(link: ResolvedLink) -> str:
    shown = _written(link)
    if link.status == "ok":
        place = f" line {link.target_line}" if link.target_line and link.target_line > 1 else ""
        section = f" § {link.heading}" if link.heading else ""
        return f"{shown} → {link.title} (`{link.doc_id}`){section}{place}"
    if link.broken:
        return f"{shown} · **broken**: {link.problem()}"
    return f"{shown} · {link.status}"


def links(engine: Engine, **arguments: Any) -> LinksResult:
    params = validate("links", arguments)
    record = get_document(engine.catalog, params["doc_id"])
    resolver = LinkResolver(engine.catalog)
    direction = params["direction"]
    outgoing = resolver.links_of(record) if direction in ("both", "out") else []
    if params["broken_only"]:
        outgoing = [link for link in outgoing if link.broken]
    incoming = resolver.backlinks(record) if direction in ("both", "in") else []
    limit = params["limit"]
    titles = {doc_id: title for doc_id, title in _titles(engine, incoming[:limit]).items()}
    return LinksResult(
        record=record,
        links=outgoing[:limit],
        backlinks=incoming[:limit],
        total_links=len(outgoing),
        total_backlinks=len(incoming),
        broken=sum(1 for link in outgoing if link.broken),
        source_titles=titles,
    )


def _titles(engine: Engine, found: list[ResolvedLink]) -> dict[str, str]:
    summaries = engine.catalog.summaries(sorted({link.source_id for link in found}))
    return {doc_id: summary.title for doc_id, summary in summaries.items()}
