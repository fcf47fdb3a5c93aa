"""The tool registry: what it declares, what it refuses, and that every face is generated from it."""

from __future__ import annotations

import copy
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import pytest

from linkly_ls.cli import build_parser, main, report_error, tool_arguments
from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import REGISTRY, SCHEMAS, ArgumentError, CliShape, Tool, ToolRegistry, call_tool
from linkly_ls.core.tools.descriptions import SERVER_INSTRUCTIONS
from linkly_ls.core.tools.schema import OUTPUT_FORMAT
from linkly_ls.lsp.features import commands
from linkly_ls.lsp.server import LinklyLanguageServer
from linkly_ls.mcp.server import LocalBackend, tool_definitions
from linkly_ls.mcp.settings import McpSettings

TEN_TOOLS = (
    "search", "outline", "grep", "read", "list_libraries", "explore", "find_paths", "links", "related", "index_library"
)


@dataclass
class Tally:
    counts: list[tuple[str, int]]

    def to_json(self) -> dict[str, Any]:
        return {"words": [{"word": word, "count": count} for word, count in self.counts]}

    def to_markdown(self) -> str:
        return "\n".join(f"- {word}: {count}" for word, count in self.counts)


def tally(engine: Engine, **arguments: Any) -> Tally:
    """Count the words of `text`: a tool that needs no index, to show how the faces carry one."""
    words = arguments["text"].split()
    if arguments.get("ignore_case"):
        words = [word.lower() for word in words]
    if arguments.get("only"):
        words = [word for word in words if word in arguments["only"]]
    return Tally(Counter(words).most_common(arguments.get("top", 3)))


