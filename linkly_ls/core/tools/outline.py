"""`outline`: the section tree of one or more documents, with line ranges for `read`, and how many
links each document has and how many lead to it (the `links` tool lists them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.document import OutlineNode
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.tools.common import get_document, iso_utc
from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.tools.schema import validate


@dataclass
class DocumentOutline:
    record: DocumentRecord
    nodes: list[dict[str, Any]]
    links: int = 0
    backlinks: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "doc_id": self.record.doc_id,
            "title": self.record.title,
            "path": self.record.path,
            "doc_type": self.record.doc_type,
            "total_lines": self.record.total_lines,
            "word_count": self.record.word_count,
            "modified_at": iso_utc(self.record.modified_at),
            "has_outline": self.record.has_outline,
            "links": self.links,
            "backlinks": self.backlinks,
            "nodes": self.nodes,
        }


@dataclass
class OutlineResult:
    documents: list[DocumentOutline]

    def to_json(self) -> dict[str, Any]:
        return {"documents": [document.to_json() for document in self.documents]}

    def to_markdown(self) -> str:
        out: list[str] = []
        for document in self.documents:
            record = document.record
            out.append(f"## {record.title}")
            out.append(
                f"doc_id `{record.doc_id}` · {record.doc_type} · {record.total_lines} lines · "
                f"{record.word_count} words · {document.links} link(s), {document.backlinks} backlink(s) · "
                f"{record.path}"
            )
            if not document.nodes:
                out.append(
                    "_No outline (has_outline: false): use `grep` to find passages or `read` it page by page._"
                )
            _markdown_nodes(document.nodes, 0, out)
            out.append("")
        return "\n".join(out).rstrip()


def _markdown_nodes(nodes: list[dict[str, Any]], depth: int, out: list[str]) -> None:
    for node in nodes:
        folded = f" (+{node['collapsed']} collapsed)" if node.get("collapsed") else ""
        out.append(
            f"{'  ' * depth}- [{node['id']}] {node['title']} · lines {node['start_line']}-{node['end_line']}{folded}"
        )
        _markdown_nodes(node["children"], depth + 1, out)


def _count(nodes: list[OutlineNode]) -> int:
    return sum(1 + _count(node.children) for node in nodes)


def _render_nodes(nodes: list[OutlineNode], expand: set[str] | None) -> list[dict[str, Any]]:
    """All levels when `expand` is None; else top level plus the expanded nodes' children
    (and the path down to each expanded node)."""
    rendered: list[dict[str, Any]] = []
    for node in nodes:
        data = node.to_dict()
        if expand is None:
            rendered.append(data)
            continue
        opened = node.id in expand or any(wanted.startswith(node.id + ".") for wanted in expand)
        data["children"] = _render_nodes(node.children, expand) if opened else []
        if not opened and node.children:
            data["collapsed"] = _count(node.children)
        rendered.append(data)
    return rendered


def _all_ids(nodes: list[OutlineNode]) -> set[str]:
    ids: set[str] = set()
    for node in nodes:
        ids.add(node.id)
        ids |= _all_ids(node.children)
    return ids


def outline(engine: Engine, **arguments: Any) -> OutlineResult:
    params = validate("outline", arguments)
    expand = set(params["expand"]) if params["expand"] else None
    documents: list[DocumentOutline] = []
    resolver = LinkResolver(engine.catalog)
    for index, doc_id in enumerate(dict.fromkeys(params["doc_ids"])):
        record = get_document(engine.catalog, doc_id, f"doc_ids[{index}]")
        documents.append(
            DocumentOutline(
                record=record,
                nodes=_render_nodes(record.outline, expand),
                links=engine.catalog.link_count(record.doc_id),
                backlinks=len(resolver.backlinks(record)),
            )
        )
    if expand is not None:
        known = set().union(*(_all_ids(document.record.outline) for document in documents))
        unknown = sorted(expand - known)
        if unknown:
            raise ArgumentError(
                f"`expand` names node(s) {', '.join(unknown)} that are not in the outline; "
                "use ids shown by outline, like \"2\" or \"3.1\""
            )
    return OutlineResult(documents=documents)
