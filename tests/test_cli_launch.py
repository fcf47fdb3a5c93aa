"""The `linkly` entry point (Linux: the fork server's libraries are read from /proc): which command starts the workers' fork server before the CLI is imported."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from linkly_ls.cli import build_parser
from linkly_ls.cli_launch import GLOBAL_OPTIONS_WITH_VALUE, command_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: runs the entry point as the console script does, then prints the fork server's state
PROBE = """
import json, sys
from multiprocessing import forkserver
from linkly_ls import cli_launch
code = cli_launch.main(sys.argv[1:])
pid = forkserver._forkserver._forkserver_pid
maps = open(f"/proc/{pid}/maps").read() if pid else ""
print(json.dumps({"code": code, "started": pid is not None, "lxml_loaded": "/lxml/" in maps}))
"""


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["index", "notes"], "index"),
        (["--config", "index", "search", "index"], "search"),
        (["--config=c.toml", "index"], "index"),
        (["--remote", "desk", "search", "index"], "search"),
        (["search", "index"], "search"),
        (["--version"], None),
        ([], None),
    ],
)
def test_command_of_skips_global_options_and_their_values(args, command):
    assert command_of(args) == command


def test_global_options_with_a_value_are_the_parsers():
    taking_a_value = {
        option
        for action in build_parser()._actions
        if action.option_strings and action.nargs != 0 and not action.dest == "command"
        for option in action.option_strings
    }
    assert taking_a_value == set(GLOBAL_OPTIONS_WITH_VALUE)


def _launch(tmp_path: Path, *args: str) -> dict:
    env = dict(os.environ, LINKLY_DATA_DIR=str(tmp_path / "data"), LINKLY_CONFIG=str(tmp_path / "config.toml"))
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads the fork server's libraries from /proc")
def test_index_starts_the_fork_server_with_every_extractor_and_indexes(tmp_path):
    library = tmp_path / "library"
    library.mkdir()
    for source in (FIXTURES / "notes/rust/ch04-01-what-is-ownership.md", FIXTURES / "papers/multicolumn.pdf"):
        (library / source.name).write_bytes(source.read_bytes())
    state = _launch(tmp_path, "index", str(library), "--library", "lib")
    assert state["code"] == 0 and state["started"]
    # the fork server imported the DOCX reader (and its lxml), which neither file of the run needs
    assert state["lxml_loaded"]
    searched = _launch(tmp_path, "search", "ownership")
    assert searched["code"] == 0 and not searched["started"]

