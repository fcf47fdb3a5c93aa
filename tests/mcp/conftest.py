"""Real servers for the MCP tests: `linkly serve` subprocesses over a temporary library.

The library is a copy of a few files from the repository's fixtures and of
corpus files kept in tests/data. Servers are started once per module; clients
are the official `mcp` SDK's, over HTTP and stdio.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
DATA = REPO / "tests" / "data"
SERVER_START_TIMEOUT_S = 60.0  # a deadline: a server starts in seconds, later on a busy machine
INDEX_TIMEOUT_S = 60.0


def _has_extractor(module: str) -> bool:
    return importlib.util.find_spec(f"linkly_ls.core.extract.{module}") is not None


def library_sources(minimal: bool = False) -> list[tuple[Path, str]]:
    """(source file, folder inside the library) pairs; formats whose extractor exists yet.

    `minimal` keeps to Markdown and text, which index in a blink, for tests about the process.
    """
    sources = [
        (FIXTURES / "notes/rust/ch04-01-what-is-ownership.md", "notes/rust"),
        (FIXTURES / "notes/rust/ch03-05-control-flow.md", "notes/rust"),
        (FIXTURES / "notes/rust/ch05-01-defining-structs.md", "notes/rust"),
        (FIXTURES / "reference/social-contract.txt", "reference"),
        (DATA / "ch03-02-data-types.md", "Notion-Export-c58e430f/rust"),
        (DATA / "grep.1.txt", "reference/man"),
    ]
    if minimal:
        return sources
    if _has_extractor("html"):
        sources.append((DATA / "pathlib.html", "web/python"))
    if _has_extractor("pdf"):
        sources.append((FIXTURES / "papers/pdflatex-outline.pdf", "papers"))
    if _has_extractor("docx"):
        sources.append((FIXTURES / "documents/dpkg cheat sheet.docx", "documents"))
    return sources


@dataclass
class LinklyHome:
    """A config file, a data dir and a library folder in a temporary directory."""

    root: Path
    mcp: dict[str, Any] = field(default_factory=dict)
    #: how many documents the library holds
    documents: int = 0
    #: whether the server computes chunk vectors (the bundled embedding model) besides the keyword index
    embedding: bool = True

    @property
    def library(self) -> Path:
        return self.root / "library"

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def config_path(self) -> Path:
        return self.root / "config.toml"

    @property
    def runtime_file(self) -> Path:
        return self.data_dir / "mcp-server.json"

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(LINKLY_CONFIG=str(self.config_path), LINKLY_DATA_DIR=str(self.data_dir), PYTHONUNBUFFERED="1")
        env.pop("LINKLY_MCP_TOKEN", None)
        return env

    def write_config(self) -> None:
        lines = ["[[library]]", 'name = "notes"', 'description = "MCP test library"', f"paths = [{json.dumps(str(self.library))}]"]
        if not self.embedding:
            lines += ["", "[embedding]", 'model = "off"']
        if self.mcp:
            lines += ["", "[mcp]"] + [f"{key} = {json.dumps(value)}" for key, value in self.mcp.items()]
        self.config_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def make_home(root: Path, mcp: dict[str, Any] | None = None, minimal: bool = False) -> LinklyHome:
    """A home over a copy of the library; `minimal`: Markdown and text only and no embedding model,
    for tests about the server process rather than about ranking."""
    home = LinklyHome(root=root, mcp=dict(mcp or {}), documents=len(library_sources(minimal)), embedding=not minimal)
    for source, folder in library_sources(minimal):
        target = home.library / folder
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / source.name)
    home.write_config()
    return home


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ServerProcess:
    """`python -m linkly_ls.cli serve` as a real subprocess, its output collected by threads."""

    def __init__(self, home: LinklyHome, *args: str) -> None:
        self.home = home
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "linkly_ls.cli", "serve", *args],
            env=home.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stdout_lines: queue.Queue[str] = queue.Queue()
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        threading.Thread(target=self._drain, args=(self.process.stdout, self.stdout, self.stdout_lines), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stderr, self.stderr, None), daemon=True).start()
        self.url = ""

    @staticmethod
    def _drain(stream: Any, sink: list[str], lines: queue.Queue[str] | None) -> None:
        for line in stream:
            sink.append(line)
            if lines is not None:
                lines.put(line)

    def wait_listening(self, timeout: float = SERVER_START_TIMEOUT_S) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.stdout_lines.get(timeout=0.1)
            except queue.Empty:
                if self.process.poll() is not None:
                    break
                continue
            match = re.match(r"MCP server listening on (\S+)", line)
            if match:
                self.url = match.group(1)
                return self.url
        raise AssertionError(f"server did not start; stdout={''.join(self.stdout)!r} stderr={''.join(self.stderr)!r}")

    def wait_output(self, fragment: str, timeout: float = SERVER_START_TIMEOUT_S) -> str:
        """All stdout so far, once it contains `fragment`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = "".join(self.stdout)
            if fragment in text:
                return text
            time.sleep(0.02)
        raise AssertionError(f"{fragment!r} not printed; stdout={''.join(self.stdout)!r}")

    def stop(self, timeout: float = 20.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(5)
            raise AssertionError(f"server ignored SIGTERM; stderr={''.join(self.stderr)!r}") from None


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None) -> AsyncIterator[ClientSession]:
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def stdio_session(home: LinklyHome, *args: str) -> AsyncIterator[ClientSession]:
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "linkly_ls.cli", "mcp", *args], env=home.env(), cwd=str(home.root)
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def wait_indexed(session: ClientSession, expected_documents: int, timeout: float = INDEX_TIMEOUT_S) -> dict:
    """Poll list_libraries until the first indexing is over; returns its payload."""
    deadline = time.monotonic() + timeout
    payload: dict = {}
    while time.monotonic() < deadline:
        result = await session.call_tool("list_libraries", {})
        assert not result.is_error, result.content[0].text
        payload = result.structured_content
        counts = sum(library["document_count"] + library["failed_count"] for library in payload["libraries"])
        if "indexing" not in payload["_meta"] and counts >= expected_documents:
            return payload
        await anyio.sleep(0.1)
    raise AssertionError(f"indexing did not finish in {timeout} s: {payload}")


