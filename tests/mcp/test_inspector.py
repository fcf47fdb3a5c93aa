"""A third-party client: the MCP Inspector's CLI mode (Node), over HTTP and over stdio.

The Inspector is pinned: tests/mcp/inspector/package.json names its exact version and
package-lock.json every dependency's. It is installed once with `npm ci` into
`~/.cache/linkly-test/inspector-<version>/` (`LINKLY_TEST_CACHE` moves it); a new version is a
change to those two files. Without node and npm, or when npm cannot install it, the tests are
skipped, or failed with LINKLY_REQUIRE_EDITORS=1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.toolchain import NpmPin, command, npm_install

pytestmark = pytest.mark.network

INSPECTOR = NpmPin("@modelcontextprotocol/inspector", Path(__file__).resolve().parent / "inspector")
TEN_TOOLS = [
    "search", "outline", "grep", "read", "list_libraries", "explore", "find_paths", "links", "related", "index_library"
]
#: the Inspector CLI's exit status when the tool it called answered with isError (2.x)
TOOL_ERROR_EXIT = 5


@pytest.fixture(scope="module")
def inspector() -> Path:
    command("node", "the MCP Inspector is a Node program (install Node.js and npm)")
    binary = npm_install(INSPECTOR, "inspector") / "node_modules" / ".bin" / "mcp-inspector"
    assert binary.exists(), f"{INSPECTOR.name}@{INSPECTOR.version} installed without {binary}"
    return binary


@pytest.fixture(scope="module")
def inspected(server_factory):
    return server_factory(minimal=True)


def run_inspector(binary: Path, tmp_path: Path, *args: str, returncode: int = 0) -> dict:
    """Run the Inspector CLI; it prints the JSON result and exits TOOL_ERROR_EXIT when a tool returned isError."""
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
    # JSON, not `--tool-arg doc_id=...`: the inspector turns a value of digits into a number, and
    # one document id in 300 is twelve digits (the id depends on the test's temporary path)
    arguments = json.dumps({"pattern": "^#+ Ownership Rules", "doc_id": _ownership_id(inspected)})
    found = run_inspector(
        inspector, tmp_path, *command, "--method", "tools/call", "--tool-name", "grep", "--tool-args-json", arguments,
    )
    assert found["structuredContent"]["total_matches"] == 1
    failed = run_inspector(
        inspector, tmp_path, *command, "--method", "tools/call", "--tool-name", "read",
        "--tool-arg", "doc_id=../../etc/passwd", returncode=TOOL_ERROR_EXIT,
    )
    assert failed["isError"] is True
    assert "document id" in failed["content"][0]["text"] and "_meta" not in failed


def _ownership_id(inspected) -> str:
    from linkly_ls.core.store.catalog import make_doc_id

    return make_doc_id(str(inspected.home.library / "notes/rust/ch04-01-what-is-ownership.md"))
