"""The language server's assembly: which features it has, and the `linkly-ls` command.

`server.py` is the server core and imports no feature; each feature module
registers itself on it (`register(server)`), and this list is the only place
that names them.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from linkly_ls import __version__
from linkly_ls.lsp.features import (
    commands,
    diagnostics,
    indexing,
    link_completion,
    link_diagnostics,
    link_navigation,
    status,
    symbols,
    virtual_documents,
    workspace_symbols,
)
from linkly_ls.lsp.server import LinklyLanguageServer

FEATURES = (
    symbols,
    workspace_symbols,
    virtual_documents,
    commands,
    indexing,
    diagnostics,
    link_diagnostics,
    link_navigation,
    link_completion,
    status,
)


def drop_answered_errors(record: logging.LogRecord) -> bool:
    """pygls logs a traceback for every error answer; ours (a refused URI, a bad argument, a
    superseded query) are deliberate and already reach the client, so they stay out of stderr."""
    error = record.exc_info[1] if record.exc_info else None
    return not isinstance(error, JsonRpcException)


def create_server() -> LinklyLanguageServer:
    server = LinklyLanguageServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: LinklyLanguageServer, params: types.InitializeParams) -> None:
        ls.loop = asyncio.get_running_loop()
        ls.initialization_options = params.initialization_options

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: LinklyLanguageServer, params: types.InitializedParams) -> None:
        await ls.start()

    @server.feature(types.SHUTDOWN)
    def on_shutdown(ls: LinklyLanguageServer, params: None) -> None:
        ls.stop()

    for feature in FEATURES:
        feature.register(server)
    return server


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="linkly-ls", description="The linkly language server (stdio by default).")
    parser.add_argument("--version", action="version", version=f"linkly-ls {__version__}")
    parser.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    parser.add_argument("--tcp", action="store_true", help="listen on a TCP port instead, for debugging")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=2087)
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    args = parser.parse_args(argv)
    if args.tcp and not _is_loopback(args.host):
        parser.error(
            f"--host {args.host}: the language server's TCP port has no authentication, so it listens on "
            "loopback only (127.0.0.1, ::1, localhost); reach it from elsewhere through an SSH tunnel"
        )
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("pygls.protocol.json_rpc").addFilter(drop_answered_errors)
    server = create_server()
    try:
        if args.tcp:
            server.start_tcp(args.host, args.port)
        else:
            server.start_io()
    finally:
        server.stop()
    return 0 if server.protocol._shutdown else 1  # LSP: exit without a shutdown request first ends with 1


def _is_loopback(host: str) -> bool:
    from linkly_ls.mcp.settings import is_loopback_host  # the MCP package loads only for a TCP server

    return is_loopback_host(host)


if __name__ == "__main__":
    sys.exit(main())
