"""Storage alone speaks SQL: no module of the package outside `linkly_ls/core/store/` runs a statement,
imports the driver or takes a catalog connection."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "linkly_ls"
STORE = PACKAGE / "core" / "store"
SQL_CALLS = {"execute", "executemany", "executescript"}


def sql_uses(source: str) -> list[str]:
    """Where a module runs SQL: `x.execute(...)` and its siblings, `import sqlite3` (or from it), any use of
    the `sqlite3` name, and `<catalog>.connect()`. Docstrings and comments do not count."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SQL_CALLS:
                found.append(f"line {node.lineno}: .{node.func.attr}(")
            elif node.func.attr == "connect" and "catalog" in ast.unparse(node.func.value).lower():
                found.append(f"line {node.lineno}: {ast.unparse(node.func)}(")
        elif isinstance(node, ast.Import) and any(alias.name.split(".")[0] == "sqlite3" for alias in node.names):
            found.append(f"line {node.lineno}: import sqlite3")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
            found.append(f"line {node.lineno}: from sqlite3 import")
        elif isinstance(node, ast.Name) and node.id == "sqlite3":
            found.append(f"line {node.lineno}: sqlite3")
    return found


def test_the_scan_finds_each_kind_of_sql_use():
    samples = {
        "db.execute('SELECT 1')": 1,
        "self.catalog.connect().executemany(q, rows)": 2,
        "connection.executescript(script)": 1,
        "import sqlite3": 1,
        "import os, sqlite3 as lite": 1,
        "from sqlite3 import Error": 1,
        "def f():\n    try:\n        pass\n    except sqlite3.Error:\n        pass": 1,
        "rows = engine.catalog.connect()": 1,
        '"""Calls db.execute( in a docstring."""\n# and sqlite3 in a comment': 0,
        "engine.catalog.paths('lib')": 0,
    }
    for source, expected in samples.items():
        assert len(sql_uses(source)) == expected, source


def test_no_module_outside_storage_speaks_sql():
    modules = [path for path in sorted(PACKAGE.rglob("*.py")) if STORE not in path.parents]
    assert len(modules) > 50, "the scan must see the whole package"
    offenders = {
        str(path.relative_to(PACKAGE.parent)): uses
        for path in modules
        if (uses := sql_uses(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}, "SQL belongs in linkly_ls/core/store/; give storage a method instead"


def test_storage_is_where_the_sql_is():
    assert any(sql_uses(path.read_text(encoding="utf-8")) for path in STORE.glob("*.py"))
