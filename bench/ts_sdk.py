"""The official TypeScript MCP SDK for the benchmarks, installed once into a cache keyed on its exact version."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

TS_SDK_PACKAGE = "@modelcontextprotocol/sdk"
TS_SDK_VERSION = "1.32.2"
TS_CACHE = Path.home() / ".cache" / "linkly-test" / f"mcp-sdk-{TS_SDK_VERSION}"


def ts_script(name: str, text: str) -> Path | None:
    """`text` as a Node script inside the cache (where Node finds the package); None without node and npm."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None
    if not (TS_CACHE / "node_modules" / TS_SDK_PACKAGE / "package.json").exists():
        TS_CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(TS_CACHE), f"{TS_SDK_PACKAGE}@{TS_SDK_VERSION}"],
            check=True, capture_output=True, text=True, timeout=600,
        )
    script = TS_CACHE / name
    script.write_text(text, encoding="utf-8")
    return script
