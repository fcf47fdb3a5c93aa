"""Crash safety: kill -9 at random points, reopen, restart; the index must end as a clean one would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.integrity import check_integrity
from linkly_ls.core.indexing.writer_status import INDEXING, read_activity
from linkly_ls.core.tools import call_tool
from linkly_ls.core.store.writer_lock import WriterLock

from .conftest import BENCH, EMBEDDING_OFF, cli_env, linkly, write, write_config
from .endless_pdf import endless_pdf


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


def test_a_file_saved_while_watch_is_still_indexing_is_not_lost(tmp_path: Path) -> None:
    """The first indexing walks the folders, then reads; the watches start only after it. A file
    saved in between raises no event, so `linkly watch` indexes once more when its watches are set.

    The first run reads a PDF that never finishes until its time limit stops it, and the file is
    saved once the run reports the walk done and the quick file read: in between, however fast or
    busy the machine."""
    library = tmp_path / "library"
    write(library / "quick.md", "# Quick\n\nsmall note\n")
    endless_pdf(library / "slow.pdf")
    data_dir = tmp_path / "data"
    env = cli_env(write_config(tmp_path / "config.toml", {"lib": library}, "extract_timeout_s = 15\n"), data_dir)
    watcher = subprocess.Popen([sys.executable, "-m", "linkly_ls.cli", "watch"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _reading_the_last_of(data_dir, watcher.pid, total=2):
            assert time.monotonic() < deadline and watcher.poll() is None, "the first indexing never got to the PDF"
            time.sleep(0.1)
        saved = write(library / "saved-meanwhile.md", "# Meanwhile\n\nzeppelin words\n")
        first_run = []
        for line in watcher.stdout:
            if line.startswith("watching"):
                break
            first_run.append(line)
        assert any(line.startswith("lib: 1 indexed, 0 unchanged, 1 failed") for line in first_run), first_run
        deadline = time.monotonic() + 60
        while str(saved) not in linkly(env, "search", "zeppelin", "--json").stdout:
            assert time.monotonic() < deadline, "the file saved during the first indexing was never indexed"
            time.sleep(0.3)
    finally:
        watcher.terminate()
        watcher.wait(10)


def _reading_the_last_of(data_dir: Path, pid: int, total: int) -> bool:
    """The writer's published status: indexing, the walk found `total` files, all but one are read."""
    activity = read_activity(data_dir, pid)
    if activity is None or activity.activity != INDEXING:
        return False
    return (activity.done, activity.total) == (total - 1, total)


def test_ctrl_c_during_index_says_one_line_and_no_worker_prints_a_traceback(tmp_path: Path) -> None:
    """The terminal sends SIGINT to the whole process group: the command and its extraction workers."""
    library = tmp_path / "library"
    paragraph = "Words of a long note, read by the workers in Python. " * 40 + "\n\n"
    for number in range(1500):  # seconds of work in the workers' Python code, where SIGINT raises at once
        write(library / f"note-{number}.md", f"# Note {number}\n\n" + paragraph * 25)
    env = cli_env(write_config(tmp_path / "config.toml", {"lib": library}), tmp_path / "data")
    process = subprocess.Popen(
        [sys.executable, "-m", "linkly_ls.cli", "index"], env=env, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # as a terminal starts it: a suite run in the background (`scripts/test &`) passes SIGINT on ignored,
        # and Python then raises no KeyboardInterrupt at all
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(2)
    assert process.poll() is None
    os.killpg(process.pid, signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, (stdout[-2000:], stderr[-2000:])
    assert stderr.strip() == "linkly: interrupted; run `linkly index` again to go on"