TALLY = Tool(
    name="tally",
    function=tally,
    input_schema={
        "type": "object",
        "properties": {
            "text": {"type": "string", "minLength": 1, "description": "The text whose words to count."},
            "top": {"type": "integer", "minimum": 1, "default": 3, "description": "How many words to list."},
            "only": {"type": "array", "items": {"type": "string"}, "description": "Count only these words."},
            "ignore_case": {"type": "boolean", "default": False, "description": "Fold case first."},
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    title="Tally words",
    description="Count the words of a text.",
    result_fields={"words": {"type": "array", "items": {"type": "object"}}},
    cli=CliShape("tally", "count the words of a text", positionals=("text",), flags={"top": ("-n", "--top")},
                 help_texts={"only": "words, comma-separated"}),
    lsp_command="linkly.tally",
)


@pytest.fixture
def engine(tmp_path: Path):
    engine = Engine(Config(data_dir=tmp_path / "data"))
    yield engine
    engine.close()


def test_the_ten_tools_are_declared_once_in_order() -> None:
    assert REGISTRY.names() == TEN_TOOLS
    for tool in REGISTRY:
        assert tool.input_schema is SCHEMAS[tool.name]
        assert tool.title and tool.description and tool.result_keys
    assert [tool.name for tool in REGISTRY if tool.writes] == ["index_library"]
    assert [tool.cli.command for tool in REGISTRY.cli_tools()] == [
        "search", "outline", "grep", "read", "list-libraries", "explore", "find-paths", "links", "related",
    ]
    assert [tool.lsp_command for tool in REGISTRY.lsp_tools()] == [
        "linkly.search", "linkly.outline", "linkly.grep", "linkly.read",
        "linkly.listLibraries", "linkly.explore", "linkly.findPaths", "linkly.links", "linkly.related",
    ]
    assert "search → grep or outline → read" in SERVER_INSTRUCTIONS


def test_the_output_schema_types_the_result_fields_and_meta() -> None:
    schema = REGISTRY.get("read").output_schema
    assert schema["type"] == "object" and "required" not in schema  # a cut answer keeps its short fields only
    assert list(schema["properties"]) == [*REGISTRY.get("read").result_keys, "truncated", "total_chars", "shown_chars", "_meta"]
    lines = schema["properties"]["lines"]
    assert lines["type"] == "array" and lines["items"]["properties"]["text"]["type"] == "string"
    assert schema["properties"]["next_offset"]["type"] == ["integer", "null"]
    assert schema["properties"]["_meta"]["properties"]["now"]["format"] == "date-time"
    for tool in REGISTRY:
        assert all(field.get("type") for field in tool.output_schema["properties"].values()), tool.name


def test_an_unknown_tool_is_an_argument_error(engine: Engine) -> None:
    with pytest.raises(ArgumentError, match=r"unknown tool 'nope'; tools: search, outline, .*, index_library$"):
        call_tool(engine, "nope", {})


def test_a_tool_registered_in_a_registry_appears_in_every_face(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = REGISTRY.with_tools(TALLY)
    assert registry.names() == (*TEN_TOOLS, "tally") and "tally" not in REGISTRY

    # the CLI: a subcommand, its arguments converted, dispatched by main
    args = build_parser(registry).parse_args(["tally", "a b A b c", "-n", "2", "--only", "a, b", "--ignore-case"])
    assert tool_arguments(TALLY, args) == {"text": "a b A b c", "top": 2, "only": ["a", "b"], "ignore_case": True}
    monkeypatch.setenv("LINKLY_DATA_DIR", str(tmp_path / "cli-data"))
    monkeypatch.setenv("LINKLY_CONFIG", str(tmp_path / "no-config.toml"))
    assert main(["tally", "x y x", "--json"], registry) == 0
    assert '"word": "x",\n      "count": 2' in capsys.readouterr().out
    with pytest.raises(SystemExit):
        build_parser().parse_args(["tally", "x"])
    assert "invalid choice: 'tally'" in capsys.readouterr().err

    # MCP: listed last with its schemas and annotations, and dispatched
    definitions = tool_definitions(McpSettings(tools=registry.names()), registry)
    listed = definitions[-1]
    assert (listed.name, listed.title, listed.description) == ("tally", "Tally words", "Count the words of a text.")
    assert listed.input_schema == TALLY.input_schema and list(listed.output_schema["properties"])[::4] == ["words", "_meta"]
    assert listed.annotations.read_only_hint is True
    assert [tool.name for tool in tool_definitions(McpSettings())] == list(TEN_TOOLS)
    backend = LocalBackend(engine, McpSettings(tools=registry.names()), registry=registry)
    answer = anyio.run(backend.call_tool, "tally", {"text": "b a b", "top": 1})
    assert not answer.is_error and answer.structured_content["words"] == [{"word": "b", "count": 2}]

    # the language server: one more workspace/executeCommand command
    server = LinklyLanguageServer()
    commands.register(server, registry)
    assert "linkly.tally" in server.protocol.fm.commands
    plain = LinklyLanguageServer()
    commands.register(plain)
    assert set(server.protocol.fm.commands) - set(plain.protocol.fm.commands) == {"linkly.tally"}


def test_one_more_schema_property_reaches_every_generated_surface() -> None:
    schema = copy.deepcopy(SCHEMAS["search"])
    schema["properties"]["mode"] = {"type": "string", "enum": ["auto", "keyword"], "default": "auto"}
    search = replace(REGISTRY.get("search"), input_schema=schema)
    registry = ToolRegistry([search if tool.name == "search" else tool for tool in REGISTRY])

    args = build_parser(registry).parse_args(["search", "tides", "--mode", "keyword"])
    assert tool_arguments(search, args)["mode"] == "keyword"
    assert build_parser(registry).parse_args(["search", "tides"]).mode == "auto"
    listed = tool_definitions(McpSettings(), registry)[0]
    assert listed.input_schema["properties"]["mode"]["enum"] == ["auto", "keyword"]


def test_read_only_settings_hide_the_tools_that_write() -> None:
    writer = replace(TALLY, name="tally_and_save", cli=None, lsp_command=None, writes=True)
    registry = REGISTRY.with_tools(writer)
    assert McpSettings(tools=registry.names(), read_only=True).exposed_tools(registry) == list(TEN_TOOLS[:-1])
    definitions = tool_definitions(McpSettings(tools=registry.names()), registry)
    assert definitions[-1].name == "tally_and_save" and definitions[-1].annotations.read_only_hint is False


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"name": "Tally"}, "lowercase letters"),
        ({"input_schema": {"type": "object", "properties": {"x": {"type": "number"}}}}, "'x' has type 'number'"),
        ({"input_schema": {"type": "string"}}, "an object schema"),
        ({"lsp_command": "tally"}, "must look like linkly.camelCase"),
        ({"cli": CliShape("tally", "count", positionals=("words",))}, "unknown properties: words"),
        ({"cli": CliShape("tally", "count", flags={"output_format": ("--format",)})}, "properties: output_format"),
    ],
)
def test_a_malformed_tool_is_refused_with_the_reason(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        replace(TALLY, **change)


@pytest.mark.parametrize(
    ("clash", "message"),
    [
        (replace(TALLY, name="search"), "a tool named 'search' is already registered"),
        (replace(TALLY, cli=CliShape("grep", "count")), "the CLI command 'grep' already belongs to another tool"),
        (replace(TALLY, lsp_command="linkly.read"), "the LSP command 'linkly.read' already belongs to another tool"),
    ],
)
def test_a_clashing_tool_is_refused(clash: Tool, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        REGISTRY.with_tools(clash)
    assert "tally" not in REGISTRY and REGISTRY.names() == TEN_TOOLS


def test_a_tool_property_may_not_shadow_the_command_lines_own() -> None:
    shadowing = replace(TALLY, input_schema={"type": "object", "properties": {"config": {"type": "string"}}},
                        cli=CliShape("tally", "count"))
    with pytest.raises(ValueError, match="'config' clashes with the command line's own"):
        build_parser(REGISTRY.with_tools(shadowing))


def test_a_storage_failure_under_a_call_is_one_clear_error_in_every_face(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import sqlite3

    from linkly_ls.core.config import LibraryConfig
    from linkly_ls.core.errors import IndexDamagedError
    from linkly_ls.core.store.records import make_doc_id
    from linkly_ls.lsp.errors import REQUEST_FAILED, json_rpc_error

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# A\n\nSee [b](b.md).\n", encoding="utf-8")
    (notes / "b.md").write_text("# B\n\nText.\n", encoding="utf-8")
    config = Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[notes])])
    engine = Engine(config)
    try:
        engine.index()
        doc_id = make_doc_id(str(notes / "a.md"))
        assert call_tool(engine, "links", {"doc_id": doc_id}).to_json()["counts"]["links"] == 1
        with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as damage:  # a table lost behind the server's back
            damage.execute("DROP TABLE links")

        with pytest.raises(IndexDamagedError, match=r"^the index could not be read \(no such table: links\); "):
            call_tool(engine, "links", {"doc_id": doc_id})
        answer = anyio.run(LocalBackend(engine, McpSettings()).call_tool, "links", {"doc_id": doc_id})
        assert answer.is_error and "the index could not be read" in answer.content[0].text
        assert "internal error" not in answer.content[0].text
        rpc = json_rpc_error(failure_of(engine, doc_id))
        assert rpc.code == REQUEST_FAILED and "linkly remove-library" in rpc.message
        assert report_error(failure_of(engine, doc_id)) == 1
        assert capsys.readouterr().err.startswith("linkly: the index could not be read (no such table: links)")
    finally:
        engine.close()


