"""`linkly status` when the config file cannot be read: it still describes the index."""

from __future__ import annotations

import json

from test_cli import fresh_env, run


def test_status_describes_the_index_and_says_why_the_config_file_cannot_be_read(tmp_path):
    """It exited with status 2 on a typo in the config file, while a server went on with what it had read:
    the one command that tells what runs could not say."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nwombat\n", encoding="utf-8")
    env = fresh_env(tmp_path, f'[[library]]\nname = "notes"\npaths = ["{notes}"]\n\n[embedding]\nmodel = "none"\n')
    assert run(env, "index").returncode == 0
    (tmp_path / "config.toml").write_text('[[library]]\nname = "notes"\npaths = [\n', encoding="utf-8")
    result = run(env, "status", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["config_error"].startswith(f"cannot parse config file {tmp_path / 'config.toml'}")
    assert [library["name"] for library in data["libraries"]] == ["notes"] and data["documents"] == 1
    assert "note" not in data["libraries"][0], "an unreadable file says nothing of what it defines"
    text = run(env, "status").stdout
    assert "- config: cannot parse config file" in text and "| notes | 1 |" in text
    other = tmp_path / "other"
    other.mkdir()
    elsewhere = fresh_env(other, "[broken\n")  # and no index where the data dir would be: nothing to describe
    elsewhere["LINKLY_DATA_DIR"] = str(tmp_path / "no-such-index")
    refused = run(elsewhere, "status")
    assert refused.returncode == 2 and "cannot parse config file" in refused.stderr
    assert not (tmp_path / "no-such-index").exists()


def test_a_run_killed_half_way_is_named_until_a_run_ends(tmp_path):
    """After `kill -9` of `linkly index`, status showed the library as whole, short of the files never read."""
    import signal
    import subprocess
    import sys
    import time

    notes = tmp_path / "notes"
    notes.mkdir()
    for number in range(400):
        (notes / f"n{number:03}.md").write_text(f"# Note {number}\n\n" + "words of a note\n" * 200, encoding="utf-8")
    env = fresh_env(tmp_path, f'[[library]]\nname = "notes"\npaths = ["{notes}"]\n\n[embedding]\nmodel = "none"\n')
    killed = subprocess.Popen([sys.executable, "-m", "linkly_ls.cli", "index"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    marker = tmp_path / "data" / "unfinished-runs.json"
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline and killed.poll() is None:
        time.sleep(0.01)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    data = json.loads(run(env, "status", "--json").stdout)
    assert [entry["library"] for entry in data["unfinished_runs"]] == ["notes"]
    assert "the run started" in run(env, "status").stdout
    assert run(env, "index").returncode == 0
    data = json.loads(run(env, "status", "--json").stdout)
    assert data["unfinished_runs"] == [] and data["documents"] == 400 and not marker.exists()


def test_linkly_index_names_a_file_whose_content_is_another_format_than_its_name_says(tmp_path):
    """The file was read as what it is, with a warning only an editor's diagnostics showed."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "minutes.pdf").write_text("# Minutes\n\nThe budget was approved.\n", encoding="utf-8")
    env = fresh_env(tmp_path, '[embedding]\nmodel = "none"\n')
    result = run(env, "index", str(notes), "--library", "notes")
    assert result.returncode == 0, result.stderr
    assert f"misnamed: {notes / 'minutes.pdf'}: content is TXT, not what the .pdf name says; read as TXT" in result.stdout
