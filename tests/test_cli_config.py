"""The config file's tables as every command reads them: a typo is an error naming the file, whatever runs."""

from __future__ import annotations

import pytest

from test_cli import fresh_env, run


@pytest.mark.parametrize(
    "table, message",
    [
        ("[mcp]\nprot = 1\n", ": [mcp]: unknown key(s) prot (did you mean port?)"),
        ('[[remote]]\nname = "desk"\nurl = "https://desk.example.org/mcp"\ntokn = "a"\n', ": remote 'desk': unknown key(s) tokn (did you mean token?)"),
        ("[embedding]\nmodle = \"none\"\n", ": [embedding]: unknown key(s) modle (did you mean model?)"),
    ],
)
def test_an_unknown_key_of_any_table_stops_every_command(tmp_path, table, message):
    """`[mcp] prot = 1` or `[[remote]] tokn = ...` ran on the defaults until a server or a remote was used."""
    env = fresh_env(tmp_path, table)
    for command in (["status"], ["search", "rust"], ["list-libraries"]):
        result = run(env, *command)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert result.stderr.startswith(f"linkly: {tmp_path / 'config.toml'}{message}"), result.stderr
