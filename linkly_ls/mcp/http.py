"""The HTTP sidecar: MCP over streamable HTTP at `http://127.0.0.1:60606/mcp`.

`start_http_sidecar` runs it in a background thread of any process (the
language server embeds it); `run_http_server` is `linkly serve`: open the
index, keep it current, serve until SIGINT, SIGTERM or SIGHUP.

Security: loopback by default; Host and Origin headers are checked (DNS
rebinding); another address is refused unless a bearer token is set, and
then every request must carry it; request bodies and response text are capped.
"""

from __future__ import annotations

import asyncio
import errno
import hmac
import json
import logging
import os
import shutil
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from linkly_ls.core.config import Config, ConfigError, default_data_dir
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import LinklyError
from linkly_ls.core.indexing.writer import IndexWriter
from linkly_ls.mcp.fastpath import JsonRpcFastPath
from linkly_ls.mcp.runtime import RUNTIME_FILE_NAME, live_server, remove_runtime_file, write_runtime_file
from linkly_ls.mcp.server import LocalBackend, ToolBackend, build_server
from linkly_ls.mcp.settings import McpSettings, load_mcp_settings
from linkly_ls.mcp.slow_requests import TimedHttpToolsProtocol

log = logging.getLogger("linkly_ls.mcp")

MCP_PATH = "/mcp"
PORT_ATTEMPTS = 21  # the configured port and the next 20
STARTUP_TIMEOUT_S = 15.0
LOOPBACK_HOSTS = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
LOOPBACK_ORIGINS = ["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"]
_WILDCARD_HOSTS = {"0.0.0.0", "::", ""}


class SecurityError(ConfigError):
    """A setting that would expose the documents: e.g. a network bind without a token."""


class PortUnavailableError(OSError, LinklyError):
    """The server cannot listen where asked: no port free in the searched range, or no such address here."""


class BearerTokenMiddleware:
    """401 unless `Authorization: Bearer <token>` (the scheme in any case, RFC 6750 and 9110: `bearer`
    is the same scheme); the token compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.expected = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        supplied = b""
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                supplied = credentials.strip() if scheme.lower() == b"bearer" else b""
                break
        if hmac.compare_digest(supplied, self.expected):
            await self.app(scope, receive, send)
            return
        body = json.dumps({"error": "unauthorized: send `Authorization: Bearer <token>` (the [mcp] token)"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", b'Bearer realm="linkly"'),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def check_bind_is_safe(settings: McpSettings) -> None:
    if not settings.is_loopback and not settings.token:
        raise SecurityError(
            f"refusing to listen on {settings.host}: anyone who can reach it could read your documents. "
            "Set `token` in [mcp] (or the LINKLY_MCP_TOKEN environment variable) to require "
            "`Authorization: Bearer <token>`, or listen on 127.0.0.1"
        )


def transport_security(settings: McpSettings) -> TransportSecuritySettings:
    hosts = list(LOOPBACK_HOSTS)
    if not settings.is_loopback and settings.host not in _WILDCARD_HOSTS:
        hosts.append(f"{url_host(settings.host)}:*")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=with_default_ports(hosts + list(settings.allowed_hosts)),
        allowed_origins=with_default_ports(LOOPBACK_ORIGINS + list(settings.allowed_origins)),
    )


def with_default_ports(entries: list[str]) -> list[str]:
    """`name:*` admits `name` without a port too: a client of `https://name/mcp` (through a TLS proxy that
    passes the Host on) sends `Host: name`, the port being the scheme's default."""
    return entries + [entry[:-2] for entry in entries if entry.endswith(":*") and entry[:-2] not in entries]


def build_http_app(backend: ToolBackend, settings: McpSettings) -> ASGIApp:
    """The streamable HTTP app; each POST is answered with one JSON body (`json_response`).

    The tools send nothing to the client while they run (no progress, no
    server-initiated requests), so an event stream per call would only add
    work: it costs about twice the server CPU of a JSON answer, and clients
    that stop reading at the answer event leave the stream's last chunk
    behind and open a second connection for the next call. Notifications
    still have the session's GET stream. Warm tools/call and tools/list
    requests are answered by the fast path in front of the SDK's app
    (`fastpath.JsonRpcFastPath`).
    """
    server = build_server(backend)
    security = transport_security(settings)
    sdk_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=True,
        transport_security=security,
        max_request_body_size=settings.max_request_bytes,
        host=settings.host,
    )
    app: ASGIApp = JsonRpcFastPath(sdk_app, server, backend, security, MCP_PATH, settings.max_request_bytes)
    if settings.token:
        app = BearerTokenMiddleware(app, settings.token)
    return app


