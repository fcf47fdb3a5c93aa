"""The protocol's lifecycle on the real server, byte for byte: every request is answered, before
`initialize` and after `shutdown` too, and `exit` ends the process with the status LSP gives it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


class RawClient:
    """The language server over stdio, spoken to in Content-Length framed JSON-RPC."""

    def __init__(self, root: Path) -> None:
        environment = {**os.environ, "LINKLY_DATA_DIR": str(root / "data"), "LINKLY_CONFIG": str(root / "none.toml")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "linkly_ls"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment
        )
        self.next_id = 0
        self.seen: list[dict[str, Any]] = []

    def send(self, method: str, params: Any = None, request: bool = True) -> int | None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        self.process.stdin.flush()
        return message.get("id")

    def answer(self, request_id: int, timeout_s: float = 60.0) -> dict[str, Any]:
        """The response to `request_id` (notifications and server requests before it are passed over); a
        request left unanswered fails the test after `timeout_s` instead of hanging it."""
        with ThreadPoolExecutor(max_workers=1) as reader:
            waiting = reader.submit(self._read_until, request_id)
            try:
                return waiting.result(timeout=timeout_s)
            except TimeoutError:
                self.process.kill()  # ends the blocked read
                raise AssertionError(f"request {request_id} was not answered within {timeout_s:.0f} s") from None

    def _read_until(self, request_id: int) -> dict[str, Any]:
        while True:
            message = self.read_message()
            if message.get("id") == request_id and "method" not in message:
                return message

    def read_message(self) -> dict[str, Any]:
        """The next message from the server (each is also kept in `seen`)."""
        length = 0
        while (line := self.process.stdout.readline().strip()) != b"":
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        message = json.loads(self.process.stdout.read(length))
        self.seen.append(message)
        return message

    def initialize(self, root: Path) -> None:
        self.answer(self.send("initialize", {"processId": None, "rootUri": None, "capabilities": {},
                                             "initializationOptions": {"mcp": {"enabled": False}, "embeddingModel": "none"}}))
        self.send("initialized", {}, request=False)


def test_requests_before_initialize_and_after_shutdown_are_answered_and_exit_says_how_it_ended(tmp_path: Path):
    client = RawClient(tmp_path)
    early = client.answer(client.send("workspace/symbol", {"query": "x"}))
    assert early["error"]["code"] == -32002 and "before initialize" in early["error"]["message"]
    client.initialize(tmp_path)
    assert "result" in client.answer(client.send("shutdown"))
    late = client.answer(client.send("workspace/symbol", {"query": "x"}))
    assert late["error"]["code"] == -32600 and "after shutdown" in late["error"]["message"]
    client.send("exit", request=False)
    assert client.process.wait(30) == 0

    abrupt = RawClient(tmp_path)
    abrupt.initialize(tmp_path)
    abrupt.send("exit", request=False)
    assert abrupt.process.wait(30) == 1, "exit without shutdown"


def test_a_request_whose_params_do_not_fit_is_answered_with_invalid_params(tmp_path: Path):
    """pygls logged such a request and sent nothing: the client waited for ever."""
    client = RawClient(tmp_path)
    client.initialize(tmp_path)
    document = {"uri": (tmp_path / "note.md").as_uri()}
    for method, params in (
        ("textDocument/hover", {"textDocument": document, "position": {"line": -1, "character": 0}}),
        ("textDocument/hover", {"textDocument": document}),
        ("textDocument/documentSymbol", {}),
        ("workspace/executeCommand", {}),
        ("workspace/symbol", None),
    ):
        answer = client.answer(client.send(method, params))
        assert answer["error"]["code"] == -32602 and answer["error"]["message"].startswith(method), answer
    status = client.answer(client.send("linkly/status"))  # JSON-RPC lets a request leave its params out
    assert "result" in status and status["result"]["version"]
    assert "result" in client.answer(client.send("shutdown"))
    client.send("exit", request=False)
    assert client.process.wait(30) == 0


def test_a_client_slow_to_send_its_settings_gets_no_error_shown(tmp_path: Path):
    """The server stops waiting for `workspace/configuration` after a while; the answer coming later made
    pygls show the user "Error in server: CANCELLED"."""
    import time

    from linkly_ls.lsp.server import CONFIGURATION_TIMEOUT_S

    client = RawClient(tmp_path)
    capabilities = {"workspace": {"configuration": True}}
    client.answer(client.send("initialize", {"processId": None, "rootUri": None, "capabilities": capabilities,
                                             "initializationOptions": {"mcp": {"enabled": False}, "embeddingModel": "none"}}))
    client.send("initialized", {}, request=False)
    while (asked := client.read_message()).get("method") != "workspace/configuration":
        pass
    time.sleep(CONFIGURATION_TIMEOUT_S + 1)
    body = json.dumps({"jsonrpc": "2.0", "id": asked["id"], "result": [None]}).encode()
    client.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    client.process.stdin.flush()
    time.sleep(1)
    assert "result" in client.answer(client.send("linkly/status"))
    shown = [m["params"] for m in client.seen if m.get("method") == "window/showMessage" and m["params"]["type"] == 1]
    assert shown == []
    assert "result" in client.answer(client.send("shutdown"))
    client.send("exit", request=False)
    assert client.process.wait(30) == 0


def test_bodies_that_are_no_message_are_answered_as_json_rpc_says(tmp_path: Path):
    """A body that is not JSON showed the user "Error in server: Expecting property name"; an object as
    id got an internal error echoing it with a traceback; a second initialize was answered as the first."""
    client = RawClient(tmp_path)
    client.initialize(tmp_path)

    def send_raw(body: bytes) -> None:
        client.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        client.process.stdin.flush()

    def next_response() -> dict[str, Any]:
        while "method" in (message := client.read_message()):
            assert not (message["method"] == "window/showMessage" and message["params"]["type"] == 1), message
        return message

    for body, code in ((b"{bad}", -32700), (b"[]", -32600), (b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "linkly/status"}', -32600)):
        send_raw(body)
        answer = next_response()
        assert "id" in answer and answer["id"] is None and answer["error"]["code"] == code and "data" not in answer["error"], answer
    again = client.answer(client.send("initialize", {"processId": None, "rootUri": None, "capabilities": {}}))
    assert again["error"]["code"] == -32600 and "already" in again["error"]["message"]
    assert "result" in client.answer(client.send("linkly/status"))
    assert "result" in client.answer(client.send("shutdown"))
    client.send("exit", request=False)
    assert client.process.wait(30) == 0
