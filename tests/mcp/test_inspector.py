"""A third-party client: the MCP Inspector's CLI mode (Node), over HTTP and over stdio.

The Inspector is installed once into ~/.cache/linkly-test/inspector with npm.
Skipped only when node or npm is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector"
CACHE = Path.home() / ".cache" / "linkly-test" / "inspector"
TEN_TOOLS = [
    "search", "outline", "grep", "read", "list_libraries", "explore", "find_paths", "links", "related", "index_library"
]


@pytest.fixture(scope="module")
def inspector() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed: the MCP Inspector (a Node program) cannot run here")
    binary = CACHE / "node_modules" / ".bin" / "mcp-inspector"
    if not binary.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        installed = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), INSPECTOR_PACKAGE],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert installed.returncode == 0 and binary.exists(), f"npm could not install {INSPECTOR_PACKAGE}: {installed.stderr}"
    return binary


@pytest.fixture(scope="module")
def inspected(server_factory):
    return server_factory(minimal=True)


def run_inspector(binary: Path, tmp_path: Path, *args: str, returncode: int = 0) -> dict:
    """Run the Inspector CLI; it prints the JSON result and exits 5 when a tool returned isError."""
    completed = subprocess.run(
        [str(binary), "--cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "MCP_CATALOG_PATH": str(tmp_path / "inspector-catalog.json")},
    )
    assert completed.returncode == returncode, completed.stderr + completed.stdout
    return json.loads(completed.stdout)


def test_inspector_lists_and_calls_tools_over_http(inspector, inspected, tmp_path) -> None:
    listed = run_inspector(inspector, tmp_path, inspected.url, "--transport", "http", "--method", "tools/list")
    assert [tool["name"] for tool in listed["tools"]] == TEN_TOOLS
    called = run_inspector(
        inspector,
        tmp_path,
        inspected.url,
        "--transport",
        "http",
        "--method",
        "tools/call",
        "--tool-name",
        "search",
        "--tool-arg",
        "query=ownership heap",
        "--tool-arg",
        "limit=2",
    )
    assert called["structuredContent"]["results"][0]["title"] == "What Is Ownership?"
    assert called["content"][0]["text"].endswith(f"[meta] now={called['_meta']['now']}")
    assert not called.get("isError")


def test_inspector_over_stdio_reaches_the_same_index(inspector, inspected, tmp_path) -> None:
    command = [sys.executable, "-m", "linkly_ls.cli", "mcp"]
    for key, value in inspected.home.env().items():
        if key.startswith("LINKLY_"):
            command += ["-e", f"{key}={value}"]
    found = run_inspector(
        inspector, tmp_path, *command, "--method", "tools/call", "--tool-name", "grep",
        "--tool-arg", "pattern=^#+ Ownership Rules", "--tool-arg", f"doc_id={_ownership_id(inspected)}",
    )
    assert found["structuredContent"]["total_matches"] == 1
    failed = run_inspector(
        inspector, tmp_path, *command, "--method", "tools/call", "--tool-name", "read",
        "--tool-arg", "doc_id=../../etc/passwd", returncode=5,
    )
    assert failed["isError"] is True
    assert "document id" in failed["content"][0]["text"] and "_meta" not in failed


def _ownership_id(inspected) -> str:
    from linkly_ls.core.store.catalog import make_doc_id

    return make_doc_id(str(inspected.home.library / "notes/rust/ch04-01-what-is-ownership.md"))
