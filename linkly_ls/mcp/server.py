"""The MCP server: the registry's tools on the SDK's low-level Server.

The tool list (names, titles, descriptions, schemas, annotations) and the
dispatch are generated from the tool registry (core/tools/registry.py). The
low-level Server is used because the tools' input schemas are the core's JSON
Schemas, published as they are. A backend answers `tools/list` and
`tools/call`: `LocalBackend` runs the core tools on an Engine; the stdio proxy
forwards to a running HTTP server instead. Every error reaches the client as a
tool error made by `error_result`.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

import anyio.to_thread
import mcp_types as types
from mcp.server.lowlevel import Server

from linkly_ls import __version__
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import LinklyError
from linkly_ls.core.indexing.writer import IndexWriter
from linkly_ls.core.tools.common import utc_now
from linkly_ls.core.tools.descriptions import SERVER_INSTRUCTIONS
from linkly_ls.core.tools.fitting import Foldable, Shortenable, fit, shortened_note
from linkly_ls.core.tools.registry import REGISTRY, Tool, ToolRegistry
from linkly_ls.core.tools.render import render, render_error
from linkly_ls.mcp.settings import McpSettings

log = logging.getLogger("linkly_ls.mcp")

SERVER_NAME = "linkly"
OUTPUT_FORMATS = ("markdown", "json")


class ToolBackend(Protocol):
    async def list_tools(self) -> list[types.Tool]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult: ...


def tool_definition(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        title=tool.title,
        description=tool.description,
        input_schema=tool.input_schema,
        output_schema=tool.output_schema,
        annotations=types.ToolAnnotations(
            title=tool.title,
            read_only_hint=not tool.writes,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )


def tool_definitions(settings: McpSettings, registry: ToolRegistry = REGISTRY) -> list[types.Tool]:
    """The tools these settings expose, in the registry's order."""
    return [tool_definition(registry.get(name)) for name in settings.exposed_tools(registry)]


def tool_error(message: str, output_format: str = "markdown") -> types.CallToolResult:
    """A failed call: the cause only, no metadata (the contract's errors carry no `now`)."""
    text = render_error(message, output_format if output_format in OUTPUT_FORMATS else "markdown")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def error_result(error: Exception, tool: str, output_format: str = "markdown") -> types.CallToolResult:
    """Any error of a call, as the tool error the client sees.

    A LinklyError's message is the answer, whatever its kind. Anything else is a
    bug: the client gets one line naming it, the server's log the traceback.
    """
    if isinstance(error, LinklyError):
        return tool_error(str(error), output_format)
    log.error("tool %s failed", tool, exc_info=error)
    return tool_error(f"internal error: {type(error).__name__}: {error}", output_format)


class _WithNote:
    """A result whose markdown ends with a note (e.g. that indexing is still running)."""

    def __init__(self, result: Any, note: str) -> None:
        self.result = result
        self.note = note

    def to_json(self) -> dict[str, Any]:
        return self.result.to_json()

    def to_markdown(self) -> str:
        return f"{self.result.to_markdown()}\n\n> Note: {self.note}"


def success_result(
    result: Any,
    output_format: str,
    max_chars: int,
    note: str | None = None,
    extra_meta: dict[str, Any] | None = None,
) -> types.CallToolResult:
    """Text (markdown or JSON) plus structured content, both with `_meta.now`, within `max_chars`: a longer
    answer of whole units (lines, matches, documents) keeps as many as fit (`core/tools/fitting.py`),
    any other is cut."""
    now = utc_now()
    text, payload = _rendered(result, output_format, now, note, extra_meta)
    structured: dict[str, Any] = payload
    if len(text) > max_chars:
        fitted = _fitted(result, output_format, max_chars, now, note, extra_meta)
        keep = _paging_fields(result.first_units(1).to_json()) if isinstance(result, Shortenable) else {}
        text, structured = fitted or _truncate(text, output_format, max_chars, now, keep)
    else:
        structured = _structured_within(result, payload, max_chars, now, extra_meta)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        meta={"now": now},
    )


