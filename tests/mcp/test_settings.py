"""The [mcp] table: defaults, checks with clear messages, and what read_only and tools expose."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.config import ConfigError, load_config
from linkly_ls.mcp.settings import load_mcp_settings

ALL_TOOLS = (
    "search", "outline", "grep", "read", "list_libraries", "explore", "find_paths", "links", "related", "index_library"
)


def settings_from(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("LINKLY_MCP_TOKEN", raising=False)
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return load_mcp_settings(load_config(path))


def test_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(tmp_path, "", monkeypatch)
    assert (settings.host, settings.port, settings.read_only, settings.token) == ("127.0.0.1", 60606, False, None)
    assert settings.exposed_tools() == list(ALL_TOOLS)
    assert settings.max_request_bytes == 1 << 20 and settings.max_response_chars == 200_000
    assert settings.is_loopback


def test_read_only_hides_index_library_and_the_allowlist_keeps_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_from(tmp_path, '[mcp]\nread_only = true\ntools = ["read", "index_library", "search"]\n', monkeypatch)
    assert settings.exposed_tools() == ["search", "read"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('prot = 1', "unknown key(s) prot"),
        ('tools = ["search", "rm"]', "unknown tool(s) rm"),
        ('token = "short"', "at least 16 characters"),
        ("port = 70000", "port must be a port number"),
        ('read_only = "yes"', "read_only must be true or false"),
        ("max_response_chars = 10", "max_response_chars must be an integer of at least 1000"),
        ('allowed_origins = "https://x"', "allowed_origins must be a list of strings"),
    ],
)
def test_wrong_values_name_the_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        settings_from(tmp_path, f"[mcp]\n{table}\n", monkeypatch)


def test_the_environment_token_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[mcp]\nhost = "0.0.0.0"\ntoken = "from-the-config-file"\n', encoding="utf-8")
    monkeypatch.setenv("LINKLY_MCP_TOKEN", "from-the-environment-0123")
    settings = load_mcp_settings(load_config(path))
    assert settings.token == "from-the-environment-0123" and not settings.is_loopback
    assert settings.with_address(host="::1", port=7000).is_loopback


def test_a_short_environment_token_is_blamed_on_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was blamed on a config file's `[mcp]` table that did not exist."""
    path = tmp_path / "config.toml"
    path.write_text("", encoding="utf-8")
    monkeypatch.setenv("LINKLY_MCP_TOKEN", "short")
    with pytest.raises(ConfigError, match="^the LINKLY_MCP_TOKEN environment variable must be a string of at least 16"):
        load_mcp_settings(load_config(path))


def test_a_token_in_a_config_file_others_can_read_is_warned_about(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog) -> None:
    """A `[[remote]]` token in such a file was warned about, the server's own `[mcp] token` was not."""
    import logging

    caplog.set_level(logging.WARNING, logger="linkly_ls.mcp")
    settings_from(tmp_path, '[mcp]\ntoken = "a-secret-token-of-32-characters"\n', monkeypatch)
    caplog.clear()
    (tmp_path / "config.toml").chmod(0o644)
    settings = load_mcp_settings(load_config(tmp_path / "config.toml"))
    assert settings.token and "other users can read" in caplog.text and "a-secret-token" not in caplog.text
    caplog.clear()
    (tmp_path / "config.toml").chmod(0o600)
    load_mcp_settings(load_config(tmp_path / "config.toml"))
    assert "other users can read" not in caplog.text
