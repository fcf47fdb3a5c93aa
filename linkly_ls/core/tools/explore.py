"""`explore`: a bird's-eye view of a collection: types, folders, and the words it is about."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.skips import describe, reasons_in_order
from linkly_ls.core.tools.common import FAILURES_SHOWN, counted, empty_index_notice, resolve_library, setup_notes
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.tools.render import path_text

MAX_TREE_DEPTH = 3
MAX_CHILDREN = 12
TOP_KEYWORDS = 30
SOURCES_PER_KEYWORD = 5
TOP_SKIPPED_FOLDERS = 10


@dataclass
class DirectoryNode:
    path: str
    file_count: int = 0
    word_counts: list[int] = field(default_factory=list)
    children: dict[str, DirectoryNode] = field(default_factory=dict)

    def to_json(self, depth: int = 0) -> dict[str, Any]:
        children = sorted(self.children.values(), key=lambda node: (-node.file_count, node.path))
        data: dict[str, Any] = {
            "path": self.path,
            "file_count": self.file_count,
            "median_word_count": int(statistics.median(self.word_counts)) if self.word_counts else 0,
            "children": [child.to_json(depth + 1) for child in children[:MAX_CHILDREN]]
            if depth < MAX_TREE_DEPTH
            else [],
        }
        hidden = len(children) - len(data["children"])
        if hidden > 0:
            data["more_directories"] = hidden
        return data


@dataclass
class ExploreResult:
    scope: str
    document_count: int
    doc_types: list[tuple[str, int]]
    directories: list[dict[str, Any]]
    keywords: list[dict[str, Any]]
    #: the folders whose files the walks left out most: {path, skipped_count, reasons}
    skipped_folders: list[dict[str, Any]] = field(default_factory=list)
    skipped_count: int = 0
    #: files that could not be indexed, and the first FAILURES_SHOWN of them: {path, message}
    failed_count: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    #: without documents: why (as `search` says it), and what to do
    notice: str | None = None
    guidance: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = {
            "scope": self.scope,
            "document_count": self.document_count,
            "doc_types": [{"type": kind, "count": count} for kind, count in self.doc_types],
            "directories": self.directories,
            "keywords": self.keywords,
            "skipped_count": self.skipped_count,
            "skipped_folders": self.skipped_folders,
            "failed_count": self.failed_count,
            "failed": self.failed,
        }
        if self.notice:
            data["notice"], data["guidance"] = self.notice, self.guidance
        return data

    def to_markdown(self) -> str:
        out = [f"## Explore: {self.scope} ({counted(self.document_count, 'document')})", ""]
        if self.notice:
            out.append(f"**{self.notice}** {' '.join(self.guidance)}")
            if not self.skipped_folders and not self.failed:
                return "\n".join(out)
            out.append("")
        out.append("### Types")
        out.extend(f"- {kind}: {count}" for kind, count in self.doc_types)
        out += ["", "### Folders (files · median words)"]

        def tree(nodes: list[dict[str, Any]], depth: int) -> None:
            for node in nodes:
                more = f" (+{node['more_directories']} more folders)" if node.get("more_directories") else ""
                out.append(
                    f"{'  ' * depth}- {path_text(node['path'])} · {counted(node['file_count'], 'file')} · "
                    f"median {counted(node['median_word_count'], 'word')}{more}"
                )
                tree(node["children"], depth + 1)

        tree(self.directories, 0)
        out += ["", "### Top keywords (documents)"]
        for keyword in self.keywords:
            titles = "; ".join(source["title"] for source in keyword["documents"])
            out.append(f"- **{keyword['keyword']}** ({keyword['count']}): {titles}")
        if self.skipped_folders:
            out += ["", f"### Skipped ({counted(self.skipped_count, 'file')} not indexed; top folders)"]
            for folder in self.skipped_folders:
                out.append(f"- {path_text(folder['path'])} · {counted(folder['skipped_count'], 'file')} · {describe(folder['reasons'])}")
        if self.failed:
            out += ["", f"### Failed ({counted(self.failed_count, 'file')} could not be indexed)"]
            out.extend(f"- {path_text(failure['path'])}: {failure['message']}" for failure in self.failed)
            if self.failed_count > len(self.failed):
                out.append(f"- ... and {self.failed_count - len(self.failed)} more (`linkly status` lists them)")
        return "\n".join(out)


def explore(engine: Engine, **arguments: Any) -> ExploreResult:
    params = validate("explore", arguments)
    library = resolve_library(engine.catalog, params["library"])
    libraries = [library] if library else engine.libraries()
    records = engine.catalog.all_documents(library.name if library else None)
    types = Counter(record.doc_type for record in records)
    roots: list[DirectoryNode] = []
    for lib in libraries:
        for root in lib.paths:
            roots.append(DirectoryNode(path=root))
    for record in records:
        root = _root_for(record.path, roots)
        if root is None:
            continue
        root.file_count += 1
        root.word_counts.append(record.word_count)
        node = root
        relative = PurePosixPath(record.path).relative_to(root.path).parent.parts
        for part in relative:
            child_path = f"{node.path.rstrip('/')}/{part}"
            node = node.children.setdefault(part, DirectoryNode(path=child_path))
            node.file_count += 1
            node.word_counts.append(record.word_count)
    keyword_docs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    shown: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()  # (keyword, content hash): a copy of a file counts once, as in search
    for record in records:
        for keyword in record.keywords:
            key = keyword.lower()
            shown.setdefault(key, keyword)
            if (key, record.content_hash) not in seen:
                seen.add((key, record.content_hash))
                keyword_docs[key].append((record.doc_id, record.title))
    ranked = sorted(keyword_docs.items(), key=lambda item: (-len(item[1]), item[0]))[:TOP_KEYWORDS]
    skipped_count, skipped_folders = _skipped_folders(engine, library.name if library else None)
    failures = [error for lib in libraries for error in engine.catalog.errors(lib.name)]
    names = [lib.name for lib in libraries]
    notice, guidance = empty_index_notice(names, "explore", setup_notes(engine)) if not records else (None, [])
    return ExploreResult(
        scope=f"library {library.name}" if library else "all libraries",
        document_count=len(records),
        doc_types=sorted(types.items(), key=lambda item: (-item[1], item[0])),
        directories=[root.to_json() for root in roots if root.file_count],
        keywords=[
            {
                "keyword": shown[key],
                "count": len(sources),
                "documents": [{"doc_id": d, "title": t} for d, t in sources[:SOURCES_PER_KEYWORD]],
            }
            for key, sources in ranked
        ],
        skipped_folders=skipped_folders,
        skipped_count=skipped_count,
        failed_count=len(failures),
        failed=[{"path": error.path, "message": error.message} for error in failures[:FAILURES_SHOWN]],
        notice=notice,
        guidance=guidance,
    )


def _skipped_folders(engine: Engine, library: str | None) -> tuple[int, list[dict[str, Any]]]:
    """(files left out in all, the folders that left out most with their reasons)."""
    by_folder: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for row in engine.catalog.skipped(library):
        by_folder[row.folder].append((row.reason, row.count))
    folders = sorted(by_folder.items(), key=lambda item: (-sum(count for _, count in item[1]), item[0]))
    return sum(count for rows in by_folder.values() for _, count in rows), [
        {"path": folder, "skipped_count": sum(count for _, count in rows), "reasons": reasons_in_order(rows)}
        for folder, rows in folders[:TOP_SKIPPED_FOLDERS]
    ]


def _root_for(path: str, roots: list[DirectoryNode]) -> DirectoryNode | None:
    best = None
    for root in roots:
        if path == root.path or path.startswith(root.path.rstrip("/") + "/"):
            if best is None or len(root.path) > len(best.path):
                best = root
    return best
