"""`search` across servers: this machine's index and the remotes a `library` value or `remote` names.

Without `library` and `remote`, or with a local library, this is the local
`search` as is. Otherwise every server is asked at once (remotes over MCP,
within their timeouts) and the hits are merged by `relevance`, which means
the same on every server (same engine, same calibration), copies dropped by
content, cut to `limit`. Each hit says which `server` answered; remote ids,
paths and libraries are written so the other tools reach them
(`desktop:3f2a9c01b7de`, `cloud:///desktop/...`). A remote that fails is
reported in `remotes` and the others' hits still come back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError, ToolError
from linkly_ls.core.remote import RemoteAnswer, RemoteStatus
from linkly_ls.core.remote.names import (
    Scope,
    is_cloud,
    parse_scope,
    remote_doc_id,
    remote_library,
    remote_path,
)
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.provenance import Place
from linkly_ls.core.tools.search import OTHER_WORDS, WEAK_RELEVANCE, search
from linkly_ls.core.tools.search_guidance import filter_advice
from linkly_ls.core.tools.search_results import OtherFile, SearchHit, SearchResult

LOCAL_SERVER = "local"


@dataclass
class MergedSearchResult(SearchResult):
    remotes: list[RemoteStatus] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["remotes"] = [status.to_json() for status in self.remotes]
        return data

    def to_markdown(self) -> str:
        lines = [super().to_markdown()]
        failed = [status for status in self.remotes if not status.ok]
        if failed:
            lines.append("")
            lines.extend(f"- remote **{status.name}** did not answer: {status.error}" for status in failed)
        return "\n".join(lines)


def search_anywhere(engine: Engine, **arguments: Any) -> SearchResult:
    """The `search` tool, on every server the arguments name."""
    params = validate("search", arguments)
    local_arguments = {name: value for name, value in arguments.items() if name != "remote"}
    if not params["remote"] and not is_cloud(params["library"]) and not is_cloud(params["path_glob"]):
        return search(engine, **local_arguments)
    names = list(engine.remotes.names())
    scope = _narrowed(parse_scope(params["library"], names, params["remote"]), params["path_glob"], bool(params["library"]), names)
    if scope.local_only:
        return search(engine, **{**local_arguments, "library": scope.local_library})
    one_remote = not scope.local and len(scope.remotes) == 1  # its own ranking, paged as it pages it
    if params["offset"] and not one_remote:
        raise ArgumentError(
            "`offset` pages one machine's ranking; answers merged from several servers have no common one: raise "
            "`limit`, or search one remote alone (`library: cloud:///<remote>` or `cloud:///<remote>/<library>`)"
        )
    calls = {
        name: ("search", _remote_arguments(arguments, name, library)) for name, library in scope.remotes.items()
    }
    local_call = (lambda: search(engine, **{**local_arguments, "library": scope.local_library})) if scope.local else None
    local, answers = engine.remotes.ask_all(calls, local_call)
    merged = merge_search(params, local, answers)
    following = (answers[0].payload or {}).get("next_offset") if one_remote and answers[0].status.ok else None
    if isinstance(following, int) and not isinstance(following, bool) and following > params["offset"]:
        merged.next_offset = following
    return merged


def _narrowed(scope: Scope, path_glob: str | None, library_given: bool, remote_names: list[str]) -> Scope:
    """A `cloud:///<remote>/...` path_glob (from a remote's find_paths) can only match that remote's files,
    and reaches that remote by itself: without `remote` or a `library` there, it matched nothing anywhere."""
    if not is_cloud(path_glob):
        return scope
    remote = path_glob[len("cloud:") :].lstrip("/").split("/", 1)[0]
    if remote not in remote_names:
        known = f"remotes: {', '.join(remote_names)}" if remote_names else "no remote is configured"
        raise ArgumentError(f"`path_glob` {path_glob!r} names the remote {remote!r}, which is not configured; {known}")
    if library_given and remote not in scope.remotes:  # a library elsewhere: nothing can pass both
        return Scope(local=False, remotes={})
    return Scope(local=False, remotes={remote: scope.remotes.get(remote)})


def _remote_arguments(arguments: dict[str, Any], remote: str, library: str | None) -> dict[str, Any]:
    """What the remote is sent: the caller's arguments, its own library name and path glob, nothing that widens."""
    sent = {name: value for name, value in arguments.items() if value is not None and name not in ("remote", "library", "output_format")}
    if library:
        sent["library"] = library
    if is_cloud(sent.get("path_glob")):
        _, _, path = sent["path_glob"][len("cloud:") :].lstrip("/").partition("/")
        sent["path_glob"] = "/" + path  # cloud:///desktop/home/me -> /home/me, as the remote stores it
    return sent


def merge_search(params: dict[str, Any], local: SearchResult | None, answers: list[RemoteAnswer]) -> MergedSearchResult:
    hits: list[SearchHit] = []
    modes: dict[str, tuple[str, str]] = {}
    indexing = False
    if local is not None:
        for hit in local.results:
            hit.server = LOCAL_SERVER
        hits.extend(local.results)
        modes[LOCAL_SERVER] = (local.mode, local.mode_reason)
        indexing = local.indexing
    for answer in answers:
        if answer.payload is None:
            continue
        try:
            hits.extend(hit_from_remote(answer.status.name, hit) for hit in answer.payload.get("results", []))
        except (AttributeError, KeyError, TypeError, ValueError) as error:
            answer.status.ok, answer.status.error = False, f"answered a search result that cannot be read ({error})"
            hits = [hit for hit in hits if hit.server != answer.status.name]
            continue
        modes[answer.status.name] = (str(answer.payload.get("mode", "keyword")), str(answer.payload.get("mode_reason", "")))
        indexing = indexing or bool(answer.payload.get("indexing"))
    statuses = [answer.status for answer in answers]
    if not modes:
        reasons = "; ".join(f"{status.name}: {status.error}" for status in statuses)
        if statuses and all(status.refused for status in statuses):  # `library: cloud:///desk/nope`: a wrong argument
            raise ArgumentError(f"the call was refused: {reasons}")
        raise ToolError("no server answered: " + reasons)
    _local_copies_lead(hits)
    hits.sort(key=lambda hit: (-hit.relevance, hit.server != LOCAL_SERVER))
    picked = _distinct(hits, params["limit"])
    if params["time_sort"] != "default":
        picked.sort(key=lambda hit: hit.modified_at, reverse=params["time_sort"] == "newest")
    mode, reason = _merged_mode(modes)
    result = MergedSearchResult(
        query=params["query"].strip(), results=picked, mode=mode, mode_reason=reason, indexing=indexing, remotes=statuses
    )
    strong = any(hit.relevance >= WEAK_RELEVANCE.get(modes[hit.server or LOCAL_SERVER][0], 0.30) for hit in picked)
    if not strong:
        result.miss = True
        result.guidance = _guidance(params)
    for answer in answers:  # a remote whose index is being built anew answers empty: say why, as it does
        notice = (answer.payload or {}).get("notice") if answer.status.ok else None
        if isinstance(notice, str) and notice:
            result.guidance.append(f"Remote {answer.status.name}: {_clipped(notice, MAX_REMOTE_SNIPPET)}")
    failed = [status.name for status in statuses if not status.ok]
    if failed:
        result.guidance.append(
            f"Remote(s) {', '.join(failed)} did not answer (see `remotes`): their documents are missing from these "
            "results; try again later or search the others."
        )
    return result


#: a remote hit's title and snippet are cut to what a local hit shows at most (an 8 MB snippet was printed whole)
MAX_REMOTE_TITLE = 500
MAX_REMOTE_SNIPPET = 2_000
MAX_REMOTE_KEYWORDS = 20


def _clipped(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def hit_from_remote(remote: str, data: dict[str, Any]) -> SearchHit:
    """A remote's hit, with the id, path and library this machine's tools reach it by."""
    passage = data.get("passage") or {}
    return SearchHit(
        doc_id=remote_doc_id(remote, str(data["doc_id"])),
        title=_clipped(str(data["title"]), MAX_REMOTE_TITLE),
        path=remote_path(remote, str(data["path"])),
        relevance=_share(data["relevance"]),
        word_count=int(data.get("word_count", 0)),
        total_lines=int(data.get("total_lines", 0)),
        has_outline=bool(data.get("has_outline", False)),
        modified_at=str(data.get("modified_at", "")),
        keywords=[_clipped(str(word), MAX_REMOTE_TITLE) for word in list(data.get("keywords", []))[:MAX_REMOTE_KEYWORDS]],
        snippet=_clipped(str(data.get("snippet", "")), MAX_REMOTE_SNIPPET),
        doc_type=str(data.get("doc_type", "")),
        library=remote_library(remote, str(data.get("library", ""))),
        line=int(data.get("line", 1)),
        start_line=int(passage.get("start_line", 1)),
        end_line=int(passage.get("end_line", 1)),
        on_disk=data.get("on_disk") or ("changed" if data.get("stale") else None),
        text_missing_reason=data.get("text_missing_reason"),
        explain=data.get("explain"),
        content_hash=data.get("content_hash"),
        server=remote,
        place=Place(_whole_number(data.get("page")), data.get("section") if isinstance(data.get("section"), str) else None),
        also_as=[
            OtherFile(
                remote_doc_id(remote, str(other["doc_id"])), remote_path(remote, str(other["path"])),
                str(other.get("doc_type", "")), remote_library(remote, str(other.get("library", ""))),
            )
            for other in data.get("also_as") or []
            if isinstance(other, dict) and "doc_id" in other and "path" in other
        ],
    )


def _share(value: Any) -> float:
    """A remote's relevance held to 0-1: a server answering 5.0 (or NaN) must not put its hits above all."""
    number = float(value)
    return min(number, 1.0) if number >= 0 else 0.0


def _whole_number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _local_copies_lead(hits: list[SearchHit]) -> None:
    """A file this machine holds is shown from here, at the best place any server gives it: each index ranks
    it by its own statistics, so a remote's copy scored higher (1.00 there, 0.66 here) and hid the file on
    disk behind a network read, and a remote claiming its content hash pushed it out altogether."""
    best: dict[str, float] = {}
    for hit in hits:
        if hit.content_hash and hit.server != LOCAL_SERVER:
            best[hit.content_hash] = max(best.get(hit.content_hash, 0.0), hit.relevance)
    for hit in hits:
        if hit.server == LOCAL_SERVER and hit.content_hash in best:
            hit.relevance = max(hit.relevance, best[hit.content_hash])


def _distinct(hits: list[SearchHit], limit: int) -> list[SearchHit]:
    """The best `limit` hits with distinct content: a document kept on two machines shows once."""
    picked: list[SearchHit] = []
    seen: set[Any] = set()
    for hit in hits:
        key = hit.content_hash or (hit.doc_type, hit.title, hit.word_count, hit.total_lines)
        if key in seen:
            continue
        seen.add(key)
        picked.append(hit)
        if len(picked) >= limit:
            break
    return picked


def _merged_mode(modes: dict[str, tuple[str, str]]) -> tuple[str, str]:
    kinds = {mode for mode, _ in modes.values()}
    if len(kinds) == 1:
        mode = kinds.pop()
        reasons = dict.fromkeys(reason for _, reason in modes.values())
        return mode, "; ".join(reason for reason in reasons if reason)
    return "mixed", "; ".join(f"{server}: {mode} ({reason})" for server, (mode, reason) in modes.items())


def _guidance(params: dict[str, Any]) -> list[str]:
    return [OTHER_WORDS, *filter_advice(params)]
