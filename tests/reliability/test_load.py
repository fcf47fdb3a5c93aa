"""Load: sixteen MCP clients at once against one `linkly serve` while files change (bench/load_mcp.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import BENCH


@pytest.mark.slow
@pytest.mark.corpus("corpus")  # bench/load_mcp.py reads ../shared/corpus itself
def test_sixteen_clients_get_only_good_answers_while_the_library_changes(tmp_path: Path) -> None:
    """16 clients x 30 mixed calls, a writer thread changing files throughout: no error. About 15 s.

    How fast is `bench/load_mcp.py`'s figure (README, Performance); here the budget only ends a hung
    run, so that a busy machine is not taken for an error."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "load_mcp.py"), "--clients", "16", "--calls", "30", "--change-pace", "0.1",
         "--budget", "300", "--json", "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=420,
    )
    assert result.stdout, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    assert summary["errors"] == 0 and result.returncode == 0, summary["first_errors"]
    assert summary["total_calls"] == 16 * 30
    assert summary["file_changes"] > 0 and summary["reindex_batches"] > 0, summary
