"""A long-lived MCP client session to the running HTTP server, for the stdio proxy.

Opening a session costs an initialize round trip (tens of milliseconds), so
the proxy keeps one open and sends every call over it. The session lives in
a task of the proxy's task group, because the SDK's client contexts must be
entered and left by the same task; calls from other tasks share it.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import httpx2
import mcp_types as types
from anyio.abc import TaskGroup, TaskStatus
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from linkly_ls.core.errors import LinklyError
from linkly_ls.mcp.runtime import RuntimeInfo

log = logging.getLogger("linkly_ls.mcp")


class UpstreamUnavailable(LinklyError):
    """The HTTP server in the runtime file could not be reached, refused us, or went away."""


class UpstreamLink:
    """One client session to one server, open until `close()` or until the connection breaks."""

    def __init__(self, info: RuntimeInfo, http: httpx2.AsyncClient) -> None:
        self.info = info
        self._http = http
        self._session: ClientSession | None = None
        self._closing = anyio.Event()
        self.alive = False

    async def open(self, task_group: TaskGroup) -> None:
        try:
            await task_group.start(self._hold)
        except Exception as error:
            raise UpstreamUnavailable(self._failure(error)) from error

    async def _hold(self, *, task_status: TaskStatus[None]) -> None:
        started = False
        try:
            async with (
                streamable_http_client(self.info.url, http_client=self._http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                self._session, self.alive, started = session, True, True
                task_status.started()
                await self._closing.wait()
        except Exception as error:
            if not started:
                raise
            log.info("the connection to %s ended: %s", self.info.url, describe(error))
        finally:
            self.alive = False

    async def list_tools(self) -> list[types.Tool]:
        result = await self._request(types.ListToolsRequest(), types.ListToolsResult)
        return result.tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """tools/call relayed as is (no client-side output-schema check: the server already shaped it)."""
        request = types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments))
        return await self._request(request, types.CallToolResult)

    async def _request(self, request: Any, result_type: Any) -> Any:
        if self._session is None or not self.alive:
            raise UpstreamUnavailable(f"the connection to {self.info.url} is closed")
        try:
            return await self._session.send_request(request, result_type)
        except Exception as error:
            self.close()
            raise UpstreamUnavailable(self._failure(error)) from error

    def close(self) -> None:
        self.alive = False
        self._closing.set()

    def _failure(self, error: BaseException) -> str:
        return f"the linkly server at {self.info.url} (pid {self.info.pid}) did not answer: {describe(error)}"


def describe(error: BaseException) -> str:
    """The innermost cause, in one line (transport errors arrive wrapped in exception groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
