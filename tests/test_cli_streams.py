"""The `linkly` command in scripts: empty option values, closed streams, commands that can be pasted."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from linkly_ls.core.tools.libraries import dropped_note

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def env(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("cli-streams")
    environment = {**os.environ, "LINKLY_DATA_DIR": str(home / "data"), "LINKLY_CONFIG": str(home / "config.toml")}
    (home / "config.toml").write_text('[embedding]\nmodel = "none"\n', encoding="utf-8")
    library = home / "notes"
    library.mkdir()
    for source in (FIXTURES / "notes" / "rust").glob("*.md"):
        (library / source.name).write_bytes(source.read_bytes())
    assert linkly(environment, "index", str(library), "--library", "rust").returncode == 0
    return environment


def linkly(env: dict, *args: str, **streams) -> subprocess.CompletedProcess:
    options = {"capture_output": True} if not streams else streams
    return subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", *args], env=env, text=True, timeout=300, **options
    )


@pytest.mark.parametrize("option", ["--library", "--type", "--path-glob", "--modified-after"])
def test_an_empty_option_value_is_refused_not_read_as_no_filter(env, option):
    result = linkly(env, "search", "ownership", option, "")
    assert result.returncode == 2 and "an empty value (an unset variable?)" in result.stderr
    assert result.stdout == ""


def test_a_number_takes_ascii_digits_only(env):
    assert linkly(env, "search", "ownership", "--limit", "١٢").returncode == 2
    assert linkly(env, "search", "ownership", "--limit", "2").returncode == 0


def test_a_closed_standard_output_is_an_error_not_a_silent_success(env):
    closed = linkly(env, "search", "ownership", stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, close_fds=True,
                    preexec_fn=lambda: os.close(1))
    assert closed.returncode == 1 and "standard output is closed" in closed.stderr


def test_with_standard_error_closed_an_error_never_lands_in_the_answer(env):
    result = linkly(env, "read", "000000000000", stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    preexec_fn=lambda: os.close(2))
    assert result.returncode == 1 and result.stdout == ""


def test_a_suggested_command_can_be_pasted_whatever_the_library_name():
    note = dropped_note("cfg lib")
    command = note.split("`")[1]
    assert shlex.split(command) == ["linkly", "remove-library", "cfg lib"]


def test_with_json_every_error_is_json_with_its_kind(env):
    import json

    cases = {
        ("search", "x", "--limit", "0", "--json"): ("argument", 2),
        ("search", "x", "--limit", "abc", "--json"): ("usage", 2),
        ("read", "000000000000", "--json"): ("unavailable", 1),
        ("search", "x", "--no-such-flag", "--json"): ("usage", 2),
    }
    for args, (kind, status) in cases.items():
        result = linkly(env, *args)
        error = json.loads(result.stderr)
        assert (error["kind"], result.returncode) == (kind, status) and error["error"], args
    plain = linkly(env, "search", "x", "--limit", "abc")
    assert plain.stderr.startswith("linkly: argument --limit")
