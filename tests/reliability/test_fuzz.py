"""The extraction fuzz harness, quick mode: hostile files fail alone, each with one clear line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import BENCH


@pytest.mark.slow
def test_mutated_documents_fail_alone_with_one_clear_error_each(tmp_path: Path, corpus: Path) -> None:
    """60 mutants (truncated, flipped, broken zips, zip bombs, deep nesting) and a control set: about 10 s."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "fuzz_extract.py"), "--quick", "--json", "--corpus", str(corpus),
         "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert result.stdout, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert result.returncode == 0 and not report["problems"], report["problems"]
    assert report["files"] == 60 and report["indexed"] + report["failed"] == 60
    assert report["crashes"] == 0 and report["hangs"] == 0, report["by_kind"]
    bombs = report["by_kind"]["zip_bomb"]
    assert bombs["files"] >= 1 and bombs.get("failed") == bombs["files"]
    assert {"deep_html", "deep_markdown_lists", "deep_docx"} <= set(report["by_kind"])
    assert report["max_worker_rss_mb"] < 1024, "a mutant made a worker hold more than 1 GB"
