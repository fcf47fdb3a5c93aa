"""What the language server loads before it can answer: only what `initialize` and the first requests use.

The MCP SDK, the embedding model, numpy, the file watcher and the extraction
code are loaded later, in the background (see `test_mcp_sidecar.py` and
`test_progress.py` for the sidecar and indexing coming up).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFERRED = [
    "mcp",
    "fastembed",
    "onnxruntime",
    "usearch",
    "numpy",
    "watchfiles",
    "fitz",
    "linkly_ls.core.indexing.indexer",
    "linkly_ls.core.indexing.workers",
    "linkly_ls.mcp",
]


def test_creating_the_server_loads_none_of_the_background_work():
    script = (
        "import json, sys\n"
        "from linkly_ls.lsp.app import create_server\n"
        "create_server()\n"
        f"print(json.dumps([name for name in {DEFERRED!r} if name in sys.modules]))\n"
    )
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO, timeout=120
    ).stdout
    assert json.loads(output.strip().splitlines()[-1]) == []
