"""`linkly/status`, and the MCP sidecar: the same tools over streamable HTTP, on this process's Engine.

`linkly/status` answers at once, also while the server starts: `state` is `starting` until the index
is open and the server knows whether it is the index's writer, then `indexing`, `embedding`, `ready`
(or `failed`); the numbers are those of `linkly status` (core/tools/status.py).

The sidecar starts once the index is open (setting `mcp.enabled`, default
true) on `mcp.port` (default: the `[mcp]` port of the config file, 60606),
or the next free port. Host, token and tool allowlist come from the config
file's `[mcp]` table. When another live linkly process already serves MCP
for this index (its `<data_dir>/mcp-server.json`), that server is reused
rather than a second one started. The URL is logged with window/logMessage
and returned by `linkly/status`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from typing import TYPE_CHECKING, Any

from linkly_ls import __version__
from linkly_ls.core.config import ConfigError

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer
    from linkly_ls.mcp import SidecarHandle

STATUS = "linkly/status"


#: how often a server that left MCP to another process's server for this index looks whether it still runs
OTHER_SERVER_CHECK_S = 5.0


class McpSidecar:
    def __init__(self, ls: LinklyLanguageServer) -> None:
        self.ls = ls
        self.handle: SidecarHandle | None = None
        self.url: str | None = None
        self.error: str | None = None
        self._checked_at = 0.0
        self._starting = False

    def current_url(self) -> str | None:
        """The MCP address to show: this server's, or the one another process serves this index at while it runs.
        Once that process is gone this server starts its own (a second VS Code window showed, and copied, the
        first window's address for good after it closed)."""
        engine = self.ls.engine
        if self.handle is not None or self.url is None or engine is None or self._starting:
            return self.url
        now = time.monotonic()
        if now - self._checked_at < OTHER_SERVER_CHECK_S:
            return self.url
        self._checked_at = now
        from linkly_ls.mcp.runtime import live_server

        if live_server(engine.data_dir) is None:
            self.url, self._starting = None, True
            self.ls.call_soon(lambda: self.ls.background(self._start_again()))  # asked from a worker thread
        return self.url

    async def _start_again(self) -> None:
        try:
            await self.start()
        finally:
            self._starting = False

    async def start(self) -> None:
        if not self.ls.settings.mcp.enabled or self.ls.engine is None:
            return
        if self.ls.indexing is not None:
            await self.ls.indexing.prepared.wait()
        try:
            await asyncio.to_thread(self._start)
        except (ConfigError, OSError) as error:
            self.error = str(error)
            self.ls.show(f"linkly-ls: the MCP server did not start: {error}")
            return
        origin = "" if self.handle else " (served by another linkly process for this index)"
        self.ls.log(f"linkly-ls: MCP server at {self.url}{origin}")

    def _start(self) -> None:
        """Import, bind and start in a worker thread: importing the MCP SDK takes a moment."""
        from linkly_ls.mcp import load_mcp_settings, start_http_sidecar
        from linkly_ls.mcp.runtime import live_server

        engine = self.ls.engine
        assert engine is not None
        running = live_server(engine.data_dir)  # a runtime file a dead server left names no server
        if running is not None and running.pid != os.getpid():
            self.url = running.url
            return
        settings = load_mcp_settings(engine.config)
        if self.ls.settings.mcp.port is not None:
            settings = dataclasses.replace(settings, port=self.ls.settings.mcp.port)
        self.handle = start_http_sidecar(engine, settings, writer=self.ls.indexing.writer)
        self.url = self.handle.url

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.stop(timeout=3.0)
            self.handle = None


def server_state(ls: LinklyLanguageServer) -> str:
    indexing = ls.indexing
    if ls.startup_error is not None:
        return "failed"
    if ls.engine is None or indexing is None or not indexing.claim_settled:
        return "starting"
    if indexing.indexing:
        return "indexing"
    if indexing.is_writer and ls.engine.vectors.state().running:
        return "embedding"
    return "ready"


def status(ls: LinklyLanguageServer, sidecar: McpSidecar) -> dict[str, Any]:
    from linkly_ls.core.tools.status import status as index_status

    engine = ls.engine
    indexing = ls.indexing
    answer: dict[str, Any] = {
        "version": __version__,
        "state": server_state(ls),
        "documents": 0,
        "libraries": 0,
        "data_dir": None,
        "indexing": bool(indexing and indexing.indexing) and ls.startup_error is None,  # a failed start indexes nothing
        "writer": bool(indexing and indexing.is_writer),
        "mcp_url": sidecar.current_url(),
        "mcp_error": sidecar.error,
        "error": ls.startup_error,
    }
    if engine is None:
        return answer
    details = index_status(engine, writer=indexing.writer if indexing else None, mcp_url=answer["mcp_url"]).to_json()
    answer.update(
        {
            key: details[key]
            for key in ("documents", "data_dir", "skipped", "failed", "ocr_pending", "unfinished_runs", "vector_coverage", "embedding")
        }
    )
    writer = details["writer"]
    answer["libraries"] = len(details["libraries"])
    answer["library_details"] = details["libraries"]
    answer["writer_pid"] = writer["pid"]
    answer["activity"] = writer["activity"]
    answer["activity_description"] = writer["description"]
    return answer


def register(server: LinklyLanguageServer) -> None:
    sidecar = McpSidecar(server)
    server.on_engine_ready.append(lambda ls: ls.background(sidecar.start()))
    server.on_stop.append(sidecar.stop)

    @server.feature(STATUS)
    async def on_status(ls: LinklyLanguageServer, params: Any) -> dict[str, Any]:
        return await asyncio.to_thread(status, ls, sidecar)
