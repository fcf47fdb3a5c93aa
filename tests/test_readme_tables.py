"""The README's CLI and editor-command tables say what the tool registry declares.

Both tables are written for people (grouped flags, defaults, limits), so they
are not generated; this test keeps them from drifting: every tool with a CLI
shape has a row naming each of its flags, every tool with an editor command a
row naming each of its parameters, and neither table names a tool that is gone.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linkly_ls.core.tools import REGISTRY, Tool
from linkly_ls.core.tools.registry import FORMAT_PROPERTY

README = Path(__file__).resolve().parents[1] / "README.md"


def section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n{title}\n")
    following = re.search(r"\n#{2,3} ", text[start + len(title) + 2 :])
    return text[start : start + len(title) + 2 + (following.start() if following else len(text))]


def table_rows(text: str) -> dict[str, str]:
    """The first cell's leading code span (e.g. `linkly search`, `linkly.search`) -> the whole row."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        found = re.match(r"^\| `([^`]+)`", line)
        if found:
            rows[found.group(1)] = line
    return rows


def arguments(tool: Tool) -> list[str]:
    return [name for name in tool.properties if name != FORMAT_PROPERTY]


CLI_ROWS = table_rows(section("## The CLI"))
COMMAND_ROWS = table_rows(section("### Commands (`workspace/executeCommand`)"))


@pytest.mark.parametrize("tool", REGISTRY.cli_tools(), ids=lambda tool: tool.name)
def test_the_cli_table_names_every_flag_of_each_tool(tool: Tool) -> None:
    assert tool.cli is not None
    row = next((row for cell, row in CLI_ROWS.items() if cell.split(" [")[0].split(" ")[:2] == ["linkly", tool.cli.command]), None)
    assert row is not None, f"README's CLI table has no row for `linkly {tool.cli.command}`"
    for name in arguments(tool):
        if name in tool.cli.positionals:
            continue
        options = tool.cli.option_strings(name)
        assert any(re.search(rf"{re.escape(option)}(?![\w-])", row) for option in options), (
            f"README's `linkly {tool.cli.command}` row does not name {' or '.join(options)}"
        )


@pytest.mark.parametrize("tool", REGISTRY.lsp_tools(), ids=lambda tool: tool.name)
def test_the_command_table_names_every_parameter_of_each_tool(tool: Tool) -> None:
    row = COMMAND_ROWS.get(tool.lsp_command or "")
    assert row is not None, f"README's command table has no row for `{tool.lsp_command}`"
    argument_cell = re.split(r"(?<!\\)\|", row)[2]
    for name in arguments(tool):
        assert re.search(rf"\b{name}\b", argument_cell), f"README's `{tool.lsp_command}` row does not name `{name}`"


def test_neither_table_names_a_tool_the_registry_does_not_have() -> None:
    cli_commands = {tool.cli.command for tool in REGISTRY.cli_tools() if tool.cli}
    by_hand = {"index", "status", "remove-library", "watch", "serve", "mcp", "--remote"}
    listed = {cell.split(" ")[1] for cell in CLI_ROWS if cell.startswith("linkly ")}
    assert listed - cli_commands - by_hand == set()
    lsp_commands = {tool.lsp_command for tool in REGISTRY.lsp_tools()}
    assert set(COMMAND_ROWS) - lsp_commands - {"linkly.reindex", "linkly.removeLibrary"} == set()


def test_the_mcp_section_names_every_tool_the_server_lists() -> None:
    text = section("## Use it from AI agents (MCP)")
    example = re.search(r"^tools = (\[.*\])$", section("### Configuration: the `[mcp]` table"), re.M)
    assert example is not None and re.findall(r'"(\w+)"', example.group(1)) == list(REGISTRY.names())
    for name in REGISTRY.names():
        assert f"`{name}`" in text, f"README's MCP section does not name `{name}`"
