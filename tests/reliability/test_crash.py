"""Crash safety: kill -9 at random points, reopen, restart; the index must end as a clean one would."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.integrity import check_integrity
from linkly_ls.core.tools import call_tool
from linkly_ls.core.store.writer_lock import WriterLock

from .conftest import BENCH, EMBEDDING_OFF, cli_env, linkly, write, write_config


@pytest.mark.slow
def test_killed_index_and_watch_runs_recover_to_what_a_clean_index_holds(tmp_path: Path, corpus: Path) -> None:
    """Five kill points (bench/crash_recovery.py runs twenty): about 40 s."""
    result = subprocess.run(
        [sys.executable, str(BENCH / "crash_recovery.py"), "--kills", "5", "--json", "--no-control",
         "--corpus", str(corpus), "--workdir", str(tmp_path)],
        capture_output=True, text=True, timeout=900,
    )
    assert result.stdout, result.stderr[-2000:]
    summary = json.loads(result.stdout)
    differences = {point["number"]: point["differences"] for point in summary["points"] if point["differences"]}
    assert summary["kill_points"] == 5 and summary["killed"] >= 4, summary["points"]
    assert summary["consistent_after_kill"] == 5, differences
    assert summary["recovered_identical"] == 5 and result.returncode == 0, differences


def _titles(engine: Engine, query: str) -> list[str]:
    return [hit["title"] for hit in call_tool(engine, "search", {"query": query}).to_json()["results"]]


def test_interrupted_work_is_finished_on_open_but_never_beside_another_writer(tmp_path: Path, make_engine) -> None:
    """A reader that opens the index while a writer holds the writer lock leaves pending work to it:
    flushing beside the writer could publish an older version of a document after the writer's newer one."""
    library = tmp_path / "library"
    write(library / "zebra.md", "# Zebra\n\nzebra crossing\n")
    data_dir = tmp_path / "data"
    interrupted = make_engine({"lib": library}, data_dir=data_dir)
    interrupted.indexer.flush = lambda wait_s=30.0: None  # the run dies after the catalog, before the keyword index
    interrupted.index()
    interrupted.close()
    writer = WriterLock(data_dir)
    assert writer.try_acquire()
    try:
        reader = Engine(Config(data_dir=data_dir, raw=EMBEDDING_OFF))
        try:
            assert len(reader.catalog.pending_keyword_work()[0]) == 1
            assert _titles(reader, "zebra") == []
        finally:
            reader.close()
    finally:
        writer.release()
    reopened = Engine(Config(data_dir=data_dir, raw=EMBEDDING_OFF))
    try:
        assert check_integrity(reopened.catalog, reopened.keyword).consistent
        assert _titles(reopened, "zebra") == ["Zebra"]
    finally:
        reopened.close()


def test_a_file_saved_while_watch_is_still_indexing_is_not_lost(tmp_path: Path, corpus: Path) -> None:
    """The first indexing walks the folders, then reads for seconds; the watches start only after it.
    A file saved in between raises no event, so `linkly watch` indexes once more when its watches are set."""
    library = tmp_path / "library"
    library.mkdir()
    shutil.copy2(corpus / "books/R/R-fullrefman.pdf", library / "slow.pdf")  # about 6 s of extraction
    env = cli_env(write_config(tmp_path / "config.toml", {"lib": library}), tmp_path / "data")
    watcher = subprocess.Popen([sys.executable, "-m", "linkly_ls.cli", "watch"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        time.sleep(3.0)
        saved = write(library / "saved-meanwhile.md", "# Meanwhile\n\nzeppelin words\n")
        for line in watcher.stdout:
            if line.startswith("watching"):
                break
        deadline = time.monotonic() + 20
        while str(saved) not in linkly(env, "search", "zeppelin", "--json").stdout:
            assert time.monotonic() < deadline, "the file saved during the first indexing was never indexed"
            time.sleep(0.3)
    finally:
        watcher.terminate()
        watcher.wait(10)
