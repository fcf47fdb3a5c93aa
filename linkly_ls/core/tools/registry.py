"""The tool registry: each tool declared once, and every face generated from it.

A `Tool` names its function, its input schema (schema.py), the title and the
description an agent reads (descriptions.py), the top-level keys of its JSON
result, whether it writes the index, its shape as a `linkly` subcommand and its
language-server command. The MCP server lists and dispatches the registry's
tools; the CLI makes a subcommand of each tool with a `cli` shape; the language
server a `workspace/executeCommand` command of each tool with an `lsp_command`.
Adding a tool is its module plus one entry in `REGISTRY` below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linkly_ls.core.background import FOREGROUND
from linkly_ls.core.errors import ArgumentError, IndexDamagedError
from linkly_ls.core.store.schema import StoreError
from linkly_ls.core.tools import descriptions
from linkly_ls.core.tools.grep import grep
from linkly_ls.core.tools.index_library import check_arguments as check_index_library
from linkly_ls.core.tools.index_library import index_library
from linkly_ls.core.tools.links import links
from linkly_ls.core.tools.outline import outline
from linkly_ls.core.tools.output_schemas import RESULT_FIELDS, result_schema
from linkly_ls.core.tools.read import read
from linkly_ls.core.tools.related import related
from linkly_ls.core.tools.remote_collections import explore_anywhere, find_paths_anywhere, list_libraries_anywhere
from linkly_ls.core.tools.remote_search import search_anywhere
from linkly_ls.core.tools.schema import PROPERTY_TYPES, SCHEMAS

if TYPE_CHECKING:
    from linkly_ls.core.engine import Engine

#: the one property no face passes on as an argument: the CLI's `--json`, MCP's text format
FORMAT_PROPERTY = "output_format"
_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_LSP_COMMAND = re.compile(r"^linkly\.[a-z][A-Za-z0-9]*$")


@dataclass(frozen=True)
class CliShape:
    """A tool as a `linkly` subcommand.

    Every schema property but `output_format` (the `--json` switch) becomes an
    argument, in schema order: the `positionals` by name, the others as
    `--kebab-case` flags unless `flags` gives other option strings. An integer
    takes a number, a boolean is a switch, an enum takes one of its values, an
    array one comma-separated value (a positional array: one or more values).
    Defaults and required flags come from the schema; `help_texts` is what
    `--help` prints beside an argument.
    """

    command: str
    help: str
    positionals: tuple[str, ...] = ()
    flags: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    help_texts: Mapping[str, str] = field(default_factory=dict)

    def option_strings(self, name: str) -> tuple[str, ...]:
        return self.flags.get(name, (f"--{name.replace('_', '-')}",))


@dataclass(frozen=True)
class Tool:
    name: str
    function: Callable[..., Any]
    input_schema: dict[str, Any]
    title: str
    description: str
    #: the JSON result's fields (besides `_meta`) and their JSON Schemas, published as the output schema
    result_fields: Mapping[str, dict[str, Any]]
    #: changes the index: only the index's writer runs it, and read-only servers hide it
    writes: bool = False
    #: checks a writing tool's arguments before it takes the writer role (a bad call is told so, not that
    #: another process writes the index)
    check: Callable[[Any, dict[str, Any]], Any] | None = None
    cli: CliShape | None = None
    lsp_command: str | None = None
    #: answers about the documents its call names by id (outline, grep, read): a first indexing run still
    #: going on elsewhere leaves its answer complete, so it carries no note saying results may be missing
    per_document: bool = False

    def __post_init__(self) -> None:
        problem = self._problem()
        if problem:
            raise ValueError(f"tool {self.name!r}: {problem}")

    def _problem(self) -> str | None:
        if not _TOOL_NAME.match(self.name):
            return "a name is lowercase letters, digits and underscores"
        properties = self.input_schema.get("properties")
        if self.input_schema.get("type") != "object" or not isinstance(properties, dict):
            return "the input schema must be an object schema with properties"
        for name, spec in properties.items():
            if spec.get("type") not in PROPERTY_TYPES:
                return f"property {name!r} has type {spec.get('type')!r}; supported: {', '.join(PROPERTY_TYPES)}"
        if self.lsp_command is not None and not _LSP_COMMAND.match(self.lsp_command):
            return f"LSP command {self.lsp_command!r} must look like linkly.camelCase"
        if self.cli is not None:
            arguments = set(properties) - {FORMAT_PROPERTY}
            named = set(self.cli.positionals) | set(self.cli.flags) | set(self.cli.help_texts)
            if named - arguments:
                return f"the CLI shape names unknown properties: {', '.join(sorted(named - arguments))}"
        return None

    @property
    def properties(self) -> dict[str, dict[str, Any]]:
        return self.input_schema["properties"]

    @property
    def output_schema(self) -> dict[str, Any]:
        """The result's fields, typed (`output_schemas.py`)."""
        return result_schema(dict(self.result_fields))

    @property
    def result_keys(self) -> tuple[str, ...]:
        return tuple(self.result_fields)

    def call(self, engine: Engine, arguments: dict[str, Any] | None = None) -> Any:
        """Run the tool; the result object renders itself as markdown or JSON.

        A storage failure under the call becomes an IndexDamagedError here, the one
        place every face's call passes through.
        """
        arguments = dict(arguments or {})
        arguments.pop(FORMAT_PROPERTY, None)
        with FOREGROUND.request():  # background embedding waits meanwhile
            try:
                return self.function(engine, **arguments)
            except StoreError as error:
                raise IndexDamagedError.from_store(error) from error


