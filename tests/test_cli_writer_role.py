"""`linkly index` while another process holds the index's writer role."""

from __future__ import annotations

import subprocess
import sys

import test_cli

env = test_cli.env  # the library the CLI tests index, as this module's fixture


def test_linkly_index_waits_for_another_linkly_index_run_instead_of_failing(env):
    """Two `linkly index` runs of different libraries started together: the second exited with status 1."""
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from linkly_ls.core.config import load_config;"
         "from linkly_ls.core.engine import Engine; from linkly_ls.core.indexing.writer import IndexWriter;"
         "writer = IndexWriter(Engine(load_config()), one_run=True); writer.claim(); print('held', flush=True);"
         "sys.stdin.read()"],
        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        waiting = subprocess.Popen(
            [sys.executable, "-m", "linkly_ls.cli", "index", "--library", "rust"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert waiting.stderr is not None
        line = waiting.stderr.readline()
        assert line.startswith(f"waiting: another linkly process (pid {holder.pid}) (a `linkly index`"), line
        assert " run) is " in line and "this run starts when it ends" in line
        assert line.rstrip().endswith("(Ctrl-C to give up)") and waiting.poll() is None
        holder.stdin.close()  # the other run ends: this one takes its turn
        out, err = waiting.communicate(timeout=120)
        assert waiting.returncode == 0, err
        assert "rust:" in out
    finally:
        holder.kill()
        holder.wait()
