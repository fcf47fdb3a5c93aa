"""The MCP faces of linkly: the tools over streamable HTTP (`linkly serve`, or a sidecar
thread in another process such as the language server) and over stdio (`linkly mcp`).

The names below are loaded when first asked for: `linkly status` reads the running server's
address from `mcp.runtime` without importing the MCP SDK (a second of the command's start)."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "SidecarHandle": "linkly_ls.mcp.http",
    "run_http_server": "linkly_ls.mcp.http",
    "start_http_sidecar": "linkly_ls.mcp.http",
    "McpSettings": "linkly_ls.mcp.settings",
    "load_mcp_settings": "linkly_ls.mcp.settings",
    "run_stdio": "linkly_ls.mcp.stdio",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
