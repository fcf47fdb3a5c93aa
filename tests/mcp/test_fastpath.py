"""The HTTP fast path: the SDK's exact answers for warm tools/call and tools/list, the SDK's for everything else.

A request without `mcp-protocol-version` is one the fast path leaves to the
SDK, on the same session: so each request is sent both ways and the two
answers compared, byte for byte apart from the `now` timestamps.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.mcp import fastpath
from linkly_ls.mcp.fastpath import JsonRpcFastPath, accepts_json, header_allowed
from linkly_ls.mcp.http import SidecarHandle, start_http_sidecar
from linkly_ls.mcp.settings import McpSettings

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "notes" / "rust" / "ch04-01-what-is-ownership.md"
BASE_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
VERSIONS = ["2025-03-26", "2025-06-18", "2025-11-25"]
NOW = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@dataclass
class Served:
    handle: SidecarHandle
    fast: JsonRpcFastPath
    doc_id: str


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root = tmp_path_factory.mktemp("fastpath")
    (root / "notes").mkdir()
    shutil.copy2(FIXTURE, root / "notes" / FIXTURE.name)
    library = LibraryConfig(name="notes", paths=[root / "notes"])
    engine = Engine(Config(data_dir=root / "data", libraries=[library], raw={"embedding": {"model": "none"}}))
    engine.index()
    handle = start_http_sidecar(engine, McpSettings(port=0), write_runtime=False)
    fast = handle.server.config.app
    assert isinstance(fast, JsonRpcFastPath)
    try:
        with httpx.Client(timeout=10) as client:
            session = open_session(client, handle.url, "2025-06-18")
            found = call(client, handle.url, session, "tools/call", {"name": "search", "arguments": {"query": "ownership"}})
        yield Served(handle, fast, found.json()["result"]["structuredContent"]["results"][0]["doc_id"])
    finally:
        handle.stop()
        engine.close()


def open_session(client: httpx.Client, url: str, version: str) -> dict[str, str]:
    """initialize + notifications/initialized; the headers of the session's later requests."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
    opened = client.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}, headers=BASE_HEADERS)
    assert opened.status_code == 200 and opened.json()["result"]["protocolVersion"] == version
    headers = {**BASE_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": version}
    assert client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers).status_code == 202
    return headers


def call(client: httpx.Client, url: str, headers: dict[str, str], method: str, params: dict | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 7, "method": method, **({"params": params} if params is not None else {})}
    return client.post(url, json=body, headers=headers)


def both_ways(served: Served, version: str, method: str, params: dict | None) -> tuple[httpx.Response, httpx.Response]:
    """(fast path's answer, SDK's answer) to one request on one session; checks which path answered."""
    with httpx.Client(timeout=10) as client:
        headers = open_session(client, served.handle.url, version)
        before = served.fast.answered
        fast = call(client, served.handle.url, headers, method, params)
        assert served.fast.answered == before + 1
        sdk_headers = {name: value for name, value in headers.items() if name != "MCP-Protocol-Version"}
        sdk = call(client, served.handle.url, sdk_headers, method, params)
        assert served.fast.answered == before + 1
    return fast, sdk


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    "method, params",
    [
        ("tools/list", None),
        ("tools/list", {}),
        ("tools/call", {"name": "read", "arguments": {"doc_id": "DOC", "limit": 5}}),
        ("tools/call", {"name": "read", "arguments": {"doc_id": "DOC", "limit": 3, "output_format": "json"}}),
        ("tools/call", {"name": "outline", "arguments": {"doc_id": "DOC"}, "_meta": {"progressToken": 3}}),
        ("tools/call", {"name": "read", "arguments": {"doc_id": "no-such-doc"}}),
        ("tools/call", {"name": "no_such_tool"}),
    ],
)
def test_the_fast_path_answers_exactly_as_the_sdk(served: Served, version: str, method: str, params: dict | None) -> None:
    if params and "arguments" in params and params["arguments"].get("doc_id") == "DOC":
        params = {**params, "arguments": {**params["arguments"], "doc_id": served.doc_id}}
    fast, sdk = both_ways(served, version, method, params)
    assert fast.status_code == sdk.status_code == 200
    for header in ("content-type", "mcp-session-id"):
        assert fast.headers[header] == sdk.headers[header]
    assert NOW.sub("NOW", fast.text) == NOW.sub("NOW", sdk.text)
    assert fast.json()["id"] == 7 and ("result" in fast.json()) != ("error" in fast.json())


