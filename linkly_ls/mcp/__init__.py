"""The MCP faces of linkly: the tools over streamable HTTP (`linkly serve`, or a sidecar
thread in another process such as the language server) and over stdio (`linkly mcp`)."""

from linkly_ls.mcp.http import SidecarHandle, run_http_server, start_http_sidecar
from linkly_ls.mcp.settings import McpSettings, load_mcp_settings
from linkly_ls.mcp.stdio import run_stdio

__all__ = ["McpSettings", "SidecarHandle", "load_mcp_settings", "run_http_server", "run_stdio", "start_http_sidecar"]
