"""Another process holds the writer role: what a second process and its tools are told."""

from __future__ import annotations

import subprocess
import sys
import time

import anyio
import pytest

from linkly_ls.core.indexing.writer_status import STATUS_FILE_NAME

from .conftest import assert_tool_error, stdio_session


@pytest.fixture(scope="module")
def idle_writer(server_factory):
    """A `linkly serve --no-watch` that is the index's writer and has published that it does not watch."""
    running = server_factory(None, "--no-watch", minimal=True)
    status_file = running.home.data_dir / STATUS_FILE_NAME
    deadline = time.monotonic() + 30
    while '"idle"' not in (status_file.read_text(encoding="utf-8") if status_file.exists() else "") and time.monotonic() < deadline:
        time.sleep(0.05)
    return running


def cli(running, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", *args], env=running.home.env(), capture_output=True, text=True, timeout=120
    )


def test_the_cli_is_told_that_the_writer_does_not_watch_and_hears_of_a_bad_name_first(idle_writer):
    held = cli(idle_writer, "index")
    assert held.returncode == 1, held.stderr
    assert f"(pid {idle_writer.server.process.pid})" in held.stderr and "does not watch its folders" in held.stderr
    assert "re-indexes changed files itself" not in held.stderr
    unknown = cli(idle_writer, "index", "--library", "nope")
    assert unknown.returncode == 2 and "`library` 'nope' does not exist" in unknown.stderr, unknown.stderr
    empty = cli(idle_writer, "index", str(idle_writer.home.root), "--library", "")
    assert empty.returncode == 2 and "--library needs a name" in empty.stderr, empty.stderr


def test_index_library_names_the_writer_and_checks_its_arguments_first(home_factory):
    """`linkly mcp` with no server to relay to serves from its own process, which is not the writer here."""
    home = home_factory(None, minimal=True)
    home.data_dir.mkdir(parents=True, exist_ok=True)  # the holder is a linkly process, which made it
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from linkly_ls.core.store.writer_lock import WriterLock;"
         "lock = WriterLock(Path(sys.argv[1])); assert lock.try_acquire(); print('held', flush=True); sys.stdin.read()",
         str(home.data_dir)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"

        async def calls() -> tuple[str, str]:
            async with stdio_session(home) as session:
                held = assert_tool_error(await session.call_tool("index_library", {}), f"(pid {holder.pid})")
                unknown = assert_tool_error(await session.call_tool("index_library", {"library": "nope"}), "does not exist")
                return held, unknown

        held, unknown = anyio.run(calls)
    finally:
        holder.kill()
        holder.wait()
    assert "its own MCP server" in held and "or stop it" in held and "another linkly process" not in unknown