def test_what_the_sdk_must_judge_is_left_to_it(served: Served) -> None:
    url = served.handle.url
    with httpx.Client(timeout=10) as client:
        headers = open_session(client, url, "2025-11-25")
        before = served.fast.answered
        read = {"name": "read", "arguments": {"doc_id": served.doc_id, "limit": 1}}
        assert call(client, url, {**headers, "Host": "evil.example:80"}, "tools/call", read).status_code == 421
        assert call(client, url, {**headers, "Origin": "http://evil.example"}, "tools/call", read).status_code == 403
        assert call(client, url, {**headers, "Content-Type": "text/plain"}, "tools/call", read).status_code == 400
        assert call(client, url, {**headers, "Accept": "text/html"}, "tools/call", read).status_code == 406
        unknown = {**headers, "Mcp-Session-Id": "0" * 32}
        assert call(client, url, unknown, "tools/call", read).status_code == 404
        invalid = call(client, url, headers, "tools/call", {"arguments": {}})
        assert invalid.status_code == 200 and invalid.json()["error"]["code"] == -32602
        assert call(client, url, headers, "ping").json()["result"] == {}
        not_json = client.post(url, content=b"{not json", headers=headers)
        assert not_json.status_code == 400 and not_json.json()["error"]["code"] == -32700
        assert served.fast.answered == before
        assert client.delete(url, headers=headers).status_code == 200
        assert call(client, url, headers, "tools/call", read).status_code == 404
        assert served.fast.answered == before


def test_a_session_whose_initialize_failed_is_not_served(served: Served) -> None:
    """The SDK keeps such a session but answers its calls with an error; so must the fast path."""
    with httpx.Client(timeout=10) as client:
        bad = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
        opened = client.post(served.handle.url, json=bad, headers=BASE_HEADERS)
        assert opened.status_code == 200 and "error" in opened.json()
        headers = {**BASE_HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-06-18"}
        before = served.fast.answered
        refused = call(client, served.handle.url, headers, "tools/list")
        assert refused.status_code == 200 and refused.json()["error"]["code"] == -32602
        assert served.fast.answered == before


def test_the_sdk_internals_the_fast_path_relies_on(served: Served) -> None:
    """A session by id, and the idle countdown the fast path holds during a call and restarts after it."""
    with httpx.Client(timeout=10) as client:
        headers = open_session(client, served.handle.url, "2025-06-18")
        transport = served.fast.server.session_manager._server_instances[headers["Mcp-Session-Id"]]
        assert call(client, served.handle.url, headers, "tools/list").status_code == 200
        deadline = time.monotonic() + 60  # the count drops just after the answer leaves (later on a busy machine)
        while transport._requests_in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
        assert transport._requests_in_flight == 0
        assert transport._idle_timeout > 0 and transport.idle_scope.deadline < float("inf")


def test_header_rules() -> None:
    allowed = ["127.0.0.1:*", "localhost:*", "example.org:8080"]
    assert header_allowed("127.0.0.1:60606", allowed) and header_allowed("example.org:8080", allowed)
    assert not header_allowed("127.0.0.10:1", allowed) and not header_allowed("example.org:8081", allowed)
    assert not header_allowed("127.0.0.1", allowed)
    assert not header_allowed("127.0.0.1:1@evil.example", allowed) and not header_allowed("localhost:80/x", allowed)
    assert not header_allowed("127.0.0.1:", allowed) and not header_allowed("127.0.0.1:１", allowed)
    assert accepts_json("application/json, text/event-stream") and accepts_json("*/*") and accepts_json("application/*;q=1")
    assert not accepts_json("text/event-stream") and not accepts_json("")


def test_a_kept_tool_list_is_used_only_for_the_same_tools(served: Served) -> None:
    tools = served.fast.backend._tools
    full = served.fast._tool_list_json("2025-06-18", list(tools))
    assert served.fast._tool_list_json("2025-06-18", list(tools)) is full
    fewer = json.loads(served.fast._tool_list_json("2025-06-18", list(tools[:2])))
    assert [tool["name"] for tool in fewer["tools"]] == [tool.name for tool in tools[:2]]


def test_an_sdk_without_the_fields_it_relies_on_turns_the_fast_path_off(
    served: Served, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A later SDK that renames a private field must cost speed, never a call."""
    monkeypatch.setattr(fastpath, "TRANSPORT_FIELDS", (*fastpath.TRANSPORT_FIELDS, "_a_field_renamed_later"))
    try:
        with httpx.Client(timeout=10) as client:
            headers = open_session(client, served.handle.url, "2025-11-25")
            before = served.fast.answered
            listed = call(client, served.handle.url, headers, "tools/list")
            again = call(client, served.handle.url, headers, "tools/list")
        assert listed.status_code == again.status_code == 200 and listed.json()["result"]["tools"]
        assert served.fast.answered == before and served.fast.enabled is False
        assert "fast path off" in caplog.text and "_a_field_renamed_later" in caplog.text
    finally:
        served.fast.enabled = True


def test_a_name_with_any_port_admits_the_name_without_one_as_a_tls_proxy_passes_it_on() -> None:
    """The README's reverse-proxy recipe (`allowed_hosts = ["desktop.example.org:*"]`) was answered 421: an
    https client on the default port sends `Host: desktop.example.org`."""
    from linkly_ls.mcp.http import transport_security

    security = transport_security(
        McpSettings(allowed_hosts=("desktop.example.org:*",), allowed_origins=("https://desktop.example.org:*",))
    )
    hosts, origins = list(security.allowed_hosts), list(security.allowed_origins)
    assert header_allowed("desktop.example.org", hosts) and header_allowed("desktop.example.org:443", hosts)
    assert header_allowed("https://desktop.example.org", origins)
    assert not header_allowed("desktop.example.org.evil.example", hosts) and not header_allowed("evil.example", hosts)
    assert not header_allowed("desktop.example.org:1@evil.example", hosts)
