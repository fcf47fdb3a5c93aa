"""The VS Code extension (`editors/vscode`) built, packaged and run in a real VS Code.

The chain, in order: `npm ci` (skipped while node_modules matches package-lock.json),
`tsc --noEmit`, the esbuild bundle, `vsce package --no-dependencies`, then
`test/run-code-server.mjs`: VS Code 1.139 (code-server) on 127.0.0.1 shown in headless
Chromium, first with the mocha suite in the extension host, then a UI smoke test in the
normal workbench that installs the .vsix, searches, opens a PDF from the explorer as its
`linkly:` view and takes a screenshot of the Outline view.

Tools: Node.js >= 20 and npm (the machine's); the build tools from package-lock.json (`npm ci`);
code-server 4.139.1 and Node 24.22.3 from the npm registry (pinned in `test/toolchain.mjs`),
installed once into `~/.cache/linkly-test/vscode/code-server-<version>/` and `node-<version>/`
(`LINKLY_TEST_CACHE` moves them; about five minutes and 800 MB cold); Debian's chromium
(`apt-get install chromium`, done by the runner as root). A tool that is missing or cannot be
installed skips the tests with the reason, or fails them with LINKLY_REQUIRE_EDITORS=1.

The server is this Python's `python -m linkly_ls` (setting `linkly.server.python`).
The screenshot goes to a temporary folder; it is copied to `docs/vscode-outline.png` when
that file does not exist yet or `LINKLY_UPDATE_SCREENSHOTS=1`.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support import toolchain

pytestmark = pytest.mark.network

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editors" / "vscode"
SCREENSHOT = REPO / "docs" / "vscode-outline.png"
VSIX = EXTENSION / "linkly-vscode.vsix"
STAMP = EXTENSION / "node_modules" / ".linkly-package-lock.sha256"
MIN_NODE_MAJOR = 20
#: test/toolchain.mjs exits with this when a tool is missing and cannot be installed here
TOOL_MISSING_EXIT = 3


def run(
    command: list[str], timeout: float, what: str, env: dict[str, str] | None = None, missing_tool: int | None = None
) -> str:
    """Run a command in editors/vscode; fail the test with its output's tail when it fails.

    An exit status of `missing_tool` means a tool could not be installed: the test is skipped
    (or failed with LINKLY_REQUIRE_EDITORS=1) with the command's last lines as the reason.
    """
    try:
        done = subprocess.run(
            command,
            cwd=EXTENSION,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as error:
        output = error.stdout if isinstance(error.stdout, str) else (error.stdout or b"").decode(errors="replace")
        pytest.fail(f"{what}: `{' '.join(command)}` did not finish in {timeout:.0f} s\n{output[-6000:]}", pytrace=False)
    except FileNotFoundError as error:
        pytest.fail(f"{what}: cannot run `{command[0]}`: {error}", pytrace=False)
    if missing_tool is not None and done.returncode == missing_tool:
        lines = [line for line in done.stdout.strip().splitlines() if "complete log" not in line]
        toolchain.tool_unavailable(f"{what}: {' '.join(lines[-3:])}")
    if done.returncode != 0:
        pytest.fail(
            f"{what}: `{' '.join(command)}` exited with {done.returncode}\n{done.stdout[-12000:]}", pytrace=False
        )
    return done.stdout


def tool(name: str) -> str:
    return toolchain.command(
        name, f"the VS Code extension needs Node.js >= {MIN_NODE_MAJOR} and npm (e.g. Debian/NodeSource package `nodejs`)"
    )


@pytest.fixture(scope="module")
def node() -> str:
    node = tool("node")
    version = run([node, "--version"], 30, "node --version").strip()
    match = re.match(r"v(\d+)\.", version)
    if not match or int(match.group(1)) < MIN_NODE_MAJOR:
        toolchain.tool_unavailable(f"Node.js {version} is too old: the extension's build tools need Node.js >= {MIN_NODE_MAJOR}")
    return node


@pytest.fixture(scope="module")
def built(node: str) -> Path:
    """npm ci (when the lock changed), type check, bundle and package; returns the .vsix."""
    npm = tool("npm")
    digest = hashlib.sha256((EXTENSION / "package-lock.json").read_bytes()).hexdigest()
    if not STAMP.exists() or STAMP.read_text().strip() != digest:
        # npm exits 1 whatever it could not fetch or build: the extension's build tools are missing
        run([npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"], 900, "npm ci", missing_tool=1)
        STAMP.write_text(digest + "\n")
    run([node, "node_modules/typescript/bin/tsc", "--noEmit", "-p", "."], 300, "type check (extension)")
    run([node, "node_modules/typescript/bin/tsc", "--noEmit", "-p", "test"], 300, "type check (tests)")
    run([node, "esbuild.mjs"], 120, "esbuild bundle")
    VSIX.unlink(missing_ok=True)
    # `vscode:prepublish` rebuilds out/extension.js minified: the tests below run what ships
    run(
        [node, "node_modules/@vscode/vsce/vsce", "package", "--no-dependencies", "--allow-missing-repository", "--out", VSIX.name],
        300,
        "vsce package",
    )
    assert VSIX.exists(), "vsce did not write the .vsix"
    # code-server, Node 24 and chromium, cached after the first run
    run([node, "test/toolchain.mjs"], 1800, "installing code-server, Node 24 and chromium", missing_tool=TOOL_MISSING_EXIT)
    return VSIX


def runner(node: str, *arguments: str, timeout: float) -> str:
    return run(
        [node, "test/run-code-server.mjs", "--python", sys.executable, *arguments],
        timeout,
        "VS Code run",
        env={**os.environ, "LINKLY_PYTHON": sys.executable},
    )


def test_extension_host_suite(node: str, built: Path) -> None:
    """The mocha suite in VS Code's extension host against the real server."""
    output = runner(node, "--mode", "tests", timeout=420)
    summary = re.search(r"extension-host tests: (\d+) passed, (\d+) failed", output)
    assert summary, output[-4000:]
    assert int(summary.group(1)) >= 19 and summary.group(2) == "0", output[-4000:]


def test_ui_outline_of_a_pdf(node: str, built: Path, tmp_path: Path) -> None:
    """The normal workbench: search from F1, a PDF opened as text from the explorer, its Outline."""
    shot = tmp_path / "vscode-outline.png"
    output = runner(node, "--mode", "ui", "--vsix", str(built), "--screenshot", str(shot), timeout=300)
    assert "outline: Foo, Bar, Baz, Foo, Bar, Baz, Foo, Bar, Baz" in output, output[-4000:]
    assert shot.stat().st_size > 20_000, "the screenshot is suspiciously small"
    if not SCREENSHOT.exists() or os.environ.get("LINKLY_UPDATE_SCREENSHOTS") == "1":
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, SCREENSHOT)
