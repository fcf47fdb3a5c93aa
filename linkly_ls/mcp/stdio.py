"""`linkly mcp`: MCP over stdio, for agents that spawn a process.

Every call goes to the live HTTP server named by the runtime file when
there is one, so the agent sees the index that server keeps current and
this process never writes it. Without a server, this process opens the
index itself and serves the tools directly; it then also indexes and
watches, but only while it holds the writer lock (see core/indexing/writer.py).
The runtime file is read on every call, so a `linkly serve` started or
stopped while the agent runs is followed without restarting the agent.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from pydantic import ValidationError
from mcp.shared._httpx_utils import create_mcp_http_client

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.writer import IndexWriter
from linkly_ls.mcp.runtime import RuntimeInfo, read_runtime_file
from linkly_ls.mcp.server import LocalBackend, build_server, tool_error
from linkly_ls.mcp.settings import McpSettings, load_mcp_settings
from linkly_ls.mcp.upstream import UpstreamLink, UpstreamUnavailable

log = logging.getLogger("linkly_ls.mcp")
T = TypeVar("T")
#: seconds a closing upstream session gets to say goodbye before it is cancelled
CLOSE_GRACE_S = 2.0


class StdioBackend:
    """Forward to the running HTTP server if any, else run the tools on a local Engine."""

    def __init__(self, config: Config, settings: McpSettings, watch: bool = True) -> None:
        self.config = config
        self.settings = settings
        self.watch = watch
        self.engine: Engine | None = None
        self.writer: IndexWriter | None = None
        self._allowed = set(settings.exposed_tools())
        self._local: LocalBackend | None = None
        self._local_lock = anyio.Lock()
        self._link: UpstreamLink | None = None
        self._link_lock = anyio.Lock()
        self._connect: Callable[[RuntimeInfo], Awaitable[UpstreamLink]] | None = None
        self._last_warning = ""

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Hold the HTTP client and the task group that upstream sessions live in."""
        headers = {"Authorization": f"Bearer {self.settings.token}"} if self.settings.token else None
        async with create_mcp_http_client(headers=headers) as http, anyio.create_task_group() as group:

            async def connect(info: RuntimeInfo) -> UpstreamLink:
                link = UpstreamLink(info, http)
                await link.open(group)
                return link

            self._connect = connect
            try:
                yield
            finally:
                self._connect = None
                self._close_link(group)

    def _close_link(self, group: TaskGroup) -> None:
        if self._link is not None:
            self._link.close()
            self._link = None
        group.cancel_scope.deadline = anyio.current_time() + CLOSE_GRACE_S

    async def list_tools(self) -> list[types.Tool]:
        tools = await self._forward(lambda link: link.list_tools())
        if tools is None:
            return await (await self._local_backend()).list_tools()
        return [tool for tool in tools if tool.name in self._allowed]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if name not in self._allowed:
            return tool_error(f"unknown tool {name!r}; tools: {', '.join(sorted(self._allowed))}")
        # JSON has no infinity (`1e400` reads as one): forwarded, it became null and the server's default
        result = await self._forward(lambda link: link.call_tool(name, arguments)) if _finite(arguments) else None
        if result is None:
            return await (await self._local_backend()).call_tool(name, arguments)
        return result

    async def _forward(self, action: Callable[[UpstreamLink], Awaitable[T]]) -> T | None:
        """The server's answer, or None when there is no server to ask (then answer locally).

        A broken session (the server restarted) is reopened once before giving up.
        """
        for attempt in range(2):
            try:
                link = await self._upstream()
                if link is None:
                    return None
                return await action(link)
            except UpstreamUnavailable as error:
                if attempt == 1:
                    self._warn_once(str(error))
        return None

    async def _upstream(self) -> UpstreamLink | None:
        info = read_runtime_file(self.config.data_dir)
        async with self._link_lock:
            if self._link is not None and (not self._link.alive or self._link.info != info):
                self._link.close()
                self._link = None
            if info is None or self._connect is None:
                return None
            if self._link is None:
                self._link = await self._connect(info)
            return self._link

    def _warn_once(self, reason: str) -> None:
        """One line on stderr per distinct failure, not one per call."""
        if reason != self._last_warning:
            self._last_warning = reason
            log.warning("%s; serving the index from this process", reason)

    async def _local_backend(self) -> LocalBackend:
        async with self._local_lock:
            if self._local is None:
                self.engine = await anyio.to_thread.run_sync(Engine, self.config)
                self.writer = IndexWriter(self.engine, watch=True)
                if self.watch:
                    self.writer.start()
                self._local = LocalBackend(self.engine, self.settings, self.writer)
            return self._local

    def close(self) -> None:
        if self.writer is not None:
            self.writer.stop()
        if self.engine is not None and not (self.writer and self.writer.running):
            self.engine.close()


def _finite(value: Any) -> bool:
    """Whether every number in `value` (arguments as parsed from JSON) can be written back as JSON."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(item) for item in value.values())
    if isinstance(value, list):
        return all(_finite(item) for item in value)
    return True


@asynccontextmanager
async def parse_errors_answered(
    read: MemoryObjectReceiveStream[SessionMessage | Exception], write: MemoryObjectSendStream[SessionMessage]
) -> AsyncIterator[MemoryObjectReceiveStream[SessionMessage]]:
    """The messages of the stdio transport, each line that is not a JSON-RPC message answered with the
    error JSON-RPC names for it (-32700, id null) instead of dropped without a word (the HTTP transport
    answers such a body with 400 and the same error)."""
    send, receive = anyio.create_memory_object_stream[SessionMessage](0)

    async def forward() -> None:
        async with send:
            async for item in read:
                if isinstance(item, Exception):
                    await write.send(SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=None, error=_line_error(item))))
                else:
                    await send.send(item)

    async with anyio.create_task_group() as group:
        group.start_soon(forward)
        yield receive
        group.cancel_scope.cancel()


def _line_error(error: Exception) -> types.ErrorData:
    """-32700 for a line that is not JSON, -32600 for JSON that is no JSON-RPC 2.0 message."""
    kinds = {problem.get("type") for problem in error.errors()} if isinstance(error, ValidationError) else set()
    if "json_invalid" in kinds or not kinds:
        return types.ErrorData(code=types.PARSE_ERROR, message="Parse error: a line of stdin is not JSON")
    return types.ErrorData(
        code=types.INVALID_REQUEST,
        message="Invalid Request: a line of stdin is JSON but no JSON-RPC 2.0 request, notification or response",
    )


def run_stdio(config: Config, watch: bool = True) -> int:
    """Serve MCP on stdin/stdout until the client closes them. Returns the exit status."""
    settings = load_mcp_settings(config)
    backend = StdioBackend(config, settings, watch=watch)
    server = build_server(backend)

    async def serve() -> None:
        async with backend.running(), stdio_server() as (read, write), parse_errors_answered(read, write) as messages:
            await server.run(messages, write, server.create_initialization_options())

    try:
        anyio.run(serve)
    except KeyboardInterrupt:
        pass
    finally:
        backend.close()
    return 0
