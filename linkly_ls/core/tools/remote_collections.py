"""`list_libraries`, `explore` and `find_paths` across servers, and any tool run on one remote.

`list_libraries` lists the local libraries and, with `remote`, every
remote's as `cloud:///<remote>/<library>` (a remote that does not answer is
one entry with `reachable: false`). `explore` and `find_paths` take the same
library values as `search`: a `cloud:` value asks the remotes it names and
merges their answers. Every answer that several servers share carries
`remotes: [{name, ok, error}]`; a call that no server could answer is an error.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.tools.common import counted
from linkly_ls.core.errors import ArgumentError, LinklyError, ToolError
from linkly_ls.core.remote import RemoteAnswer, RemoteStatus, not_sent
from linkly_ls.core.remote.names import is_cloud, parse_scope, remote_doc_id, remote_library, remote_path, split_doc_id
from linkly_ls.core.tools.explore import SOURCES_PER_KEYWORD, TOP_KEYWORDS, ExploreResult, explore
from linkly_ls.core.tools.grep import grep
from linkly_ls.core.tools.outline import outline
from linkly_ls.core.tools.read import read
from linkly_ls.core.tools.remote_search import search_anywhere
from linkly_ls.core.tools.find_paths import FindPathsResult, FolderCandidate, find_paths
from linkly_ls.core.tools.libraries import LibrariesResult, list_libraries
from linkly_ls.core.tools.validation import validate


@dataclass
class AllLibraries:
    local: LibrariesResult
    remote_entries: list[dict[str, Any]] = field(default_factory=list)
    remotes: list[RemoteStatus] = field(default_factory=list)
    #: remotes configured but not asked (no `remote`): named so a caller knows they exist
    not_asked: list[str] = field(default_factory=list)
    include_local: bool = True

    def to_json(self) -> dict[str, Any]:
        data = self.local.to_json() if self.include_local else {"libraries": []}
        data["libraries"] = data["libraries"] + self.remote_entries
        if self.remotes:
            data["remotes"] = [status.to_json() for status in self.remotes]
        if self.not_asked:
            data["configured_remotes"] = self.not_asked
        return data

    def to_markdown(self) -> str:
        out = [self.local.to_markdown()] if self.include_local else []
        if self.remote_entries:
            out += ["", "## Remote libraries", ""]
            for entry in self.remote_entries:
                if not entry["reachable"]:
                    out.append(f"- **{entry['name']}**: not reachable: {entry['error']}")
                    continue
                out.append(f"- **{entry['name']}**: {counted(entry['document_count'], 'document')}")
                if entry["description"]:
                    out.append(f"  {entry['description']}")
        if self.not_asked:
            out += ["", f"Remote machines configured: {', '.join(self.not_asked)}; `remote: true` "
                    "(`linkly list-libraries --remote`) lists their libraries."]
        return "\n".join(out).strip()


def list_libraries_anywhere(engine: Engine, **arguments: Any) -> LibrariesResult | AllLibraries:
    params = validate("list_libraries", arguments)
    local = list_libraries(engine)
    if not params["remote"]:
        try:
            names = engine.remotes.names()
        except LinklyError:  # a [[remote]] table in error is told when a call reaches remotes, not here
            return local
        return AllLibraries(local, not_asked=names) if names else local
    return remote_libraries(engine, engine.remotes.names(), local)


def remote_libraries(engine: Engine, names: list[str], local: LibrariesResult | None = None) -> AllLibraries:
    _, answers = engine.remotes.ask_all({name: ("list_libraries", {}) for name in names})
    entries: list[dict[str, Any]] = []
    for answer in answers:
        remote = engine.remotes.client(answer.status.name).remote
        libraries = _libraries_of(answer)
        if libraries is None:
            entries.append({
                "name": f"cloud:///{remote.name}", "description": remote.description, "remote": remote.name,
                "document_count": None, "reachable": False, "error": answer.status.error,
            })
            continue
        for library in libraries:
            entries.append({
                **library,
                "name": remote_library(remote.name, str(library.get("name", ""))),
                "paths": [remote_path(remote.name, str(path)) for path in library.get("paths", [])],
                "remote": remote.name,
                "remote_description": remote.description,
                "reachable": True,
            })
    if local is None and not any(entry["reachable"] for entry in entries):
        raise ToolError("no remote answered: " + "; ".join(f"{a.status.name}: {a.status.error}" for a in answers))
    return AllLibraries(local or LibrariesResult([]), entries, [a.status for a in answers], include_local=local is not None)


def _libraries_of(answer: RemoteAnswer) -> list[dict[str, Any]] | None:
    libraries = answer.payload.get("libraries") if answer.payload else None
    if answer.payload is not None and not (isinstance(libraries, list) and all(isinstance(x, dict) for x in libraries)):
        answer.status.ok, answer.status.error = False, "answered a library list that cannot be read"
        return None
    return libraries


class _RemotesReported:
    """A local result merged with remotes' answers: each remote's status in JSON, failures in markdown."""

    remotes: list[RemoteStatus]

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "remotes": [status.to_json() for status in self.remotes]}  # type: ignore[misc]

    def to_markdown(self) -> str:
        failed = [f"- remote **{s.name}** did not answer: {s.error}" for s in self.remotes if not s.ok]
        return "\n".join([super().to_markdown(), *([""] + failed if failed else [])])  # type: ignore[misc]


@dataclass
class MergedExplore(_RemotesReported, ExploreResult):
    remotes: list[RemoteStatus] = field(default_factory=list)


def explore_anywhere(engine: Engine, **arguments: Any) -> ExploreResult:
    params = validate("explore", arguments)
    if not is_cloud(params["library"]):
        return explore(engine, **arguments)
    scope = parse_scope(params["library"], engine.remotes.names())
    calls = {name: ("explore", {"library": library} if library else {}) for name, library in scope.remotes.items()}
    _, answers = engine.remotes.ask_all(calls)
    types: Counter[str] = Counter()
    directories: list[dict[str, Any]] = []
    keywords: dict[str, dict[str, Any]] = {}
    count = 0
    for answer in _answered(answers, "explore"):
        remote, payload = answer.status.name, answer.payload or {}
        count += int(payload.get("document_count", 0))
        types.update({str(entry["type"]): int(entry["count"]) for entry in payload.get("doc_types", [])})
        directories.extend(_prefixed_tree(remote, node) for node in payload.get("directories", []))
        for keyword in payload.get("keywords", []):
            merged = keywords.setdefault(str(keyword["keyword"]).lower(), {"keyword": keyword["keyword"], "count": 0, "documents": []})
            merged["count"] += int(keyword["count"])
            merged["documents"] += [
                {"doc_id": remote_doc_id(remote, str(d["doc_id"])), "title": d["title"]} for d in keyword.get("documents", [])
            ]
    ranked = sorted(keywords.values(), key=lambda k: (-k["count"], k["keyword"].lower()))[:TOP_KEYWORDS]
    for keyword in ranked:
        keyword["documents"] = keyword["documents"][:SOURCES_PER_KEYWORD]
    return MergedExplore(
        scope=f"remote library {params['library']}",
        document_count=count,
        doc_types=sorted(types.items(), key=lambda item: (-item[1], item[0])),
        directories=directories,
        keywords=ranked,
        remotes=[answer.status for answer in answers],
    )


def _prefixed_tree(remote: str, node: dict[str, Any]) -> dict[str, Any]:
    return {**node, "path": remote_path(remote, str(node["path"])), "children": [_prefixed_tree(remote, c) for c in node.get("children", [])]}


@dataclass
class MergedFindPaths(_RemotesReported, FindPathsResult):
    remotes: list[RemoteStatus] = field(default_factory=list)


def find_paths_anywhere(engine: Engine, **arguments: Any) -> FindPathsResult:
    params = validate("find_paths", arguments)
    if not is_cloud(params["library"]):
        return find_paths(engine, **arguments)
    scope = parse_scope(params["library"], engine.remotes.names())
    sent = {"patterns": params["patterns"], "limit": params["limit"]}
    calls = {name: ("find_paths", {**sent, "library": library} if library else sent) for name, library in scope.remotes.items()}
    _, answers = engine.remotes.ask_all(calls)
    folders: list[FolderCandidate] = []
    total, truncated = 0, False
    for answer in _answered(answers, "find_paths"):
        payload = answer.payload or {}
        total += int(payload.get("total_files", 0))
        truncated = truncated or bool(payload.get("truncated"))
        folders += [
            FolderCandidate(remote_path(answer.status.name, str(d["path"])), int(d["file_count"]))
            for d in payload.get("directories", [])
        ]
    folders.sort(key=lambda folder: (-folder.file_count, folder.path))
    limit = params["limit"]
    return MergedFindPaths(
        patterns=params["patterns"], total_files=total, truncated=truncated or len(folders) > limit,
        directories=folders[:limit], remotes=[answer.status for answer in answers],
    )


def _answered(answers: list[RemoteAnswer], tool: str) -> list[RemoteAnswer]:
    """The answers that came back; none at all is an error (there is no local part to show)."""
    answered = [answer for answer in answers if answer.payload is not None]
    if not answered:
        reasons = "; ".join(f"{a.status.name}: {a.status.error}" for a in answers)
        if answers and all(answer.status.refused for answer in answers):  # an unknown library there: a wrong argument
            raise ArgumentError(f"`{tool}` was refused: {reasons}")
        raise ToolError(f"no remote answered {tool}: {reasons}")
    return answered


def call_on_remote(engine: Engine, remote: str, tool: str, arguments: dict[str, Any]) -> Any:
    """`linkly --remote NAME <tool> ...`: the tool's call, aimed at that remote (its ids and libraries)."""
    engine.remotes.client(remote)  # an unknown name is refused before anything else
    arguments = dict(arguments)
    if tool == "list_libraries":
        validate("list_libraries", arguments)
        return remote_libraries(engine, [remote])
    if tool in ("search", "explore", "find_paths"):
        library = arguments.get("library")
        if is_cloud(library) or (isinstance(library, str) and library.startswith("local:")):
            raise ArgumentError("with --remote, `library` is a library name of that remote")
        arguments["library"] = f"cloud:///{remote}/{library}" if library else f"cloud:///{remote}"
        arguments.pop("remote", None)
    elif tool in ("read", "grep"):
        arguments["doc_id"] = _on(remote, arguments.get("doc_id"))
    elif tool == "outline":
        ids = arguments.get("doc_ids")
        arguments["doc_ids"] = [_on(remote, doc_id) for doc_id in ids] if isinstance(ids, list) else ids
    else:
        raise not_sent(tool)
    functions = {
        "search": search_anywhere, "explore": explore_anywhere, "find_paths": find_paths_anywhere,
        "read": read, "grep": grep, "outline": outline,
    }
    return functions[tool](engine, **arguments)


def _on(remote: str, doc_id: Any) -> Any:
    owner, _ = split_doc_id(doc_id)
    if owner is None and isinstance(doc_id, str):
        return f"{remote}:{doc_id}"
    if owner is not None and owner != remote:
        raise ArgumentError(f"`doc_id` {doc_id!r} belongs to remote {owner!r}, not {remote!r}")
    return doc_id
