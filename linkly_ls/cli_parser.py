"""The command line of `linkly`: its parser, the tools' subcommands generated from the tool registry
(`core/tools/registry.py`) beside the commands written in `cli.py`, and one-line usage errors."""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

from linkly_ls import __version__
from linkly_ls.core.tools.registry import FORMAT_PROPERTY, REGISTRY, Tool, ToolRegistry

#: attributes of the parsed command line that are not a tool's: no tool property may take these names
_RESERVED_NAMES = {"command", "config", "json", "remote_name"}


PROGRAM = "linkly"


class _Parser(argparse.ArgumentParser):
    """Subcommand parsers are named `linkly <command>` (never after the main parser's usage line)."""

    #: whether the command line asks for JSON (`--json`): its usage errors are JSON too
    json_errors = False

    #: the command line being parsed
    given: list[str] = []

    def error(self, message: str) -> None:  # exit 2 with one line, as argparse does, minus the usage dump
        message += self._dash_hint(message)
        if _Parser.json_errors:
            self.exit(2, json.dumps({"error": f"{message} (see `{self.prog} --help`)", "kind": "usage"}) + "\n")
        self.exit(2, f"{PROGRAM}: {message} (see `{self.prog} --help`)\n")

    def parse_args(self, args: Any = None, namespace: Any = None) -> argparse.Namespace:  # type: ignore[override]
        """As argparse's, but a flag a subcommand does not know is refused by that subcommand's parser,
        so the message points to `linkly grep --help` rather than to the main parser's help."""
        if self.prog == PROGRAM:
            given = list(sys.argv[1:] if args is None else args)
            _Parser.json_errors = "--json" in given
            _Parser.given = given
            self._refuse_unknown_global(given)
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            commands = next((action for action in self._actions if isinstance(action, _Commands)), None)
            command = getattr(parsed, "command", None)
            owner = commands.choices.get(command, self) if commands is not None and command else self
            owner.error(f"unrecognized arguments: {' '.join(unknown)}")
        return parsed


    def _dash_hint(self, message: str) -> str:
        """For a command whose pattern or query starts with `-` (`--8<--`, `--stage`), read as an option: where
        it goes (argparse blamed a missing `doc_id`, or the options after `--`)."""
        if self.prog == PROGRAM or not ("required" in message or "unrecognized" in message):
            return ""
        dashed = [arg for arg in self.given if arg.startswith("-") and arg != "--" and arg.split("=", 1)[0] not in self._option_string_actions]
        if not dashed:
            return ""
        return f"; if {dashed[0]!r} is the pattern or query, put it after `--`, the options before it (`{self.prog} --json -- {dashed[0]!r} ...`)"

    def _refuse_unknown_global(self, args: list[str]) -> None:
        """An option before the command that `linkly` itself does not know: named as such (argparse said
        only that a command is required), with where it goes when it is a command's own (`--json`)."""
        expecting_value = False
        for arg in args:
            if expecting_value:
                expecting_value = False
                continue
            if not arg.startswith("-"):
                return
            name = arg.split("=", 1)[0]
            if name in self._option_string_actions:
                expecting_value = self._option_string_actions[name].nargs != 0 and "=" not in arg
                continue
            commands = next((action for action in self._actions if isinstance(action, _Commands)), None)
            owners = [command for command, parser in (commands.choices.items() if commands else []) if name in parser._option_string_actions]
            hint = f"; it is an option of `linkly {owners[0]}` and the like: put it after the command" if owners else ""
            self.error(f"unrecognized arguments: {arg}{hint}")


class _Commands(argparse._SubParsersAction):
    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        kwargs["prog"] = f"{PROGRAM} {name}"
        return super().add_parser(name, **kwargs)


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def _given_value(text: str) -> str:
    """An option's value; an empty one (`--library "$LIB"` with LIB unset) is refused rather than read as
    no filter at all, which widened a search to every library."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value (an unset variable?): leave the option out for no filter")
    return text


def _whole_number(text: str) -> int:
    """A number in ASCII digits (`int` also takes `١٢`)."""
    if not text.strip().lstrip("-").isascii() or not text.strip().lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"invalid whole number: {text!r}")
    return int(text)


def _given_path(text: str) -> Path:
    """A path argument; an empty one (an unset shell variable: `linkly index "$DIR"`) is refused rather
    than read as the current folder."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path (an unset variable?)")
    return Path(text)


def _library_name(text: str) -> str:
    """A library name as the index keeps it: composed (NFC), as a macOS terminal may type it decomposed."""
    return unicodedata.normalize("NFC", text)


