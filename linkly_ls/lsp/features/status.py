"""`linkly/status`, and the MCP sidecar: the same tools over streamable HTTP, on this process's Engine.

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
from typing import TYPE_CHECKING, Any

from linkly_ls import __version__
from linkly_ls.core.config import ConfigError

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer
    from linkly_ls.mcp import SidecarHandle

STATUS = "linkly/status"


class McpSidecar:
    def __init__(self, ls: LinklyLanguageServer) -> None:
        self.ls = ls
        self.handle: SidecarHandle | None = None
        self.url: str | None = None
        self.error: str | None = None

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
        from linkly_ls.mcp.runtime import read_runtime_file

        engine = self.ls.engine
        assert engine is not None
        running = read_runtime_file(engine.data_dir)
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


def status(ls: LinklyLanguageServer, sidecar: McpSidecar) -> dict[str, Any]:
    engine = ls.engine
    indexing = ls.indexing
    return {
        "version": __version__,
        "documents": engine.catalog.count() if engine else 0,
        "libraries": len(engine.libraries()) if engine else 0,
        "data_dir": str(engine.data_dir) if engine else None,
        "indexing": bool(indexing and indexing.indexing),
        "writer": bool(indexing and indexing.is_writer),
        "mcp_url": sidecar.url,
        "mcp_error": sidecar.error,
        "error": ls.startup_error,
    }


def register(server: LinklyLanguageServer) -> None:
    sidecar = McpSidecar(server)
    server.on_engine_ready.append(lambda ls: ls.background(sidecar.start()))
    server.on_stop.append(sidecar.stop)

    @server.feature(STATUS)
    async def on_status(ls: LinklyLanguageServer, params: Any) -> dict[str, Any]:
        await ls.wait_ready()
        return await asyncio.to_thread(status, ls, sidecar)
