"""`links`: a document's links (where each leads, or why it is broken) and its backlinks.

One tool for both directions, so an agent walks the notes graph with doc ids
it already has: every resolved link and backlink carries the other
document's `doc_id`, and the line to `read` there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.links.mentions import Mention, Mentions, find_mentions
from linkly_ls.core.links.resolver import LinkResolver, ResolvedLink
from linkly_ls.core.provenance import Place, provenance_of
from linkly_ls.core.store.catalog import DocumentRecord, DocumentSummary
from linkly_ls.core.tools.common import get_document
from linkly_ls.core.tools.validation import validate


@dataclass
class LinksResult:
    record: DocumentRecord
    links: list[ResolvedLink]
    backlinks: list[ResolvedLink]
    total_links: int
    #: of `total_links`, those to a line of the document itself
    links_within: int
    total_backlinks: int
    broken: int
    source_titles: dict[str, str]
    #: backlinks that reach this document but not their place in it (an anchor it no longer has)
    broken_backlinks: int = 0
    #: the linking documents' types (an editor opens a text format as its file, others as a text view)
    source_types: dict[str, str] = field(default_factory=dict)
    #: asked for with `mentions=true`; None when not asked
    mentions: Mentions | None = None
    #: the listed mentions (at most `limit`) and what they show of their documents
    mention_rows: list[dict[str, Any]] | None = None
    #: which lists were asked for (`direction`), and where each listing starts
    outgoing_asked: bool = True
    incoming_asked: bool = True
    offset: int = 0
    limit: int = 100

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts while any list has more; None when every list is complete."""
        end = self.offset + self.limit
        mentions = len(self.mentions.mentions) if self.mentions is not None else 0
        return end if max(self.total_links, self.total_backlinks, mentions) > end else None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "doc_id": self.record.doc_id,
            "title": self.record.title,
            "path": self.record.path,
            "links": [link.to_json() for link in self.links],
            "backlinks": [self._backlink_json(link) for link in self.backlinks],
            "counts": {
                "links": self.total_links,
                "links_within": self.links_within,
                "backlinks": self.total_backlinks,
                "broken": self.broken,
                "backlinks_broken": self.broken_backlinks,
            },
        }
        if self.mentions is not None:
            data["mentions"] = self.mention_rows or []
            data["mention_names"] = self.mentions.names
            data["counts"]["mentions"] = len(self.mentions.mentions)
            data["counts"]["mentioning_documents"] = self.mentions.documents
            if self.mentions.truncated:
                data["mentions_truncated"] = True
        data["next_offset"] = self.next_offset
        return data

    def _backlink_json(self, link: ResolvedLink) -> dict[str, Any]:
        return {
            "doc_id": link.source_id,
            "title": self.source_titles.get(link.source_id, ""),
            "path": link.source_path,
            "doc_type": self.source_types.get(link.source_id, ""),
            "line": link.line,
            "text": link.text,
            "target": link.target,
            "target_line": link.target_line,
            "heading": link.heading,
            "status": link.status,
        }

    def to_markdown(self) -> str:
        record = self.record
        counts = []
        if self.outgoing_asked:
            within = f" ({self.links_within} within the document)" if self.links_within else ""
            counts.append(f"{self.total_links} link(s){within}, {self.broken} broken")
        if self.incoming_asked:
            broken = f" ({self.broken_backlinks} to a place it lacks)" if self.broken_backlinks else ""
            counts.append(f"{self.total_backlinks} backlink(s){broken}")
        out = [f"## Links of {record.title}", " · ".join([f"doc_id `{record.doc_id}`", record.path, *counts]), ""]
        more = f"continue with offset={self.next_offset}" if self.next_offset is not None else ""
        if self.links:
            out.append("### Links")
            for link in self.links:
                out.append(f"- line {link.line}: {_describe(link)}")
            out.append("")
            after = self.total_links - self.offset - len(self.links)
            if after > 0:
                out += [f"[{after:,} more link(s): {more}]", ""]
        if self.backlinks:
            out.append("### Backlinks")
            for link in self.backlinks:
                title = self.source_titles.get(link.source_id, link.source_path)
                where = f" → line {link.target_line}" if link.target_line and link.target_line > 1 else ""
                problem = f" · **broken**: {link.problem()}" if link.broken else ""
                out.append(f"- {title} (`{link.source_id}`) line {link.line}: {_written(link)}{where}{problem}")
            out.append("")
            after = self.total_backlinks - self.offset - len(self.backlinks)
            if after > 0:
                out += [f"[{after:,} more backlink(s): {more}]", ""]
        if self.mentions is not None:
            out.extend(self._mentions_markdown())
        if not self.links and not self.backlinks and not self.mention_rows:
            out.append(
                f"_Nothing from offset {self.offset}: the counts above say how many there are._"
                if self.offset
                else _nothing_found(self.outgoing_asked, self.incoming_asked)
            )
        return "\n".join(out).rstrip()

    def _mentions_markdown(self) -> list[str]:
        mentions = self.mentions
        assert mentions is not None
        names = " or ".join(f"“{name}”" for name in mentions.names) or "no usable name"
        out = [
            f"### Unlinked mentions of {names}: {len(mentions.mentions)} line(s) in "
            f"{mentions.documents} document(s)" + (" (the name is too common: some may be missing)" if mentions.truncated else "")
        ]
        for row in self.mention_rows or []:
            label = Place(row.get("page"), row.get("section")).label(row["doc_type"])
            place = f" ({label})" if label else ""
            out.append(f"- {row['title']} (`{row['doc_id']}`) line {row['line']}{place}: {row['snippet']}")
        out.append("")
        return out


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


