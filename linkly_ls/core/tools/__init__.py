"""The seven tools, callable by name with a dict of arguments, as every face calls them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from linkly_ls.core.background import FOREGROUND
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError, ToolError
from linkly_ls.core.tools.explore import explore
from linkly_ls.core.tools.find_paths import find_paths
from linkly_ls.core.tools.grep import grep
from linkly_ls.core.tools.libraries import list_libraries
from linkly_ls.core.tools.outline import outline
from linkly_ls.core.tools.read import read
from linkly_ls.core.tools.schema import SCHEMAS
from linkly_ls.core.tools.search import search

TOOLS: dict[str, Callable[..., Any]] = {
    "search": search,
    "outline": outline,
    "grep": grep,
    "read": read,
    "list_libraries": list_libraries,
    "explore": explore,
    "find_paths": find_paths,
}


def call_tool(engine: Engine, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """Run a tool by name; the result object renders itself as markdown or JSON."""
    if name not in TOOLS:
        raise ArgumentError(f"unknown tool {name!r}; tools: {', '.join(TOOLS)}")
    arguments = dict(arguments or {})
    arguments.pop("output_format", None)
    with FOREGROUND.request():  # background embedding waits meanwhile
        return TOOLS[name](engine, **arguments)


__all__ = ["SCHEMAS", "TOOLS", "ArgumentError", "ToolError", "call_tool"]
