"""`outline`: the section tree of one or more documents, with line ranges for `read`, and how many
links each document has and how many lead to it (the `links` tool lists them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.document import OutlineNode
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.remote.names import split_doc_id
from linkly_ls.core.tools.common import get_document, iso_utc, add_on_disk, on_disk_note
from linkly_ls.core.tools.remote_documents import RemoteResult, ask_remote, rewrite_document
from linkly_ls.core.errors import ArgumentError, LinklyError, ToolError
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.tools.render import path_text


@dataclass
class DocumentOutline:
    record: DocumentRecord
    nodes: list[dict[str, Any]]
    links: int = 0
    backlinks: int = 0

    def to_json(self) -> dict[str, Any]:
        return add_on_disk({
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
        }, self.record)


@dataclass
class OutlineResult:
    documents: list[DocumentOutline]
    #: the ids asked for that name no indexed document (removed since a search gave them), each with why
    missing: list[dict[str, str]] = field(default_factory=list)
    #: the levels shown when deeper ones were collapsed to fit a size limit (`foldings`), else None
    levels_shown: int | None = None
    units = "documents"

    def foldings(self) -> Iterator[OutlineResult]:
        """The outline with its deepest open level collapsed, then the next, down to the top level alone
        (each collapsed node says how many nodes it hides)."""
        deepest = max((_depth(document.nodes) for document in self.documents), default=0)
        for levels in range(deepest - 1, 0, -1):
            yield OutlineResult(
                documents=[replace(document, nodes=_folded(document.nodes, levels)) for document in self.documents],
                levels_shown=levels,
            )

    def folding_note(self, limit: int, limit_name: str) -> str:
        return (
            f"the whole outline is over this server's limit of {limit:,} characters ({limit_name}): it shows "
            f"{self.levels_shown} level(s), the nodes below are collapsed (their count shown); open a node "
            'with `expand` (e.g. ["2"]) to see its sections'
        )

    def unit_count(self) -> int:
        return len(self.documents)

    def first_units(self, count: int) -> OutlineResult:
        return OutlineResult(documents=self.documents[:count], missing=self.missing)

    def continuation(self, count: int) -> str:
        left_out = ", ".join(f'"{document.record.doc_id}"' for document in self.documents[count:])
        return f"ask for the others in another call: doc_ids [{left_out}]"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"documents": [document.to_json() for document in self.documents]}
        if self.missing:
            data["missing"] = self.missing
        return data

    def to_markdown(self) -> str:
        return outline_markdown(self.to_json())


def outline_markdown(data: dict[str, Any]) -> str:
    """The markdown of an `outline` answer, from its JSON form (a remote's answer renders the same way)."""
    out: list[str] = []
    for document in data["documents"]:
        out.append(f"## {document['title']}")
        out.append(
            f"doc_id `{document['doc_id']}` · {document['doc_type']} · {document['total_lines']} lines · "
            f"{document['word_count']} words · {_link_counts(document)}{path_text(document['path'])}"
        )
        if not document["nodes"]:
            out.append("_No outline (has_outline: false): use `grep` to find passages or `read` it page by page._")
        _markdown_nodes(document["nodes"], 0, out)
        out.extend(on_disk_note(document))
        out.append("")
    out.extend(f"_Not outlined: {entry['error']}._" for entry in data.get("missing", []))
    return "\n".join(out).rstrip()


def _link_counts(document: dict[str, Any]) -> str:
    """"N link(s), M backlink(s) · " where the answer has the counts (a remote of an older version may not)."""
    if "links" not in document:
        return ""
    return f"{document['links']} link(s), {document.get('backlinks', 0)} backlink(s) · "


def _markdown_nodes(nodes: list[dict[str, Any]], depth: int, out: list[str]) -> None:
    for node in nodes:
        folded = f" (+{node['collapsed']} collapsed)" if node.get("collapsed") else ""
        out.append(
            f"{'  ' * depth}- [{node['id']}] {node['title']} · lines {node['start_line']}-{node['end_line']}{folded}"
        )
        _markdown_nodes(node["children"], depth + 1, out)


def _depth(nodes: list[dict[str, Any]]) -> int:
    return max((1 + _depth(node["children"]) for node in nodes), default=0)


def _folded(nodes: list[dict[str, Any]], levels: int) -> list[dict[str, Any]]:
    """Rendered nodes with only `levels` levels open."""
    folded: list[dict[str, Any]] = []
    for node in nodes:
        data = dict(node)
        if levels <= 1 and node["children"]:
            data["children"] = []
            data["collapsed"] = node.get("collapsed", 0) + _count_rendered(node["children"])
        else:
            data["children"] = _folded(node["children"], levels - 1)
        folded.append(data)
    return folded


def _count_rendered(nodes: list[dict[str, Any]]) -> int:
    return sum(1 + node.get("collapsed", 0) + _count_rendered(node["children"]) for node in nodes)


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


def outline(engine: Engine, **arguments: Any) -> OutlineResult | RemoteResult:
    params = validate("outline", arguments)
    expand = set(params["expand"]) if params["expand"] else None
    doc_ids = list(dict.fromkeys(params["doc_ids"]))
    if any(split_doc_id(doc_id)[0] for doc_id in doc_ids):
        return _outline_anywhere(engine, doc_ids, expand)
    documents: list[DocumentOutline] = []
    resolver = LinkResolver(engine.catalog)
    missing: list[dict[str, str]] = []
    for index, doc_id in enumerate(doc_ids):
        try:
            record = get_document(engine.catalog, doc_id, f"doc_ids[{index}]")
        except ArgumentError:
            raise
        except ToolError as error:
            missing.append({"doc_id": doc_id, "error": str(error)})
            continue
        documents.append(
            DocumentOutline(
                record=record,
                nodes=_render_nodes(record.outline, expand),
                links=engine.catalog.link_count(record.doc_id),
                backlinks=len(resolver.backlinks(record, from_itself=False)),
            )
        )
    if not documents:  # none of them: the call itself failed
        raise ToolError(missing[0]["error"] if len(missing) == 1 else "; ".join(entry["error"] for entry in missing))
    if expand is not None:
        _check_expand(expand, [document.record.outline for document in documents])
    return OutlineResult(documents=documents, missing=missing)


def _check_expand(expand: set[str], trees: list[list[OutlineNode]]) -> None:
    unknown = sorted(expand - set().union(*(_all_ids(tree) for tree in trees)))
    if not unknown:
        return
    if not any(trees):
        raise ArgumentError(
            "`expand` names nodes, but the document has no outline (has_outline: false): leave `expand` out, "
            "and `grep` or `read` it instead"
        )
    raise ArgumentError(
        f"`expand` names node(s) {', '.join(json.dumps(node) for node in unknown)} that are not in the outline; "
        "use ids shown by outline, like \"2\" or \"3.1\""
    )


def _outline_anywhere(engine: Engine, doc_ids: list[str], expand: set[str] | None) -> RemoteResult:
    """Outlines of local and remote documents, in the order asked; each remote sends its whole trees
    once and `expand` folds them here, so it means the same whichever server holds a document."""
    wanted: dict[str, list[str]] = {}
    for doc_id in doc_ids:
        remote, bare = split_doc_id(doc_id)
        if remote is not None:
            wanted.setdefault(remote, []).append(str(bare))
    fetched: dict[str, dict[str, Any]] = {}
    failed: dict[str, str] = {}  # remote -> why it gave no outline
    for remote, bare_ids in wanted.items():
        try:
            for document in ask_remote(engine, remote, "outline", {"doc_ids": bare_ids}).get("documents", []):
                fetched[rewrite_document(remote, document)["doc_id"]] = document
        except LinklyError as error:  # that remote's documents are missing; the others' outlines stand
            failed[remote] = str(error)
    documents: list[dict[str, Any]] = []
    trees: list[list[OutlineNode]] = []
    missing: list[dict[str, str]] = []
    for index, doc_id in enumerate(doc_ids):
        remote, bare = split_doc_id(doc_id)
        named = f"{remote}:{bare}" if remote else doc_id
        try:
            if named in fetched:
                data = dict(fetched[named])
                tree = [OutlineNode.from_dict(node) for node in data.get("nodes", [])]
            elif remote is not None:
                raise ToolError(failed.get(remote) or f"`doc_ids[{index}]` {named!r} is not an indexed document of the remote {remote!r}")
            else:
                record = get_document(engine.catalog, doc_id, f"doc_ids[{index}]")
                data, tree = DocumentOutline(record=record, nodes=[]).to_json(), record.outline
        except ArgumentError:
            raise
        except ToolError as error:
            missing.append({"doc_id": named, "error": str(error)})
            continue
        except (KeyError, TypeError, ValueError, RecursionError):
            missing.append({"doc_id": named, "error": f"the remote {remote!r} answered an outline that cannot be read"})
            continue
        data["nodes"] = _render_nodes(tree, expand)
        documents.append(data)
        trees.append(tree)
    if not documents:
        raise ToolError("; ".join(dict.fromkeys(entry["error"] for entry in missing)))
    if expand is not None:
        _check_expand(expand, trees)
    return RemoteResult({"documents": documents, **({"missing": missing} if missing else {})}, outline_markdown)
