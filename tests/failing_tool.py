"""Run a real face of linkly with one more tool, `fail`, that raises the error it is asked for.

    python tests/failing_tool.py cli ARGS...   # the `linkly` command (`fail ERROR`, `serve`, ...)
    python tests/failing_tool.py lsp ARGS...   # the language server (`linkly.fail {"error": ERROR}`)

The tool is registered in the tool registry before the face starts, as any
tool is, so the faces list and dispatch it like the others: the error tests
of the CLI, the MCP server and the language server see how each face answers
each kind of error. With LINKLY_TEST_LOG set, the log goes to that file
instead of stderr. The message of every error is "<name> raised on purpose".
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from linkly_ls.core.config import ConfigError
from linkly_ls.core.engine import Engine, EngineError
from linkly_ls.core.errors import ArgumentError, IndexHeldError, ToolError, UsageError
from linkly_ls.core.search.keyword import IndexBusyError, IndexWriteError
from linkly_ls.core.tools.registry import REGISTRY, CliShape, Tool
from linkly_ls.core.tools.schema import OUTPUT_FORMAT


def _upstream_unavailable(message: str) -> Exception:
    from linkly_ls.mcp.upstream import UpstreamUnavailable  # the MCP SDK: loaded only when asked for

    return UpstreamUnavailable(message)


ERRORS: dict[str, Any] = {
    "ArgumentError": ArgumentError,
    "ToolError": ToolError,
    "UsageError": UsageError,
    "ConfigError": ConfigError,
    "EngineError": EngineError,
    "IndexBusyError": IndexBusyError,
    "IndexWriteError": IndexWriteError,
    "IndexHeldError": IndexHeldError,
    "UpstreamUnavailable": _upstream_unavailable,
    "RuntimeError": RuntimeError,
}


def fail(engine: Engine, **arguments: Any) -> Any:
    name = arguments["error"]
    raise ERRORS[name](f"{name} raised on purpose")


FAIL = Tool(
    name="fail",
    function=fail,
    input_schema={
        "type": "object",
        "properties": {
            "error": {"type": "string", "enum": list(ERRORS), "description": "The error to raise."},
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["error"],
        "additionalProperties": False,
    },
    title="Fail",
    description="Raise the named error.",
    result_fields={},
    cli=CliShape("fail", "raise the named error", positionals=("error",)),
    lsp_command="linkly.fail",
)


def main(face: str, argv: list[str]) -> int:
    REGISTRY.register(FAIL)
    log_file = os.environ.get("LINKLY_TEST_LOG")
    if log_file:
        logging.basicConfig(filename=log_file, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if face == "cli":
        from linkly_ls.cli import main as cli_main

        return cli_main(argv)
    from linkly_ls.lsp.app import main as lsp_main

    return lsp_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
