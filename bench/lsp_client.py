"""A minimal language-server client over pipes, for timing: JSON-RPC framing, one reader thread.

It answers what a server asks the client (`workspace/configuration` with no
settings, registrations and progress tokens with null) as an editor would, and
stamps every message with its arrival time (`time.perf_counter()`).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO


@dataclass
class Message:
    body: dict[str, Any]
    arrived: float


@dataclass
class StderrLine:
    text: str
    arrived: float


class RpcError(Exception):
    pass


def encode(body: dict[str, Any]) -> bytes:
    data = json.dumps(body).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def read_message(stream: BinaryIO) -> dict[str, Any] | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    if length is None:
        return None
    return json.loads(stream.read(length))


@dataclass
class LspProcess:
    """A spawned server: send requests and notifications, wait for answers by id."""

    command: list[str]
    env: dict[str, str]
    keep_stderr: bool = False
    cwd: Path | None = None
    process: subprocess.Popen[bytes] = field(init=False)
    spawned: float = field(init=False)
    stderr_lines: list[StderrLine] = field(default_factory=list)
    _answers: dict[int, Message] = field(default_factory=dict)
    _arrivals: queue.Queue[int] = field(default_factory=queue.Queue)
    _next_id: int = 0
    _write_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.spawned = time.perf_counter()
        self.process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
            cwd=self.cwd,
        )
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        while (body := read_message(self.process.stdout)) is not None:
            arrived = time.perf_counter()
            if "method" in body and "id" in body:
                self._answer_server_request(body)
            elif "id" in body and "method" not in body:
                self._answers[body["id"]] = Message(body, arrived)
                self._arrivals.put(body["id"])
        self._arrivals.put(-1)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            if self.keep_stderr:
                self.stderr_lines.append(StderrLine(raw.decode(errors="replace").rstrip("\n"), time.perf_counter()))

    def _answer_server_request(self, body: dict[str, Any]) -> None:
        result: Any = None
        if body["method"] == "workspace/configuration":
            result = [None for _ in body.get("params", {}).get("items", [])]
        self._send({"jsonrpc": "2.0", "id": body["id"], "result": result})

    def _send(self, body: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        with self._write_lock:
            try:
                self.process.stdin.write(encode(body))
                self.process.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass

    def request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, request_id: int, timeout: float = 60.0) -> Message:
        deadline = time.perf_counter() + timeout
        while request_id not in self._answers:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise RpcError(f"no answer to request {request_id} within {timeout} s")
            try:
                if self._arrivals.get(timeout=remaining) == -1:
                    raise RpcError(f"the server exited before answering request {request_id}")
            except queue.Empty:
                continue
        return self._answers[request_id]

    def close(self, timeout: float = 5.0) -> None:
        """`shutdown` and `exit` as an editor does; killed when it does not go in time."""
        if self.process.poll() is None:
            try:
                self.wait(self.request("shutdown", None), timeout)
            except RpcError:
                pass
            self.notify("exit", None)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def initialize_params(folder: Path, options: dict[str, Any]) -> dict[str, Any]:
    uri = folder.resolve().as_uri()
    return {
        "processId": None,
        "rootUri": uri,
        "workspaceFolders": [{"uri": uri, "name": folder.name}],
        "initializationOptions": options,
        "capabilities": {
            "workspace": {"configuration": True, "workspaceFolders": True, "symbol": {}},
            "window": {"workDoneProgress": True},
            "general": {"positionEncodings": ["utf-16"]},
        },
    }