def build_parser(registry: ToolRegistry = REGISTRY) -> argparse.ArgumentParser:
    parser = _Parser(prog=PROGRAM, description="Search, outline, grep and read your local documents.")
    parser.register("action", "parsers", _Commands)
    parser.add_argument("--version", action="version", version=f"linkly {__version__}")
    parser.add_argument("--config", type=_given_path, help="config file (default: $LINKLY_CONFIG or the XDG config home)")
    parser.add_argument(
        "--remote",
        dest="remote_name",
        metavar="NAME",
        help="run the tool on this remote machine (a [[remote]] of the config file); ids it hands out look like NAME:3f2a9c01b7de",
    )
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for tool in registry.cli_tools():
        add_tool_command(sub, tool)

    def command(name: str, text: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=text, description=text[0].upper() + text[1:] + ".")

    index = command("index", "add folders as a library and index them (incremental)")
    index.add_argument("paths", nargs="*", type=_given_path, help="folders or files; none: re-index every library")
    index.add_argument("--library", type=_library_name, help="library name (default: the folder's name)")
    index.add_argument("--description", default="", help="what the library holds, shown by list-libraries")
    index.add_argument(
        "--wait",
        action="store_true",
        help="also compute the vectors of every chunk before returning: the fast first-pass ones at once, then the "
        "bundled model's (otherwise `linkly watch`, `linkly serve` or the next `--wait` does both; search "
        "meanwhile ranks by keywords)",
    )
    honour = index.add_mutually_exclusive_group()
    honour.add_argument(
        "--gitignore",
        dest="gitignore",
        action="store_const",
        const=True,
        default=None,
        help="with PATH: the library honours .gitignore and .ignore files (the default for a new library)",
    )
    honour.add_argument(
        "--no-gitignore",
        dest="gitignore",
        action="store_const",
        const=False,
        help="with PATH: the library indexes the files .gitignore and .ignore name too",
    )

    status = command("status", "per library: documents, skipped, failed, OCR, vectors; what the writer does")
    status.add_argument("--json", action="store_true", help="structured JSON output")

    remove = command("remove-library", "forget a library: its documents leave the index (its folders are not touched)")
    remove.add_argument("name", type=_library_name, help="the library's name (see `linkly list-libraries`)")
    remove.add_argument("--json", action="store_true", help="structured JSON output")

    watch = command("watch", "index, then keep the index current as files change")
    watch.add_argument("--library", action="append", type=_library_name, help="only this library (repeatable)")

    serve = command("serve", "serve the tools to AI agents over MCP (HTTP), keeping the index current")
    serve.add_argument("--host", type=_given_value, help="address to listen on (default: [mcp] host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: [mcp] port, 60606; the next free one if taken)")
    serve.add_argument("--no-watch", dest="watch", action="store_false", help="index at start but do not watch")

    mcp = command("mcp", "serve the tools over MCP on stdio (forwards to a running `linkly serve`)")
    mcp.add_argument("--no-watch", dest="watch", action="store_false", help="never index or watch from this process")
    return parser


def add_tool_command(sub: Any, tool: Tool) -> argparse.ArgumentParser:
    """The subcommand of a tool, from its CLI shape and its schema (see `CliShape`)."""
    shape = tool.cli
    if shape is None:
        raise ValueError(f"tool {tool.name!r} has no CLI shape")
    reserved = _RESERVED_NAMES & set(tool.properties)
    if reserved:
        raise ValueError(f"tool {tool.name!r}: property {sorted(reserved)[0]!r} clashes with the command line's own")
    command = sub.add_parser(shape.command, help=shape.help, description=shape.help)
    command.add_argument("--json", action="store_true", help="structured JSON output")
    required = set(tool.input_schema.get("required", []))
    for name, spec in tool.properties.items():
        if name == FORMAT_PROPERTY:
            continue
        help_text = shape.help_texts.get(name)
        if name in shape.positionals:
            command.add_argument(name, nargs="+" if spec["type"] == "array" else None, help=help_text)
            continue
        options: dict[str, Any] = {"dest": name, "help": help_text}
        if spec["type"] == "boolean":
            options["action"] = "store_true"
        else:
            options["default"] = spec.get("default")
            options["type"] = _whole_number if spec["type"] == "integer" else _given_value
            if "enum" in spec:
                options["choices"] = spec["enum"]
            if name in required:
                options["required"] = True
        command.add_argument(*shape.option_strings(name), **options)
    return command


def tool_arguments(tool: Tool, args: argparse.Namespace) -> dict[str, Any]:
    """The tool's arguments from the command line: switches not given are left out, lists split at commas."""
    positionals = tool.cli.positionals if tool.cli else ()
    arguments: dict[str, Any] = {}
    for name, spec in tool.properties.items():
        value = getattr(args, name, None)
        if value is None or (value is False and spec["type"] == "boolean"):
            continue
        if spec["type"] == "array" and name not in positionals:
            value = _split(value)
        arguments[name] = value
    return arguments
