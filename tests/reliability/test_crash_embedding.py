"""Crash safety of the vectors: kill -9 `linkly index --wait` while it embeds, restart, compare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import BENCH


@pytest.mark.slow
def test_runs_killed_while_embedding_end_with_one_vector_per_chunk_and_clean_search(tmp_path: Path, corpus: Path) -> None:
    """Three kill points (bench/crash_embedding.py runs twenty): about 65 s with the bundled model."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "crash_embedding.py"), "--kills", "3", "--json", "--corpus", str(corpus),
         "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert result.stdout, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    differences = {point["number"]: point["differences"] for point in summary["points"] if point["differences"]}
    assert summary["kill_points"] == 3 and summary["killed"] == 3, summary["points"]
    assert all(point["in_embedding"] for point in summary["points"]), summary["points"]
    # one kill comes after rows were committed, so recovery starts from a partly saved index
    assert summary["killed_with_vectors_committed"] >= 1, summary["points"]
    assert summary["consistent"] == 3, differences
    assert summary["identical"] == 3 and result.returncode == 0, differences
