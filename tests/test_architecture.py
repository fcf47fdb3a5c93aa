"""The layout's rules, checked on the source: no import cycles, and a core that knows no face."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "linkly_ls"
FACES = ("linkly_ls.cli", "linkly_ls.lsp", "linkly_ls.mcp")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, known: set[str]) -> set[str]:
    """Every linkly_ls module `path` imports, at the top or inside functions; not under TYPE_CHECKING."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module:
                submodules = {f"{node.module}.{alias.name}" for alias in node.names} & known
                found.update(submodules)
                if len(submodules) < len(node.names):  # names defined by the module itself
                    found.add(node.module)
            for field in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, field, None)
                if isinstance(children, list):
                    visit([child for child in children if isinstance(child, ast.stmt)] + [
                        statement for handler in children if isinstance(handler, ast.ExceptHandler)
                        for statement in handler.body
                    ])

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return {name for name in found if name in known}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    known = set(paths)
    return {name: imported_modules(path, known) - {name} for name, path in paths.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strong(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                strong(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strong(node)
    return found


def test_the_package_has_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_check_sees_function_level_imports_but_not_type_checking_ones(tmp_path):
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    source = tmp_path / "module.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from linkly_ls.x import Hint\n"
        "def later():\n    try:\n        from linkly_ls.y import thing\n    except ImportError:\n        pass\n",
        encoding="utf-8",
    )
    assert imported_modules(source, {"linkly_ls.x", "linkly_ls.y"}) == {"linkly_ls.y"}


def test_core_knows_no_face():
    for name, imports in import_graph().items():
        if name.startswith("linkly_ls.core"):
            assert not {target for target in imports if target.startswith(FACES)}, name