def url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def local_url(host: str, port: int) -> str:
    """The URL a client on this machine uses (a wildcard bind is reached through loopback)."""
    if host == "::":
        host = "::1"
    elif host in _WILDCARD_HOSTS:
        host = "127.0.0.1"
    return f"http://{url_host(host)}:{port}{MCP_PATH}"


def bind_socket(host: str, port: int, attempts: int = PORT_ATTEMPTS) -> socket.socket:
    """Bind `port`, or the next free one (up to `attempts` ports); port 0 lets the system choose.

    The socket is made with protocol IPPROTO_TCP, not 0: asyncio turns Nagle's
    algorithm off (TCP_NODELAY) only on accepted sockets whose `proto` says TCP,
    and `accept()` copies it from this socket. With Nagle on, the body of an
    answer waits behind its unacknowledged headers for the client's delayed
    ACK: a fixed ~40 ms on a call that takes 1 ms.
    """
    try:
        family = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    except socket.gaierror as error:  # `[Errno -2] Name or service not known` named no host
        raise PortUnavailableError(f"cannot listen on {host!r}: no such host or address ({error.strerror}); check `host` in [mcp] or --host") from None
    last_error: OSError | None = None
    for candidate in [0] if port == 0 else range(port, min(port + attempts, 65536)):
        sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.bind((host.strip("[]"), candidate))
        except OSError as error:
            sock.close()
            if error.errno == errno.EADDRNOTAVAIL:  # an address of another machine
                raise PortUnavailableError(f"cannot listen on {host}: it is not an address of this machine ({error.strerror})") from None
            if error.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise
            last_error = error
            continue
        sock.set_inheritable(False)
        return sock
    raise PortUnavailableError(
        f"ports {port}-{port + attempts - 1} on {host} are all taken ({last_error}); set another `port` in [mcp]"
    )


@dataclass
class SidecarHandle:
    """A running HTTP server in a background thread."""

    url: str
    host: str
    port: int
    server: uvicorn.Server = field(repr=False)
    thread: threading.Thread = field(repr=False)
    data_dir: Path | None = field(default=None, repr=False)

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        if self.data_dir is not None:
            remove_runtime_file(self.data_dir)

    @property
    def running(self) -> bool:
        return self.thread.is_alive() and not self.server.should_exit


def start_http_sidecar(
    engine: Engine,
    settings: McpSettings,
    writer: IndexWriter | None = None,
    write_runtime: bool = True,
) -> SidecarHandle:
    """Serve the tools on `engine` over HTTP from a daemon thread; returns once it accepts connections.

    Raises SecurityError for a network bind without a token, PortUnavailableError
    when no port is free. With `write_runtime`, `<data_dir>/mcp-server.json`
    names the address until `stop()` (unless another live server is named there).
    `writer`: this process's writer role, if it has one; without it, `index_library`
    takes the role for the length of its run.
    """
    check_bind_is_safe(settings)
    sock = bind_socket(settings.host, settings.port)
    port = sock.getsockname()[1]
    app = build_http_app(LocalBackend(engine, settings, writer), settings)
    config = uvicorn.Config(
        app,
        # httptools parses in C: 0.1-0.5 ms less server CPU a request than h11 (pure Python)
        http=TimedHttpToolsProtocol,
        log_level="warning",
        access_log=False,
        lifespan="on",
        # an MCP client's open event stream (every `mcp` SDK session holds one, `linkly mcp` too) never ends by
        # itself: waiting for it held each stop for 3 s and ended in a traceback (`_ClosingStreams`)
        timeout_graceful_shutdown=STOP_GRACE_S,
        server_header=False,
    )
    server = uvicorn.Server(config)
    _quiet_about_closing_streams()
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="linkly-mcp-http", daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            sock.close()
            raise OSError(f"the MCP HTTP server did not start on {settings.host}:{port}")
        time.sleep(0.01)
    url = local_url(settings.host, port)
    handle = SidecarHandle(url=url, host=settings.host, port=port, server=server, thread=thread)
    if write_runtime:
        other = live_server(engine.data_dir)
        if other is None or other.pid == os.getpid():
            write_runtime_file(engine.data_dir, url, settings.host, port)
            handle.data_dir = engine.data_dir
        else:
            log.warning(
                "%s already names the server at %s (pid %d); left as it is", RUNTIME_FILE_NAME, other.url, other.pid
            )
    return handle


