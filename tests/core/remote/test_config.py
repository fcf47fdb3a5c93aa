"""`[[remote]]` tables: names, URLs that would leak a token, and where the token comes from."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from linkly_ls.core.config import ConfigError, load_config
from linkly_ls.core.remote.config import load_remotes


def remotes_from(tmp_path: Path, body: str, mode: int = 0o600):
    path = tmp_path / "config.toml"
    path.write_text(body, encoding="utf-8")
    path.chmod(mode)
    return load_remotes(load_config(path))


def test_a_remote_reads_its_token_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DESK_TOKEN", "secret-token-value-123")
    [remote] = remotes_from(
        tmp_path, '[[remote]]\nname = "desk"\nurl = "https://desk.example.org/mcp"\ntoken_env = "DESK_TOKEN"\n'
    )
    assert (remote.name, remote.url, remote.token, remote.timeout_s) == ("desk", "https://desk.example.org/mcp", "secret-token-value-123", 5.0)
    assert "secret-token-value-123" not in repr(remote)


def test_a_missing_token_variable_is_reported_on_use_not_at_load(tmp_path, monkeypatch):
    monkeypatch.delenv("NOT_SET_TOKEN", raising=False)
    [remote] = remotes_from(tmp_path, '[[remote]]\nname = "nas"\nurl = "http://127.0.0.1:9/mcp"\ntoken_env = "NOT_SET_TOKEN"\n')
    assert remote.token is None and "NOT_SET_TOKEN" in remote.token_problem


def test_plain_http_is_refused_off_loopback_unless_insecure_is_allowed(tmp_path):
    with pytest.raises(ConfigError, match="clear text"):
        remotes_from(tmp_path, '[[remote]]\nname = "nas"\nurl = "http://nas.local:60606/mcp"\n')
    [remote] = remotes_from(
        tmp_path, '[[remote]]\nname = "nas"\nurl = "http://nas.local:60606/mcp"\nallow_insecure = true\n'
    )
    assert remote.url == "http://nas.local:60606/mcp"
    for loopback in ("127.0.0.1", "localhost", "[::1]"):
        assert remotes_from(tmp_path, f'[[remote]]\nname = "t"\nurl = "http://{loopback}:1/mcp"\n')[0].name == "t"


@pytest.mark.parametrize(
    "body, message",
    [
        ('[[remote]]\nname = "local"\nurl = "https://a.example/mcp"\n', "not valid"),
        ('[[remote]]\nname = "a/b"\nurl = "https://a.example/mcp"\n', "not valid"),
        ('[[remote]]\nname = "a"\n', "url is required"),
        ('[[remote]]\nname = "a"\nurl = "ftp://a.example/mcp"\n', "http:// or https://"),
        ('[[remote]]\nname = "a"\nurl = "https://u:p@a.example/mcp"\n', "must not hold a user"),
        ('[[remote]]\nname = "a"\nurl = "https://a.example/mcp"\ntimeout_s = 0\n', "timeout_s must be a number of seconds above 0"),
        ('[[remote]]\nurl = "https://a.example/mcp"\n', r'a \[\[remote\]\] needs a name'),
        ('[[remote]]\nname = "a"\nurl = "https://a.example/mcp"\ncolour = 1\n', "unknown key"),
        ('[[remote]]\nname = "a"\nurl = "https://a.example/mcp"\n[[remote]]\nname = "a"\nurl = "https://b.example/mcp"\n', "twice"),
    ],
)
def test_bad_tables_are_refused_with_the_reason(tmp_path, body, message):
    with pytest.raises(ConfigError, match=message):
        remotes_from(tmp_path, body)


def test_a_token_in_a_file_others_can_read_is_warned_about_without_showing_it(tmp_path, caplog):
    body = '[[remote]]\nname = "a"\nurl = "https://a.example/mcp"\ntoken = "inline-token-0123456789"\n'
    with caplog.at_level(logging.WARNING, logger="linkly_ls.remote"):
        [remote] = remotes_from(tmp_path, body, mode=0o644)
    assert remote.token == "inline-token-0123456789"
    assert "other users can read" in caplog.text and "inline-token" not in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="linkly_ls.remote"):
        remotes_from(tmp_path, body, mode=0o600)
    assert caplog.text == ""


def test_a_remote_table_in_error_leaves_the_local_library_list_answering(tmp_path):
    """`list_libraries` (an agent's first call) failed with the remote's config error, though no remote was asked."""
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools import call_tool

    path = tmp_path / "config.toml"
    path.write_text(f'[index]\ndata_dir = "{tmp_path / "data"}"\n[[remote]]\nname = "nas"\nurl = "http://192.168.1.5:60606/mcp"\n', encoding="utf-8")
    engine = Engine(load_config(path))
    try:
        assert call_tool(engine, "list_libraries", {}).to_json() == {"libraries": []}
        with pytest.raises(ConfigError, match="clear text"):
            call_tool(engine, "list_libraries", {"remote": True})
    finally:
        engine.close()