def _structured_within(
    result: Any, payload: dict[str, Any], max_chars: int, now: str, extra_meta: dict[str, Any] | None
) -> dict[str, Any]:
    """The structured copy of an answer whose text fits while its JSON does not (each of grep's matches
    carries its context lines there): the whole units that fit, with their `next_offset`, else the short
    fields (ids, counts), so a client reading only the structured content can still go on."""
    size = len(json.dumps(payload, ensure_ascii=False))
    if size <= max_chars:
        return payload
    whole = (
        f"the structured copy of this answer has {size:,} characters, more than this server's limit of {max_chars:,} "
        "(max_response_chars); the text content holds the whole answer"
    )
    if isinstance(result, Shortenable) and result.unit_count() >= 2:
        allowance = len(whole) + len(shortened_note(result, result.unit_count() - 1, max_chars, "max_response_chars")) + 60
        fitted = fit(result, lambda part: len(json.dumps(_payload(part, now, extra_meta), ensure_ascii=False)) + allowance <= max_chars)
        if fitted is not None:
            part, shown = fitted
            told = f"{shortened_note(result, shown, max_chars, 'max_response_chars')}; {whole}"
            return {"truncated": True, "note": told, **_payload(part, now, extra_meta)}
    return {**_paging_fields(payload), "truncated": True, "total_chars": size, "note": whole, "_meta": payload["_meta"]}


def _payload(result: Any, now: str, extra_meta: dict[str, Any] | None) -> dict[str, Any]:
    """The structured content of an answer: its JSON form with `_meta`."""
    return {**result.to_json(), "_meta": {"now": now, **(extra_meta or {})}}