#: how long a stop waits for open requests before it ends them: the answers take milliseconds
STOP_GRACE_S = 0.5


class _ClosingStreams(logging.Filter):
    """Drops uvicorn's report of the event streams a stop ends (`Cancel 1 running task(s)`, then a 50-line
    traceback of the CancelledError): those streams end only so, and nothing is lost."""

    def filter(self, record: logging.LogRecord) -> bool:
        if "timeout graceful shutdown exceeded" in record.getMessage():
            return False
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, asyncio.CancelledError)


def _quiet_about_closing_streams() -> None:
    target = logging.getLogger("uvicorn.error")
    if not any(isinstance(existing, _ClosingStreams) for existing in target.filters):
        target.addFilter(_ClosingStreams())


def client_config_help(url: str, token: bool, data_dir: Path | None = None) -> str:
    """Ready-to-paste snippets for common clients. `data_dir`: this server's index, when it is not the
    default one, which `linkly mcp` must be told to find this server by (the demo's `.demo-index`: the
    stdio line sent clients to an empty default index)."""
    headers = ' --header "Authorization: Bearer $LINKLY_MCP_TOKEN"' if token else ""
    entry: dict[str, Any] = {"type": "http", "url": url}
    if token:
        entry["headers"] = {"Authorization": "Bearer <your [mcp] token>"}
    return "\n".join(
        [
            "Connect a client:",
            f"  Claude Code:  claude mcp add --transport http linkly {url}{headers}",
            "  JSON config (Cursor .cursor/mcp.json, Claude Code .mcp.json):",
            "    " + json.dumps({"mcpServers": {"linkly": entry}}),
            f"  stdio clients: command `{_linkly_command()}`, args [\"mcp\"] (it forwards to this server)"
            + (f", with LINKLY_DATA_DIR={data_dir} in its environment" if data_dir is not None and data_dir != default_data_dir() else ""),
        ]
    )


def _linkly_command() -> str:
    """How a client runs `linkly`: by name when it is on PATH, else by the full path this one was started
    from (`scripts/demo` runs `.venv/bin/linkly`, which no PATH names)."""
    if shutil.which("linkly"):
        return "linkly"
    started = Path(sys.argv[0])
    return str(started.resolve()) if started.name == "linkly" else "linkly"


class StopRequest:
    """The SIGINT and SIGTERM handler of `linkly serve`: it only notes the request, taking no lock. It
    called `threading.Event.set`, which takes one: a second signal handled while the first handler held
    it (Ctrl-C twice, a timeout's TERM beside a terminal's INT) waited for it in the same thread, and the
    server hung for good."""

    def __init__(self) -> None:
        self.requested = False

    def __call__(self, *_: object) -> None:
        self.requested = True


def run_http_server(config: Config, host: str | None = None, port: int | None = None, watch: bool = True) -> int:
    """`linkly serve`: index in the background, watch, serve until SIGINT, SIGTERM or SIGHUP. Returns the exit status."""
    settings = load_mcp_settings(config).with_address(host, port)
    check_bind_is_safe(settings)
    other = live_server(config.data_dir)
    if other is not None:
        print(
            f"linkly: a server for this index is already running at {other.url} (pid {other.pid}); "
            "point your client there, or stop it first",
            file=sys.stderr,
        )
        return 1
    engine = Engine(config)
    writer: IndexWriter | None = None
    handle: SidecarHandle | None = None
    stop = StopRequest()
    # SIGHUP too: the terminal of a `linkly serve &` closed killed it with its runtime file left behind
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        writer = IndexWriter(engine, watch=watch)
        handle = start_http_sidecar(engine, settings, writer)
        writer.start()
        print(f"MCP server listening on {handle.url}", flush=True)
        if handle.port != settings.port and settings.port:
            print(f"(port {settings.port} was taken)", flush=True)
        print(client_config_help(handle.url, bool(settings.token), config.data_dir), flush=True)
        while not stop.requested:
            time.sleep(0.2)
            if not handle.thread.is_alive():
                print("linkly: the MCP HTTP server stopped unexpectedly", file=sys.stderr, flush=True)
                return 1
            lost = engine.data_dir_lost()
            if lost is not None:  # answering from files that are gone would only mislead its clients
                print(f"linkly: {lost}; the server stops: start it again to index anew", file=sys.stderr, flush=True)
                return 1
        return 0
    finally:
        if handle is not None:
            handle.stop()
        if writer is not None:
            writer.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if writer is None or not writer.running:
            engine.close()
