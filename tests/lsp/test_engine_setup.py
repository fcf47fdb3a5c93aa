"""Opening the language server's engine: a wrong config file is ignored, and the user is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.lsp.engine_setup import close_engine, open_engine
from linkly_ls.lsp.settings import ServerSettings


@pytest.mark.parametrize(
    "body, named",
    [
        ("[limits]\norc = false\n", "unknown key(s) orc (did you mean ocr?)"),
        ("[embedding]\nmodle = 'none'\n", "unknown key(s) modle (did you mean model?)"),
    ],
)
def test_a_wrong_config_file_is_ignored_with_a_warning_the_user_sees(tmp_path: Path, monkeypatch, body: str, named: str):
    config = tmp_path / "config.toml"
    config.write_text(body, encoding="utf-8")
    monkeypatch.setenv("LINKLY_CONFIG", str(config))
    monkeypatch.setenv("LINKLY_DATA_DIR", str(tmp_path / "data"))
    workspace = tmp_path / "notes"
    workspace.mkdir()
    (workspace / "a.md").write_text("# A\n", encoding="utf-8")
    logged: list[str] = []
    shown: list[str] = []
    engine = open_engine(ServerSettings(), [workspace], logged.append, shown.append)
    try:
        assert len(shown) == 1 and shown[0].startswith("linkly-ls: ignoring the config file: ") and named in shown[0]
        assert [library.name for library in engine.libraries()] == ["notes"], "the workspace folder still serves"
        assert engine.data_dir == (tmp_path / "data").resolve()
    finally:
        close_engine(engine)


def test_a_home_folder_opened_as_the_workspace_is_left_out_with_a_warning_the_user_sees(tmp_path: Path, monkeypatch):
    """Neovim started from `~` on a notes folder without `.git`: nothing indexed, every link "not found",
    and the reason only in the log."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("LINKLY_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("LINKLY_DATA_DIR", str(tmp_path / "data"))
    logged: list[str] = []
    shown: list[str] = []
    engine = open_engine(ServerSettings(), [tmp_path], logged.append, shown.append)
    try:
        assert engine.libraries() == [] and logged == []
        assert len(shown) == 1 and "not indexing the workspace folder" in shown[0] and "your home or root folder" in shown[0]
    finally:
        close_engine(engine)