def _rendered(
    result: Any, output_format: str, now: str, note: str | None, extra_meta: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    payload = _payload(result, now, extra_meta)
    if output_format == "json":
        return json.dumps(payload, ensure_ascii=False, indent=2), payload
    return render(_WithNote(result, note) if note else result, "markdown", now), payload


def _fitted(
    result: Any, output_format: str, max_chars: int, now: str, note: str | None, extra_meta: dict[str, Any] | None
) -> tuple[str, dict[str, Any]] | None:
    """The answer shortened to the whole units that fit, or else shown whole with less detail (`Foldable`),
    saying so; None when neither fits."""
    fitted = _fitted_units(result, output_format, max_chars, now, note, extra_meta)
    if fitted is None:
        return _folded(result, output_format, max_chars, now, note, extra_meta)
    part, told = fitted
    return _with_note(part, told, output_format, now, note, extra_meta)


def _fitted_units(
    result: Any, output_format: str, max_chars: int, now: str, note: str | None, extra_meta: dict[str, Any] | None
) -> tuple[Any, str] | None:
    if not isinstance(result, Shortenable) or result.unit_count() < 2:
        return None
    allowance = len(shortened_note(result, result.unit_count() - 1, max_chars, "max_response_chars")) + 40
    fitted = fit(result, lambda part: len(_rendered(part, output_format, now, note, extra_meta)[0]) + allowance <= max_chars)
    if fitted is None:
        return None
    part, shown = fitted
    return part, shortened_note(result, shown, max_chars, "max_response_chars")


def _folded(
    result: Any, output_format: str, max_chars: int, now: str, note: str | None, extra_meta: dict[str, Any] | None
) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(result, Foldable):
        return None
    for part in result.foldings():
        told = part.folding_note(max_chars, "max_response_chars")
        text, payload = _with_note(part, told, output_format, now, note, extra_meta)
        if len(text) <= max_chars:
            return text, payload
    return None


def _with_note(
    part: Any, told: str, output_format: str, now: str, note: str | None, extra_meta: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """A shortened answer's text and structured content, each saying how it was shortened."""
    if output_format == "json":
        _, payload = _rendered(part, output_format, now, note, extra_meta)
        payload = {"truncated": True, "note": told, **payload}
        return json.dumps(payload, ensure_ascii=False, indent=2), payload
    text, payload = _rendered(part, output_format, now, f"{note} {told}" if note else told, extra_meta)
    return text, {"truncated": True, "note": told, **payload}


def _paging_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """The short top-level fields of an answer (ids, counts, `next_offset`), kept when its text must be cut."""
    return {key: value for key, value in payload.items() if len(json.dumps(value, ensure_ascii=False)) <= 300}


def _truncation_note(total: int, shown: int, max_chars: int) -> str:
    return (
        f"[truncated: this response has {total} characters, more than this server's limit of {max_chars} "
        f"(max_response_chars); {shown} are shown. Ask for less: a smaller `limit`, a later `offset`, "
        "fewer `doc_ids`, or grep with `output_mode=count` first.]"
    )


def _truncation_stub(total: int, shown: int, max_chars: int, now: str) -> dict[str, Any]:
    return {
        "truncated": True,
        "total_chars": total,
        "shown_chars": shown,
        "note": _truncation_note(total, shown, max_chars),
        "_meta": {"now": now},
    }


def _truncate(
    text: str, output_format: str, max_chars: int, now: str, keep: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """Cut `text` so the whole response text stays within `max_chars`, ending on a line when possible. In
    JSON, the fields of `keep` stay whole (the first unit's paging fields: where to go on from)."""
    total = len(text)
    envelope = {**keep, **_truncation_stub(total, total, max_chars, now)}
    if output_format == "json":
        budget = max_chars - len(json.dumps({**envelope, "partial_text": ""}, ensure_ascii=False, indent=2))
        shown = text[: max(0, budget)]
        while len(json.dumps(shown, ensure_ascii=False)) - 2 > budget:
            shown = shown[: max(0, len(shown) - (len(json.dumps(shown, ensure_ascii=False)) - 2 - budget))]
        stub = {**keep, **_truncation_stub(total, len(shown), max_chars, now)}
        return json.dumps({**stub, "partial_text": shown}, ensure_ascii=False, indent=2), stub
    footer = f"\n\n---\n[meta] now={now}"
    budget = max_chars - len(envelope["note"]) - len(footer) - 2
    cut = text.rfind("\n", 0, budget)
    shown = text[: cut if cut > budget // 2 else budget]
    stub = {**keep, **_truncation_stub(total, len(shown), max_chars, now)}
    return f"{shown}\n\n{stub['note']}{footer}", stub


class LocalBackend:
    """Runs the tools on an Engine in worker threads, so calls from many sessions overlap."""

    def __init__(
        self,
        engine: Engine,
        settings: McpSettings,
        writer: IndexWriter | None = None,
        registry: ToolRegistry = REGISTRY,
    ) -> None:
        """`writer`: this process's writer role (started by `linkly serve`/`mcp`, or the language
        server's); without one, a tool that writes takes the role just for its run."""
        self.engine = engine
        self.settings = settings
        self.writer = writer or IndexWriter(engine, watch=False)
        self.registry = registry
        self._tools = tool_definitions(settings, registry)
        self._names = {tool.name for tool in self._tools}

    async def list_tools(self) -> list[types.Tool]:
        return list(self._tools)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        output_format = arguments.get("output_format") or "markdown"
        if name not in self._names:
            return tool_error(f"unknown tool {name!r}; tools: {', '.join(sorted(self._names))}")
        if output_format not in OUTPUT_FORMATS:
            return tool_error(f"`output_format` must be one of markdown, json; got {output_format!r}")
        try:
            return await anyio.to_thread.run_sync(self._call, name, arguments, output_format)
        except Exception as error:  # never a traceback to the client
            return error_result(error, name, output_format)

    def _call(self, name: str, arguments: dict[str, Any], output_format: str) -> types.CallToolResult:
        status = self.writer.status
        tool = self.registry.get(name)
        if tool.writes:
            if tool.check is not None:
                tool.check(self.engine, arguments)
            with self.writer.exclusive():
                result = tool.call(self.engine, arguments)
        else:
            result = tool.call(self.engine, arguments)
        return success_result(
            result,
            output_format,
            self.settings.max_response_chars,
            note=None if tool.per_document else status.note(),
            extra_meta={"indexing": status.meta()} if status.meta() else None,
        )


async def answer_call_tool(backend: ToolBackend, params: types.CallToolRequestParams) -> types.CallToolResult:
    """`tools/call`, however the request arrived; never raises."""
    try:
        return await backend.call_tool(params.name, dict(params.arguments or {}))
    except Exception as error:  # a backend bug must still reach the agent as a tool error
        return error_result(error, params.name)


def build_server(backend: ToolBackend, instructions: str = SERVER_INSTRUCTIONS) -> Server[Any]:
    """An MCP server whose tools/list and tools/call go to `backend`."""

    async def on_list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await backend.list_tools())

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        return await answer_call_tool(backend, params)

    return Server(
        SERVER_NAME,
        version=__version__,
        title="Linkly local documents",
        instructions=instructions,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )

