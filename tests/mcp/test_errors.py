"""Each kind of error a tool raises, as an MCP client sees it over the real HTTP socket.

The server is `linkly serve` with one more tool registered, `fail` (tests/failing_tool.py),
that raises the error it is asked for.
"""

from __future__ import annotations

import json
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

FAILING_TOOL = Path(__file__).resolve().parents[1] / "failing_tool.py"
#: the errors whose message is the answer, whatever their kind
LINKLY_ERRORS = [
    "ArgumentError",
    "ToolError",
    "UsageError",
    "ConfigError",
    "EngineError",
    "IndexBusyError",
    "IndexWriteError",
    "IndexHeldError",
    "UpstreamUnavailable",
]


@dataclass
class FailingServer:
    url: str
    log: Path

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def failing_server(tmp_path_factory: pytest.TempPathFactory, kit) -> Iterator[FailingServer]:
    home = kit.make_home(tmp_path_factory.mktemp("errors"), minimal=True)
    log = home.root / "server.log"
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [sys.executable, str(FAILING_TOOL), "cli", "serve", "--port", str(kit.free_port()), "--no-watch"],
            env=home.env(),
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
        try:
            yield FailingServer(url=_wait_listening(process, lines, log), log=log)
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(20) == 0, log.read_text(encoding="utf-8")


def _wait_listening(process: subprocess.Popen, lines: queue.Queue[str], log: Path, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            match = re.match(r"MCP server listening on (\S+)", lines.get(timeout=0.1))
        except queue.Empty:
            continue
        if match:
            return match.group(1)
    raise AssertionError(f"the server did not start: {log.read_text(encoding='utf-8')}")


async def test_the_registered_tool_is_listed(failing_server, kit) -> None:
    async with kit.http_session(failing_server.url) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
    assert names[-2:] == ["index_library", "fail"]


@pytest.mark.parametrize("error", LINKLY_ERRORS)
async def test_a_linkly_error_is_a_tool_error_with_its_message(failing_server, kit, error: str) -> None:
    message = f"{error} raised on purpose"
    async with kit.http_session(failing_server.url) as session:
        markdown = kit.assert_tool_error(await session.call_tool("fail", {"error": error}))
        as_json = kit.assert_tool_error(await session.call_tool("fail", {"error": error, "output_format": "json"}))
    assert markdown == f"Error: {message}"
    assert json.loads(as_json) == {"error": message}
    assert message not in failing_server.log_text(), "an error for the caller is not logged as a failure"


async def test_an_unexpected_exception_is_one_line_and_its_traceback_stays_in_the_log(failing_server, kit) -> None:
    async with kit.http_session(failing_server.url) as session:
        text = kit.assert_tool_error(await session.call_tool("fail", {"error": "RuntimeError"}))
    assert text == "Error: internal error: RuntimeError: RuntimeError raised on purpose"
    log = failing_server.log_text()
    assert "tool fail failed" in log and "Traceback" in log and "RuntimeError: RuntimeError raised on purpose" in log
