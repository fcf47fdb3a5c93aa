"""The fast path for warm calls: `tools/call` and `tools/list` on an open session, answered in one step.

Through the SDK's streamable HTTP transport one warm call crosses Starlette's
router, the transport's memory streams, a JSON-RPC dispatcher task, the server
runner, a per-request response stream and pydantic models at each hop: about
1,900 Python function calls and 2.2-2.9 ms of server CPU (quiet machine) for a
`read` that takes 0.05 ms. This ASGI app sits in front of the SDK's app and
answers the two methods agents repeat itself, on a session the SDK opened,
with the SDK's checks, the one dispatch (the backend's tool list;
`answer_call_tool`, which the SDK's handler calls too) and the SDK's own
serialisation (the per-version result surface, the JSON-RPC envelope as its
`JSONRPCResponse` dumps it): the bytes on the wire are the SDK's.

Two refusals come first, for every request: a Host or Origin outside the allowed
ones (the SDK's rule, but `*` stands for a port of digits only), and a body that
is no JSON-RPC message (-32700 or -32600, as stdio answers it, where the SDK
would open a session and dump pydantic's errors). Everything else goes to the SDK
unchanged: GET streams, DELETE, initialize, notifications, other methods, a
request without `mcp-session-id` or `mcp-protocol-version`, a session the SDK
does not hold (or whose initialize failed), another media type, a missing or too
large Content-Length, and params the SDK's validators refuse: it then answers
with its own status and error. The SDK's per-message OpenTelemetry
span is not opened for fast-path calls (linkly configures no tracer).
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

import anyio
import mcp_types as types
import pydantic_core
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import methods
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, KNOWN_PROTOCOL_VERSIONS
from pydantic import BaseModel
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from linkly_ls.mcp.server import ToolBackend, answer_call_tool

log = logging.getLogger("linkly_ls.mcp")

FAST_METHODS = frozenset({"tools/call", "tools/list"})
#: the SDK transport's fields the fast path reads or holds (private in the SDK; without them it steps aside)
TRANSPORT_FIELDS = ("is_terminated", "idle_scope", "_idle_timeout", "_requests_in_flight")
_HEADERS = frozenset(
    {b"host", b"origin", b"content-type", b"content-length", b"accept", b"mcp-session-id", b"mcp-protocol-version"}
)
_ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_PORT = re.compile(r"[0-9]{1,5}")


def header_allowed(value: str, allowed: list[str]) -> bool:
    """The SDK's Host/Origin rule, with a port of digits: an exact entry, or `name:*` for `name:<port>`.

    The SDK's own rule takes any text after `name:`, so `Host: 127.0.0.1:1@evil.example` passed
    `127.0.0.1:*`; every request is checked here first (`JsonRpcFastPath.__call__`).
    """
    return value in allowed or any(
        entry.endswith(":*") and value.startswith(entry[:-1]) and _PORT.fullmatch(value, len(entry) - 1) is not None
        for entry in allowed
    )


def accepts_json(accept: str) -> bool:
    """Whether an Accept header admits `application/json` (wildcards included), as the SDK reads it."""
    kinds = {part.strip().split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(kinds & {"application/json", "application/*", "*/*"})


class JsonRpcFastPath:
    """ASGI app: warm tools/call and tools/list itself, everything else to `app` (the SDK's)."""

    def __init__(
        self,
        app: ASGIApp,
        server: Server[Any],
        backend: ToolBackend,
        security: TransportSecuritySettings,
        path: str,
        max_body_bytes: int,
    ) -> None:
        self.app = app
        self.server = server
        self.backend = backend
        self.security = security
        self.path = path
        self.max_body_bytes = max_body_bytes
        #: session id -> protocol version negotiated by its initialize (the SDK's sessions that completed it)
        self.sessions: dict[str, str] = {}
        #: requests answered here, not by the SDK (for tests and benchmarks)
        self.answered = 0
        #: False once the SDK's session objects lack what the fast path relies on: every request then goes to the SDK
        self.enabled = True
        self._tool_lists: dict[str, tuple[list[types.Tool], bytes]] = {}

    @property
    def manager(self) -> StreamableHTTPSessionManager:
        return self.server.session_manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, str] = {}
        for name, value in scope["headers"]:
            if name in _HEADERS and name not in headers:  # the first of repeated headers, as Starlette reads them
                headers[name] = value.decode("latin-1")
        refusal = self._refusal(headers)
        if refusal is not None:
            await _send_whole(send, refusal[0], b"text/plain; charset=utf-8", refusal[1])
            return
        if scope["path"] == self.path and (unsupported := unsupported_version_answer(headers)) is not None:
            await _send_whole(send, 400, b"application/json", unsupported)
            return
        if scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        if not self._readable(headers):
            await self.app(scope, receive, self._watch_initialize(send))
            return
        body = await self._read_body(receive)
        if body is None:  # the client went away while sending
            return
        session_id = headers.get(b"mcp-session-id")
        transport = None if session_id is None else self._transport(scope, headers, session_id)
        request = None if transport is None or session_id is None else self._parse(body, self.sessions[session_id])
        if request is None:
            not_a_message = invalid_request_answer(body)
            if not_a_message is not None:
                await _send_whole(send, 400, b"application/json", not_a_message)
                return
            await self.app(scope, _replay(body, receive), self._watch_initialize(send))
            return
        await self._answer(transport, session_id, request, send)

    def _readable(self, headers: dict[bytes, str]) -> bool:
        """Whether the SDK would read this POST's body (its media types, a length within the limit)."""
        if headers.get(b"content-type", "").split(";")[0].strip().lower() != "application/json":
            return False
        if not accepts_json(headers.get(b"accept", "")):
            return False
        length = headers.get(b"content-length", "")
        return length.isdigit() and int(length) <= self.max_body_bytes

    def _refusal(self, headers: dict[bytes, str]) -> tuple[int, bytes] | None:
        """(status, text) refusing a Host or Origin outside the allowed ones, as the SDK words it; None if allowed."""
        host, origin = headers.get(b"host"), headers.get(b"origin")
        if not host or not header_allowed(host, self.security.allowed_hosts):
            return 421, b"Invalid Host header"
        if origin and not header_allowed(origin, self.security.allowed_origins):
            return 403, b"Invalid Origin header"
        return None

    def _transport(self, scope: Scope, headers: dict[bytes, str], session_id: str) -> Any:
        """The SDK's transport of this session when the request qualifies for the fast path, else None."""
        if not self.enabled or "user" in scope or session_id not in self.sessions:
            return None
        if headers.get(b"mcp-protocol-version") not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        transport = self._live_transports().get(session_id)
        if transport is None:
            del self.sessions[session_id]
            return None
        missing = [name for name in TRANSPORT_FIELDS if not hasattr(transport, name)]
        if missing:
            self.enabled = False
            log.warning("MCP fast path off: this mcp SDK's session transport has no %s", ", ".join(missing))
            return None
        if transport.is_terminated:
            return None
        idle = transport.idle_scope
        if idle is not None and idle.cancel_called:
            return None
        return transport

    @staticmethod
    async def _read_body(receive: Receive) -> bytes | None:
        """The whole body (its length is the checked Content-Length: the HTTP parser holds it to that)."""
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _live_transports(self) -> dict[str, Any]:
        """The SDK's open sessions by id (a private map of the SDK; tests check it is still there). Without
        it no session is known, so every request goes to the SDK."""
        live = getattr(self.manager, "_server_instances", None)
        return live if isinstance(live, dict) else {}

    def _parse(self, body: bytes, version: str) -> tuple[str | int, str, BaseModel | None] | None:
        """(id, method, validated params) of a request the fast path answers, else None."""
        try:
            message = pydantic_core.from_json(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or not message.keys() <= _ENVELOPE_KEYS or message.get("jsonrpc") != "2.0":
            return None
        request_id, method, params = message.get("id"), message.get("method"), message.get("params")
        if isinstance(request_id, bool) or not isinstance(request_id, int | str) or method not in FAST_METHODS:
            return None
        if method in self.server.cache_hints or (params is not None and not isinstance(params, dict)):
            return None
        try:
            methods.validate_client_request(method, version, params)
            if method == "tools/call":
                return request_id, method, types.CallToolRequestParams.model_validate(params or {}, by_name=False)
        except (ValueError, KeyError):  # pydantic's ValidationError is a ValueError
            return None
        return request_id, method, None

    async def _answer(
        self, transport: Any, session_id: str, request: tuple[str | int, str, BaseModel | None], send: Send
    ) -> None:
        request_id, method, params = request
        version = self.sessions[session_id]
        self.answered += 1
        with _InFlight(transport):
            if isinstance(params, types.CallToolRequestParams):
                result = _result_json(method, version, await answer_call_tool(self.backend, params))
            else:
                result = self._tool_list_json(version, await self.backend.list_tools())
            body = _envelope(request_id, result)
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"mcp-session-id", session_id.encode("latin-1")),
                        (b"content-length", str(len(body)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

    def _tool_list_json(self, version: str, tools: list[types.Tool]) -> bytes | None:
        """The tools/list result in JSON, kept per version while the backend lists the very same Tool objects."""
        kept = self._tool_lists.get(version)
        if kept is not None and len(kept[0]) == len(tools) and all(a is b for a, b in zip(kept[0], tools)):
            return kept[1]
        encoded = _result_json("tools/list", version, types.ListToolsResult(tools=tools))
        if encoded is not None:
            self._tool_lists[version] = (tools, encoded)
        return encoded

    def _watch_initialize(self, send: Send) -> Send:
        """`send` that notes the session an initialize answer opens or renews, and the version it settles on.

        Only POSTs the SDK answers pass here (initialize always does); a session
        is served by the fast path once its initialize has succeeded.
        """
        state: dict[str, Any] = {}

        async def watching(message: Message) -> None:
            if message["type"] == "http.response.start":
                state["ok"] = message["status"] == 200
                state["session"] = next(
                    (value.decode("latin-1") for name, value in message.get("headers", []) if name == b"mcp-session-id"),
                    None,
                )
                state["body"] = b""
            elif message["type"] == "http.response.body" and state.get("ok") and state.get("session"):
                state["body"] += message.get("body", b"")
                if not message.get("more_body", False):
                    self._note_initialized(state["session"], state["body"])
            await send(message)

        return watching

    def _note_initialized(self, session_id: str, body: bytes) -> None:
        try:
            answer = json.loads(body)
        except ValueError:
            return
        version = answer.get("result", {}).get("protocolVersion") if isinstance(answer, dict) else None
        if isinstance(version, str) and version in HANDSHAKE_PROTOCOL_VERSIONS:
            live = self._live_transports()
            for gone in [known for known in self.sessions if known not in live]:
                del self.sessions[gone]
            self.sessions[session_id] = version


def unsupported_version_answer(headers: dict[bytes, str]) -> bytes | None:
    """The 400 answer's body for an `MCP-Protocol-Version` header naming no version this SDK knows (the SDK
    read it as a newer protocol's and asked for envelope keys of `params._meta` instead); None otherwise."""
    version = headers.get(b"mcp-protocol-version")
    if version is None or version in KNOWN_PROTOCOL_VERSIONS:
        return None
    text = (
        f"Bad Request: unsupported MCP-Protocol-Version header {version!r}; "
        f"this server speaks {', '.join(KNOWN_PROTOCOL_VERSIONS)}"
    )
    return _error_body(types.INVALID_REQUEST, text)


def invalid_request_answer(body: bytes) -> bytes | None:
    """JSON-RPC's answer (id null) for a body that is no JSON-RPC 2.0 message, as stdio answers such a
    line: -32700 when it is not JSON, -32600 when it is JSON (a batch included); None for a message.
    Answered here, the SDK opens no session for it."""
    try:
        message = pydantic_core.from_json(body)
    except ValueError as error:
        code, text = types.PARSE_ERROR, f"Parse error: {error}"
    else:
        if isinstance(message, list):
            text = "Invalid Request: a JSON array (a batch) is not a message: send one JSON-RPC message per request"
        else:
            try:
                types.jsonrpc_message_adapter.validate_python(message, by_name=False)
                return None
            except ValueError:  # pydantic's ValidationError
                text = "Invalid Request: the body is JSON but no JSON-RPC 2.0 request, notification or response"
        code = types.INVALID_REQUEST
    return _error_body(code, text)


def _error_body(code: int, text: str) -> bytes:
    """A JSON-RPC error answer with `id` null, as bytes."""
    error = types.ErrorData(code=code, message=text)
    return types.JSONRPCError(jsonrpc="2.0", id=None, error=error).model_dump_json(by_alias=True, exclude_unset=True).encode()


def _result_json(method: str, version: str, result: BaseModel) -> bytes | None:
    """The SDK runner's wire form of a result: dumped, then sieved by the version's surface; None if invalid."""
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    try:
        return pydantic_core.to_json(methods.serialize_server_result(method, version, dumped))
    except ValueError:
        log.exception("handler for %r returned an invalid result", method)
        return None


def _envelope(request_id: str | int, result: bytes | None) -> bytes:
    """The JSON-RPC answer, as the SDK's `JSONRPCResponse` dumps it (or its error for an invalid result)."""
    if result is not None:
        return b'{"jsonrpc":"2.0","id":' + pydantic_core.to_json(request_id) + b',"result":' + result + b"}"
    error = types.ErrorData(code=types.INTERNAL_ERROR, message="Handler returned an invalid result")
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error).model_dump_json(
        by_alias=True, exclude_unset=True
    ).encode()


class _InFlight:
    """Holds the session's idle countdown while a fast-path call runs, as the SDK's transport does per request."""

    def __init__(self, transport: Any) -> None:
        self.transport = transport
        self.counting = transport.idle_scope is not None and transport._idle_timeout is not None

    def __enter__(self) -> None:
        if self.counting:
            self.transport._requests_in_flight += 1
            self.transport.idle_scope.deadline = math.inf

    def __exit__(self, *exc: object) -> None:
        if self.counting:
            self.transport._requests_in_flight -= 1
            if not self.transport._requests_in_flight:
                self.transport.idle_scope.deadline = anyio.current_time() + self.transport._idle_timeout


def _replay(body: bytes, receive: Receive) -> Receive:
    """`receive` that hands the SDK the body this app already read, then the connection's own messages."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Message:
        return pending.pop() if pending else await receive()

    return replayed



async def _send_whole(send: Send, status: int, content_type: bytes, body: bytes) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
