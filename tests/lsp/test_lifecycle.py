"""The protocol's lifecycle on the real server, byte for byte: every request is answered, before
`initialize` and after `shutdown` too, and `exit` ends the process with the status LSP gives it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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

    def answer(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id` (notifications and server requests before it are passed over)."""
        while True:
            length = 0
            while (line := self.process.stdout.readline().strip()) != b"":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(self.process.stdout.read(length))
            if message.get("id") == request_id and "method" not in message:
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
