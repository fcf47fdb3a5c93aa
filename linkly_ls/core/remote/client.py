"""A client for another machine's `linkly serve`: MCP `tools/call` as JSON-RPC over streamable HTTP.

The client is synchronous (the tools run in worker threads) and speaks the
few messages it needs itself: `initialize`, `notifications/initialized`, then
`tools/call` on the session the server handed out (kept and reused; an
expired one is opened again once). Answers may come as JSON or as a
server-sent event stream. Every call has one deadline (the remote's
`timeout_s`), checked while the answer is read, so a slow or trickling
server cannot hold a call longer than that. Failures are `RemoteError`s with
a one-line cause; the token is sent only as a header and never appears in a
message or a log line.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx2

from linkly_ls import __version__
from linkly_ls.core.errors import LinklyError, ToolError
from linkly_ls.core.remote.config import RemoteConfig
from linkly_ls.core.tools.render import visible_controls

PROTOCOL_VERSION = "2025-06-18"
#: the largest answer read from a remote (its own max_response_chars is far below this)
MAX_ANSWER_BYTES = 16 << 20
#: the tools whose answer a server cut to its size cap is still whole (the units that fit, and `next_offset`
#: at the first one left out: `tools/fitting.py`), and what those units are
PAGED_UNITS = {"read": "lines", "grep": "matches", "outline": "documents"}
_SESSION_HEADER = "mcp-session-id"


class RemoteError(LinklyError):
    """A remote could not answer: down, too slow, refused the token, or answered something unreadable."""


class RemoteToolError(ToolError):
    """The remote answered the call with a tool error (an unknown document, an offset past the end)."""


class _SessionExpired(Exception):
    """The server no longer knows our session (it restarted, or the session idled out)."""


class RemoteClient:
    """Calls to one remote server; thread-safe (calls share one HTTP connection pool and one session)."""

    def __init__(self, remote: RemoteConfig, transport: httpx2.BaseTransport | None = None) -> None:
        self.remote = remote
        self._transport = transport
        self._http: httpx2.Client | None = None
        self._session_id: str | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    @property
    def name(self) -> str:
        return self.remote.name

    def call_tool(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The structured (JSON) answer of `tool` on the remote, `_meta` included.

        Raises RemoteToolError when the remote answers with a tool error, RemoteError when it cannot answer.
        """
        if self.remote.token_problem:
            raise RemoteError(f"remote {self.name!r}: no token: {self.remote.token_problem}")
        deadline = time.monotonic() + self.remote.timeout_s
        arguments = {**arguments, "output_format": "json"}
        for attempt in range(2):
            session = self._session(deadline)
            try:
                answer = self._request("tools/call", {"name": tool, "arguments": arguments}, session, deadline)
            except _SessionExpired:
                with self._lock:
                    if self._session_id == session:
                        self._session_id = None
                if attempt == 1:
                    raise RemoteError(f"remote {self.name!r} keeps dropping its session") from None
                continue
            return self._tool_payload(answer, tool)
        raise AssertionError("unreachable")

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None
            self._session_id = None

    def _client(self) -> httpx2.Client:
        if self._http is None:
            headers = {"user-agent": f"linkly-ls/{__version__}"}
            if self.remote.token:
                headers["authorization"] = f"Bearer {self.remote.token}"
            self._http = httpx2.Client(
                headers=headers, follow_redirects=False, transport=self._transport, trust_env=False
            )
        return self._http

    def _session(self, deadline: float) -> str | None:
        with self._lock:
            if self._session_id is not None:
                return self._session_id
            params = {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "linkly-ls", "version": __version__},
            }
            try:
                answer = self._request("initialize", params, None, deadline)
            except _SessionExpired:
                raise RemoteError(f"remote {self.name!r}: {self.remote.url} has no MCP endpoint (HTTP 404)") from None
            if not isinstance(answer, dict) or "protocolVersion" not in answer:
                raise RemoteError(f"remote {self.name!r} answered `initialize` with something that is not MCP")
            self._session_id = self._last_session_header
            self._notify("notifications/initialized", self._session_id, deadline)
            return self._session_id

    # -- one HTTP exchange ------------------------------------------------------------------------

    _last_session_header: str | None = None

    def _notify(self, method: str, session: str | None, deadline: float) -> None:
        self._exchange({"jsonrpc": "2.0", "method": method}, session, deadline, expect_id=None)

    def _request(self, method: str, params: dict[str, Any], session: str | None, deadline: float) -> Any:
        request_id = next(self._ids)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        answer = self._exchange(message, session, deadline, expect_id=request_id)
        if not isinstance(answer, dict):
            raise RemoteError(f"remote {self.name!r} did not answer `{method}`")
        if "error" in answer:
            error = answer["error"] if isinstance(answer["error"], dict) else {}
            raise RemoteError(f"remote {self.name!r} refused `{method}`: {_said(str(error.get('message', 'no reason given')), 300)}")
        return answer.get("result")

    def _exchange(self, message: dict[str, Any], session: str | None, deadline: float, expect_id: int | None) -> Any:
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        if session:
            headers[_SESSION_HEADER] = session
            headers["mcp-protocol-version"] = PROTOCOL_VERSION
        try:
            with self._client().stream(
                "POST", self.remote.url, content=json.dumps(message).encode(), headers=headers,
                timeout=httpx2.Timeout(self._remaining(deadline)),
            ) as response:
                self._check_status(response, session)
                if message.get("method") == "initialize":
                    self._last_session_header = response.headers.get(_SESSION_HEADER)
                if expect_id is None:
                    return None
                kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if kind == "application/json":
                    return self._json_answer(self._read_body(response, deadline), expect_id)
                if kind == "text/event-stream":
                    return self._event_answer(response, deadline, expect_id)
                raise RemoteError(
                    f"remote {self.name!r} answered something that is not MCP (content type {kind or 'none'!r})"
                )
        except httpx2.TimeoutException:
            raise RemoteError(f"remote {self.name!r} did not answer within {self.remote.timeout_s:g} s") from None
        except httpx2.ConnectError as error:
            raise RemoteError(f"remote {self.name!r} cannot be reached at {self.remote.url}: {_cause(error)}") from None
        except httpx2.HTTPError as error:
            raise RemoteError(f"remote {self.name!r}: the connection failed: {_cause(error)}") from None

    def _remaining(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise httpx2.TimeoutException("deadline passed")
        return left

    def _check_status(self, response: httpx2.Response, session: str | None) -> None:
        status = response.status_code
        if status in (200, 202):
            return
        if status == 404 and session:
            raise _SessionExpired()
        if status == 401:
            cause = "refused the token" if self.remote.token else "asks for a token (set token_env in its [[remote]])"
            raise RemoteError(f"remote {self.name!r} {cause} (HTTP 401)")
        if status == 421 or status == 403:
            raise RemoteError(
                f"remote {self.name!r} refused this request's Host or Origin (HTTP {status}); add the address "
                "you reach it by to that server's [mcp] allowed_hosts"
            )
        raise RemoteError(f"remote {self.name!r} answered HTTP {status}")

    def _read_body(self, response: httpx2.Response, deadline: float) -> bytes:
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise RemoteError(f"remote {self.name!r} answered more than {MAX_ANSWER_BYTES >> 20} MB")
            self._remaining(deadline)
        return bytes(body)

    def _json_answer(self, body: bytes, expect_id: int) -> dict[str, Any]:
        try:
            answer = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            raise RemoteError(f"remote {self.name!r} answered something that is not JSON: {_preview(body)}") from None
        if not isinstance(answer, dict) or answer.get("id") != expect_id:
            raise RemoteError(f"remote {self.name!r} answered something that is not an MCP response: {_preview(body)}")
        return answer

    def _event_answer(self, response: httpx2.Response, deadline: float, expect_id: int) -> dict[str, Any]:
        """The response message among the stream's events (notifications before it are skipped)."""
        for data in _event_data(response, deadline, self):
            try:
                message = json.loads(data)
            except ValueError:
                raise RemoteError(f"remote {self.name!r} sent an event that is not JSON: {_preview(data)}") from None
            if isinstance(message, dict) and message.get("id") == expect_id and ("result" in message or "error" in message):
                return message
        raise RemoteError(f"remote {self.name!r} closed the answer stream without answering")

    def _tool_payload(self, answer: Any, tool: str) -> dict[str, Any]:
        if not isinstance(answer, dict):
            raise RemoteError(f"remote {self.name!r} answered `tools/call` with something that is not a tool result")
        if answer.get("isError"):
            raise RemoteToolError(f"remote {self.name!r}: {_error_text(answer)}")
        payload = answer.get("structuredContent")
        if not isinstance(payload, dict):
            raise RemoteError(f"remote {self.name!r} answered without structured content (is it a linkly server?)")
        if payload.get("truncated") and PAGED_UNITS.get(tool) not in payload:
            raise RemoteError(
                f"remote {self.name!r}: the answer is longer than that server's max_response_chars; ask for less"
            )
        return payload


def _event_data(response: httpx2.Response, deadline: float, client: RemoteClient) -> Iterator[str]:
    """The `data` of each server-sent event, in order, within the deadline and the size cap."""
    data: list[str] = []
    for line in _lines(response, deadline, client):
        if not line:
            if data:
                yield "\n".join(data)
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield "\n".join(data)


def _lines(response: httpx2.Response, deadline: float, client: RemoteClient) -> Iterator[str]:
    """The stream's lines, with the deadline and the size cap checked at every chunk received. Read line by
    line (`iter_lines`), a server trickling bytes that never end a line held the call past any deadline,
    and one sending hundreds of MB without a newline grew the line in memory past the cap."""
    partial = bytearray()
    size = 0
    for chunk in response.iter_bytes():
        client._remaining(deadline)
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise RemoteError(f"remote {client.name!r} answered more than {MAX_ANSWER_BYTES >> 20} MB")
        if b"\n" not in chunk:
            partial += chunk
            continue
        *complete, rest = (bytes(partial) + chunk).split(b"\n")
        partial = bytearray(rest)
        for line in complete:
            yield line.removesuffix(b"\r").decode("utf-8", "replace")
    if partial:
        yield partial.removesuffix(b"\r").decode("utf-8", "replace")


def _error_text(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    text = ""
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text = str(content[0].get("text", ""))
    try:
        parsed = json.loads(text)
        if isinstance(parsed, dict) and "error" in parsed:
            text = str(parsed["error"])
    except ValueError:
        pass
    return _said(text.removeprefix("Error: "), 500) or "the call failed (no message)"


def _said(text: str, most: int) -> str:
    """A remote's message as one line of at most `most` characters, its control characters written out: a
    newline in it forged a line of the answer (`- remote **x** fine`), an escape sequence cleared the terminal."""
    return visible_controls(" ".join(text.split()))[:most]


def _preview(body: bytes | str) -> str:
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    return repr(text[:80] + ("…" if len(text) > 80 else ""))


def _cause(error: BaseException) -> str:
    return (str(error) or type(error).__name__)[:200]
