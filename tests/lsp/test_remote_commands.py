"""The editor commands take remote library values and ids: a real language server, a real remote `linkly serve`."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

REPO = Path(__file__).resolve().parents[2]
TOKEN = "lsp-remote-token-0123456789"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_remote(root: Path) -> tuple[subprocess.Popen, str]:
    library = root / "library"
    library.mkdir(parents=True)
    shutil.copy2(REPO / "fixtures/notes/rust/ch04-01-what-is-ownership.md", library)
    config = root / "config.toml"
    config.write_text(
        f'[[library]]\nname = "books"\npaths = ["{library}"]\n[embedding]\nmodel = "none"\n[mcp]\ntoken = "{TOKEN}"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "LINKLY_CONFIG": str(config), "LINKLY_DATA_DIR": str(root / "data")}
    env.pop("LINKLY_MCP_TOKEN", None)
    subprocess.run([sys.executable, "-m", "linkly_ls.cli", "index"], env=env, check=True, capture_output=True)
    process = subprocess.Popen(
        [sys.executable, "-m", "linkly_ls.cli", "serve", "--port", str(_free_port()), "--no-watch"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    deadline = time.monotonic() + 60  # a deadline for a busy machine
    while time.monotonic() < deadline:
        match = re.match(r"MCP server listening on (\S+)", process.stdout.readline())
        if match:
            return process, match.group(1)
    process.kill()
    raise AssertionError("the remote server did not start")


@pytest.mark.asyncio
async def test_editor_commands_search_and_read_a_remote(tmp_path):
    remote, url = _serve_remote(tmp_path / "desk")
    config = tmp_path / "config.toml"
    config.write_text(f'[[remote]]\nname = "desk"\nurl = "{url}"\ntoken_env = "DESK_TOKEN"\n', encoding="utf-8")
    environment = {**os.environ, "LINKLY_CONFIG": str(config), "LINKLY_DATA_DIR": str(tmp_path / "index"), "DESK_TOKEN": TOKEN}
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "linkly_ls"], server_env=environment).start()
    try:
        client.set_configuration({"embeddingModel": "none", "mcp": {"enabled": False}}, section="linkly")
        await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("visual-studio-code")))

        async def command(name: str, argument: dict) -> dict:
            return await client.workspace_execute_command_async(types.ExecuteCommandParams(command=name, arguments=[argument]))

        found = await command("linkly.search", {"query": "ownership", "library": "cloud:///desk"})
        hit = found["results"][0]
        assert hit["doc_id"].startswith("desk:") and hit["server"] == "desk"
        assert found["remotes"] == [{"name": "desk", "ok": True, "error": None}]
        read = await command("linkly.read", {"doc_id": hit["doc_id"], "limit": 2})
        assert read["lines"][0] == {"line": 1, "text": "## What Is Ownership?"}
        libraries = await command("linkly.listLibraries", {"remote": True})
        assert [entry["name"] for entry in libraries["libraries"]] == ["cloud:///desk/books"]
        await client.shutdown_session()
    finally:
        await client.stop()
        remote.terminate()
        remote.wait(20)