def assert_recent(now: str) -> None:
    moment = datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert abs(datetime.now(UTC) - moment) < timedelta(minutes=2), now


def assert_success(result: Any) -> dict:
    """A success: not an error, `_meta.now` in the text, the structured payload and the result meta."""
    assert not result.is_error, result.content[0].text
    text = result.content[0].text
    payload = result.structured_content
    now = payload["_meta"]["now"]
    assert_recent(now)
    assert text.endswith(f"[meta] now={now}") or json.loads(text)["_meta"]["now"] == now
    assert result.meta == {"now": now}
    return payload


def assert_tool_error(result: Any, *fragments: str) -> str:
    """A tool error: `is_error`, the fragments in its message, and no metadata anywhere."""
    assert result.is_error
    text = result.content[0].text
    for fragment in fragments:
        assert fragment in text, text
    assert result.structured_content is None
    assert not result.meta
    assert "now=" not in text and "_meta" not in text and "Traceback" not in text
    return text


@dataclass
class RunningServer:
    home: LinklyHome
    server: ServerProcess
    url: str
    documents: int


def start_indexed_server(root: Path, mcp: dict[str, Any] | None = None, *args: str, minimal: bool = False) -> RunningServer:
    home = make_home(root, mcp, minimal)
    server = ServerProcess(home, "--port", str(free_port()), *args)
    url = server.wait_listening()
    headers = {"Authorization": f"Bearer {home.mcp['token']}"} if home.mcp.get("token") else None

    async def wait() -> None:
        async with http_session(url, headers) as session:
            await wait_indexed(session, home.documents)

    anyio.run(wait)
    return RunningServer(home=home, server=server, url=url, documents=home.documents)


@pytest.fixture(scope="module")
def server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., RunningServer]]:
    """server_factory(mcp settings, *serve args) -> an indexed running server, stopped with the module."""
    started: list[RunningServer] = []

    def start(mcp: dict[str, Any] | None = None, *args: str, minimal: bool = False) -> RunningServer:
        running = start_indexed_server(tmp_path_factory.mktemp("server"), mcp, *args, minimal=minimal)
        started.append(running)
        return running

    yield start
    for running in started:
        assert running.server.stop() == 0, "".join(running.server.stderr)
        assert not running.home.runtime_file.exists(), "the runtime file outlived the server"


@pytest.fixture(scope="module")
def served(server_factory: Callable[..., RunningServer]) -> RunningServer:
    """A `linkly serve` with default [mcp] settings over an indexed temporary library."""
    return server_factory()


@pytest.fixture
def home_factory(tmp_path: Path) -> Callable[..., LinklyHome]:
    """home_factory(mcp settings) -> a fresh config, data dir and library copy."""

    def build(mcp: dict[str, Any] | None = None, minimal: bool = False) -> LinklyHome:
        return make_home(tmp_path / f"home-{len(list(tmp_path.iterdir()))}", mcp, minimal)

    return build


@pytest.fixture(scope="session")
def kit() -> SimpleNamespace:
    """The helpers above, for test modules (conftest is not importable under importlib mode)."""
    return SimpleNamespace(
        http_session=http_session,
        stdio_session=stdio_session,
        wait_indexed=wait_indexed,
        ServerProcess=ServerProcess,
        free_port=free_port,
        library_sources=library_sources,
        make_home=make_home,
        assert_success=assert_success,
        assert_tool_error=assert_tool_error,
    )