def _mention_rows(engine: Engine, mentions: list[Mention]) -> list[dict[str, Any]]:
    """JSON rows of the mentions listed: each with its document's title and type, its page and section."""
    doc_ids = sorted({mention.doc_id for mention in mentions})
    summaries: dict[str, DocumentSummary] = engine.catalog.summaries(doc_ids)
    places = provenance_of(engine.catalog, doc_ids)
    rows: list[dict[str, Any]] = []
    for mention in mentions:
        summary = summaries.get(mention.doc_id)
        doc_type = summary.doc_type if summary else ""
        place = places[mention.doc_id].place(mention.line)
        row = {
            "doc_id": mention.doc_id,
            "title": summary.title if summary else mention.path,
            "path": mention.path,
            "doc_type": doc_type,
            "line": mention.line,
            "column": mention.start,
            "name": mention.name,
            "snippet": mention.snippet(),
        }
        rows.append(place.add_to(row))
    return rows


def links(engine: Engine, **arguments: Any) -> LinksResult:
    params = validate("links", arguments)
    record = get_document(engine.catalog, params["doc_id"])
    resolver = LinkResolver(engine.catalog)
    direction = params["direction"]
    limit, offset = params["limit"], params["offset"]
    end = offset + limit
    outgoing: list[ResolvedLink] = []
    total_links = links_within = broken = 0
    if direction in ("both", "out"):
        # links that leave the document first: a PDF's contents, cross-references and index are
        # thousands of links within it, and would fill `limit` alone
        found = resolver.outgoing(record, within_shown=end)
        outgoing = found.leaving + found.within
        total_links, links_within, broken = len(found.leaving) + found.within_total, found.within_total, found.broken
        if params["broken_only"]:
            outgoing = [link for link in outgoing if link.broken]
            links_within = sum(1 for link in found.within if link.broken) + found.within_broken_unshown
            total_links = broken
    # backlinks come from other documents; the document's links to itself are among its links
    incoming = resolver.backlinks(record, from_itself=False) if direction in ("both", "in") else []
    broken_backlinks = sum(1 for link in incoming if link.broken)
    if params["broken_only"]:  # a heading renamed here: the pages that now link to an anchor it no longer has
        incoming = [link for link in incoming if link.broken]
    sources = engine.catalog.summaries(sorted({link.source_id for link in incoming[offset:end]}))
    mentions: Mentions | None = None
    if params["mentions"]:
        linking = resolver.backlinks(record, from_itself=False) if direction == "out" else incoming
        mentions = find_mentions(engine.catalog, engine.keyword, record, {link.source_id for link in linking})
    return LinksResult(
        record=record,
        links=outgoing[offset:end],
        backlinks=incoming[offset:end],
        total_links=total_links,
        links_within=links_within,
        total_backlinks=len(incoming),
        broken=broken,
        broken_backlinks=broken_backlinks,
        source_titles={doc_id: summary.title for doc_id, summary in sources.items()},
        source_types={doc_id: summary.doc_type for doc_id, summary in sources.items()},
        mentions=mentions,
        mention_rows=_mention_rows(engine, mentions.mentions[offset:end]) if mentions is not None else None,
        outgoing_asked=direction in ("both", "out"),
        incoming_asked=direction in ("both", "in"),
        offset=offset,
        limit=limit,
    )


def _nothing_found(outgoing: bool, incoming: bool) -> str:
    if outgoing and incoming:
        return "_No links from or to this document._"
    return "_No links from this document._" if outgoing else "_No links to this document (no backlinks)._"
