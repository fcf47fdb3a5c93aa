"""`workspace/executeCommand`: the registry's tools, and re-indexing, as editor commands.

One command per tool with an `lsp_command` in the tool registry
(core/tools/registry.py); `linkly.reindex` is written here, as it also
re-indexes files by path, and so is `linkly.removeLibrary`, which agents
are not offered (MCP): forgetting a library is the user's decision. Each command takes one argument, a dict of the
tool's parameters (the same names and limits as the CLI and the MCP server),
and returns the tool's JSON (`to_payload`: the result plus `_meta.now`).
Errors are mapped by `lsp.errors.json_rpc_error`: a bad argument is an
InvalidParams error, an unanswerable call a RequestFailed error; both carry
the tool's own message and no traceback.

Annotations here must resolve at run time: pygls reads command signatures
with `typing.get_type_hints`.
"""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkly_ls.core.tools.common import utc_now
from linkly_ls.core.tools.registry import REGISTRY, Tool, ToolRegistry
from linkly_ls.core.tools.render import to_payload
from linkly_ls.lsp.errors import invalid_params, request_failed, tool_errors
from linkly_ls.lsp.server import LinklyLanguageServer
from linkly_ls.lsp.settings import plain

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import IndexReport

REINDEX = "linkly.reindex"
REMOVE_LIBRARY = "linkly.removeLibrary"


def single_argument(command: str, arguments: tuple[Any, ...]) -> dict[str, Any]:
    """The one dict a command takes (none means no parameters)."""
    if not arguments or arguments == (None,):
        return {}
    value = plain(arguments[0])
    if len(arguments) != 1 or not isinstance(value, dict):
        raise invalid_params(f"{command} takes one argument: an object with the tool's parameters")
    return value


def report_json(report: IndexReport) -> dict[str, Any]:
    data = asdict(report)
    data["errors"] = [{"path": path, "message": message} for path, message in report.errors]
    data["seconds"] = round(report.seconds, 3)
    return data


def _tool_command(command: str, tool: Tool):
    async def run(ls: LinklyLanguageServer, *arguments: Any) -> dict[str, Any]:
        engine = await ls.ready_engine()
        parameters = single_argument(command, arguments)

        def call() -> dict[str, Any]:
            with tool_errors():
                return to_payload(tool.call(engine, parameters))

        return await asyncio.to_thread(call)

    run.__name__ = f"run_{tool.name}"
    return run


async def reindex(ls: LinklyLanguageServer, *arguments: Any) -> dict[str, Any]:
    """`{library?, libraries?, paths?}`: re-index files or folders by path, or whole libraries (default all)."""
    engine = await ls.ready_engine()
    parameters = single_argument(REINDEX, arguments)
    unknown = set(parameters) - {"library", "libraries", "paths"}
    if unknown:
        raise invalid_params(
            f"unknown argument `{sorted(unknown)[0]}` for {REINDEX}; accepted: library, libraries, paths"
        )
    if ls.indexing is None:
        raise request_failed("indexing is not available")
    paths = parameters.get("paths")
    if paths is not None:
        if not isinstance(paths, list) or not paths or not all(isinstance(path, str) and path for path in paths):
            raise invalid_params("`paths` must be a non-empty list of file or folder paths")
        if any("\0" in path for path in paths):
            raise invalid_params("`paths` must be file or folder paths; a NUL character is in none")
        with tool_errors():
            reports = await ls.indexing.apply({Path(path).expanduser().resolve() for path in paths})
    else:
        names = parameters.get("libraries") or ([parameters["library"]] if parameters.get("library") else None)
        if names is not None:
            if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
                raise invalid_params("`library` must be a name and `libraries` a list of names")
            known = {library.name for library in engine.libraries()}
            missing = [name for name in names if name not in known]
            if missing:
                raise invalid_params(
                    f"`library` {missing[0]!r} does not exist; available: {', '.join(sorted(known)) or '(none)'}"
                )
        with tool_errors():
            reports = await ls.indexing.index(names, title="Re-indexing documents")
    return {"reports": [report_json(report) for report in reports], "_meta": {"now": utc_now()}}


async def remove_library(ls: LinklyLanguageServer, *arguments: Any) -> dict[str, Any]:
    """`{name}`: forget a library (its folders are not touched); the config file's are refused."""
    await ls.ready_engine()
    parameters = single_argument(REMOVE_LIBRARY, arguments)
    if set(parameters) != {"name"} or not isinstance(parameters["name"], str):
        raise invalid_params(f"{REMOVE_LIBRARY} takes {{name}}: the name of a library")
    if ls.indexing is None:
        raise request_failed("indexing is not available")
    with tool_errors():
        removed = await ls.indexing.remove_library(parameters["name"])
    return to_payload(removed)


def register(server: LinklyLanguageServer, registry: ToolRegistry = REGISTRY) -> None:
    for tool in registry.lsp_tools():
        assert tool.lsp_command is not None
        server.command(tool.lsp_command)(_tool_command(tool.lsp_command, tool))
    server.command(REINDEX)(reindex)
    server.command(REMOVE_LIBRARY)(remove_library)