class ToolRegistry:
    """Tools by name, in the order every face lists them."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> Tool:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        if tool.cli is not None and self.for_cli_command(tool.cli.command) is not None:
            raise ValueError(f"the CLI command {tool.cli.command!r} already belongs to another tool")
        if tool.lsp_command is not None and any(other.lsp_command == tool.lsp_command for other in self):
            raise ValueError(f"the LSP command {tool.lsp_command!r} already belongs to another tool")
        self._tools[tool.name] = tool
        return tool

    def with_tools(self, *tools: Tool) -> ToolRegistry:
        """A new registry: this one's tools, then these."""
        return ToolRegistry([*self, *tools])

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> tuple[str, ...]:
        return tuple(self._tools)

    def get(self, name: str) -> Tool:
        tool = self._tools.get(name)
        if tool is None:
            raise ArgumentError(f"unknown tool {name!r}; tools: {', '.join(self._tools)}")
        return tool

    def call(self, engine: Engine, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.get(name).call(engine, arguments)

    def cli_tools(self) -> list[Tool]:
        return [tool for tool in self if tool.cli is not None]

    def for_cli_command(self, command: str) -> Tool | None:
        return next((tool for tool in self if tool.cli is not None and tool.cli.command == command), None)

    def lsp_tools(self) -> list[Tool]:
        return [tool for tool in self if tool.lsp_command is not None]


REGISTRY = ToolRegistry(
    [
        Tool(
            name="search",
            function=search_anywhere,
            input_schema=SCHEMAS["search"],
            title="Search documents",
            description=descriptions.SEARCH,
            result_fields=RESULT_FIELDS["search"],
            cli=CliShape(
                "search",
                "search indexed documents",
                positionals=("query",),
                flags={"doc_types": ("--type",)},
                help_texts={
                    "limit": "1-50 (default 20)",
                    "offset": "results to skip: the next page starts at the answer's next_offset (0-500, default 0)",
                    "doc_types": "document types, comma-separated: pdf,md,docx",
                    "mode": "ranking: auto, keyword, vector or hybrid (default auto)",
                    "explain": "show keyword/vector ranks and fused scores",
                    "remote": "also search every configured remote machine",
                },
            ),
            lsp_command="linkly.search",
        ),
        Tool(
            name="outline",
            per_document=True,
            function=outline,
            input_schema=SCHEMAS["outline"],
            title="Document outline",
            description=descriptions.OUTLINE,
            result_fields=RESULT_FIELDS["outline"],
            cli=CliShape(
                "outline",
                "show the outline of documents",
                positionals=("doc_ids",),
                help_texts={"expand": "node ids to expand, comma-separated: 2,3.1"},
            ),
            lsp_command="linkly.outline",
        ),
        Tool(
            name="grep",
            per_document=True,
            function=grep,
            input_schema=SCHEMAS["grep"],
            title="Grep a document",
            description=descriptions.GREP,
            result_fields=RESULT_FIELDS["grep"],
            cli=CliShape(
                "grep",
                "find lines matching a regular expression in one document",
                positionals=("pattern", "doc_id"),
                flags={
                    "context": ("-C", "--context"),
                    "before": ("-B", "--before"),
                    "after": ("-A", "--after"),
                    "case_insensitive": ("-i", "--case-insensitive"),
                    "output_mode": ("--mode",),
                },
                help_texts={"limit": "1-100 (default 20)"},
            ),
            lsp_command="linkly.grep",
        ),
        Tool(
            name="read",
            per_document=True,
            function=read,
            input_schema=SCHEMAS["read"],
            title="Read document lines",
            description=descriptions.READ,
            result_fields=RESULT_FIELDS["read"],
            cli=CliShape(
                "read",
                "read numbered lines of a document",
                positionals=("doc_id",),
                help_texts={"offset": "first line, from 1", "limit": "1-500 (default 200)"},
            ),
            lsp_command="linkly.read",
        ),
        Tool(
            name="list_libraries",
            function=list_libraries_anywhere,
            input_schema=SCHEMAS["list_libraries"],
            title="List libraries",
            description=descriptions.LIST_LIBRARIES,
            result_fields=RESULT_FIELDS["list_libraries"],
            cli=CliShape(
                "list-libraries",
                "list libraries and their document counts",
                help_texts={"remote": "also list every configured remote machine's libraries"},
            ),
            lsp_command="linkly.listLibraries",
        ),
        Tool(
            name="explore",
            function=explore_anywhere,
            input_schema=SCHEMAS["explore"],
            title="Explore the collection",
            description=descriptions.EXPLORE,
            result_fields=RESULT_FIELDS["explore"],
            cli=CliShape("explore", "overview: types, folders, keywords"),
            lsp_command="linkly.explore",
        ),
        Tool(
            name="find_paths",
            function=find_paths_anywhere,
            input_schema=SCHEMAS["find_paths"],
            title="Find folder paths",
            description=descriptions.FIND_PATHS,
            result_fields=RESULT_FIELDS["find_paths"],
            cli=CliShape(
                "find-paths",
                "find folders whose path matches keywords",
                help_texts={"patterns": "keywords, comma-separated: Notion,notion", "limit": "1-50 (default 10)"},
            ),
            lsp_command="linkly.findPaths",
        ),
        Tool(
            name="links",
            function=links,
            input_schema=SCHEMAS["links"],
            title="Links and backlinks",
            description=descriptions.LINKS,
            result_fields=RESULT_FIELDS["links"],
            cli=CliShape(
                "links",
                "list a document's links and backlinks",
                positionals=("doc_id",),
                help_texts={
                    "direction": "out, in or both (default both)",
                    "broken_only": "only broken links",
                    "mentions": "also the unlinked mentions: other documents naming this one without a link",
                    "limit": "1-500 (default 100)",
                    "offset": "links, backlinks and mentions to skip in each list (default 0)",
                },
            ),
            lsp_command="linkly.links",
        ),
        Tool(
            name="related",
            function=related,
            input_schema=SCHEMAS["related"],
            title="Related documents",
            description=descriptions.RELATED,
            result_fields=RESULT_FIELDS["related"],
            cli=CliShape(
                "related",
                "documents related in meaning to a document or a section",
                positionals=("doc_id",),
                help_texts={"line": "relate the section around this line", "limit": "1-50 (default 10)"},
            ),
            lsp_command="linkly.related",
        ),
        # the CLI's `linkly index` and the editors' `linkly.reindex` re-index by path as well, so they
        # are written by hand in their faces
        Tool(
            name="index_library",
            function=index_library,
            input_schema=SCHEMAS["index_library"],
            title="Re-index a library",
            description=descriptions.INDEX_LIBRARY,
            result_fields=RESULT_FIELDS["index_library"],
            writes=True,
            check=check_index_library,
        ),
    ]
)