def failure_of(engine: Engine, doc_id: str) -> Exception:
    try:
        call_tool(engine, "links", {"doc_id": doc_id})
    except Exception as error:
        return error
    raise AssertionError("the call did not fail")


def _json_keys(engine: Engine, tool: str, arguments: dict[str, Any]) -> set[str]:
    return set(call_tool(engine, tool, arguments).to_json())


def test_every_key_an_answer_holds_is_named_in_its_output_schema(tmp_path):
    # clients show (and some check) structured content by the schema's names: a key left out of it is unseen
    from support.tool_library import build_tool_library, doc

    engine = build_tool_library(tmp_path / "tools")
    empty = Engine(Config(data_dir=tmp_path / "empty", raw={"embedding": {"model": "none"}}))
    try:
        long_doc, outlined = doc(engine, "long.txt"), doc(engine, "outline.md")
        calls = {
            "search": [{"query": "shopping receipt"}, {"query": '"receipt shopping grocery tomato"'}],
            "outline": [{"doc_ids": [outlined]}],
            "grep": [{"pattern": "topic", "doc_id": long_doc}],
            "read": [{"doc_id": long_doc, "limit": 3}],
            "list_libraries": [{}],
            "explore": [{}],
            "find_paths": [{"patterns": ["papers"]}],
            "links": [{"doc_id": outlined}],
            "related": [{"doc_id": outlined}],
        }
        for tool, argument_sets in calls.items():
            declared = set(REGISTRY.get(tool).output_schema["properties"])
            for arguments in argument_sets:
                assert _json_keys(engine, tool, arguments) <= declared, (tool, arguments)
        for tool, arguments in {"search": {"query": "x"}, "explore": {}, "find_paths": {"patterns": ["x"]}}.items():
            assert _json_keys(empty, tool, arguments) <= set(REGISTRY.get(tool).output_schema["properties"]), tool
    finally:
        engine.close()
        empty.close()


def test_only_answers_about_the_whole_index_say_a_first_indexing_run_may_leave_them_incomplete(tmp_path):
    """`read` of a document already indexed told the agent to call again shortly while the first run went on."""
    from support.tool_library import build_tool_library

    engine = build_tool_library(tmp_path)
    backend = LocalBackend(engine, McpSettings())
    backend.writer.status.writer, backend.writer.status.initial_done = True, False  # as while the first run goes on
    doc_id = call_tool(engine, "search", {"query": "shopping"}).results[0].doc_id

    def text_of(name: str, arguments: dict[str, Any]) -> str:
        return anyio.run(backend.call_tool, name, arguments).content[0].text

    assert "Indexing is starting; results may be incomplete" in text_of("search", {"query": "shopping"})
    assert "Indexing is starting" in text_of("list_libraries", {})
    for name, arguments in (("read", {"doc_id": doc_id}), ("grep", {"doc_id": doc_id, "pattern": "hop"}), ("outline", {"doc_ids": [doc_id]})):
        assert "Indexing is" not in text_of(name, arguments), name
    engine.close()
    assert {name for name in REGISTRY.names() if REGISTRY.get(name).per_document} == {"outline", "grep", "read"}
