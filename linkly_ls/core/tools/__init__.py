"""The tools, callable by name with a dict of arguments, as every face calls them.

Which tools exist, and how each face shows them, is declared once in registry.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from linkly_ls.core.errors import ArgumentError, ToolError
from linkly_ls.core.tools.registry import REGISTRY, CliShape, Tool, ToolRegistry
from linkly_ls.core.tools.schema import SCHEMAS

if TYPE_CHECKING:
    from linkly_ls.core.engine import Engine


def call_tool(engine: Engine, name: str, arguments: dict[str, Any] | None = None) -> Any:
    """Run a registered tool by name; the result object renders itself as markdown or JSON."""
    return REGISTRY.call(engine, name, arguments)


__all__ = ["REGISTRY", "SCHEMAS", "ArgumentError", "CliShape", "Tool", "ToolError", "ToolRegistry", "call_tool"]
