"""A small library whose files, dates and paths are known exactly, for the tests of each tool.

`tests/core/tools/conftest.py` builds it once per test module as the `engine`
fixture; the helpers below ask it the questions those tests share.
"""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.store.records import make_doc_id
from linkly_ls.core.tools import call_tool

LINKED_NOTES = Path(__file__).resolve().parents[2] / "fixtures" / "linked-notes"

#: relative path -> (text, modification time in UTC)
FILES = {
    "Notion-Export-c58e/workspace/receipts.md": ("# Receipts\n\nShopping receipt from the grocery store.\n", "2024-03-10T12:00:00"),
    "Notion-Export-c58e/workspace/ideas.md": ("# Ideas\n\nA shopping list app idea.\n", "2024-07-01T00:00:00"),
    "papers/2024/report-q3.md": ("# Quarterly report Q3\n\nRevenue grew; shopping season.\n", "2024-09-30T18:00:00"),
    "papers/2023/report.md": ("# Annual report\n\nShopping trends in 2023.\n", "2023-12-31T23:59:59"),
    "papers/[draft]*/notes.txt": ("draft shopping notes\n", "2022-05-05T05:05:05"),
    "notion.md": ("# Notion tips\n\nHow to export.\n", "2021-01-01T00:00:00"),
    "copy/receipts-again.md": ("# Receipts\n\nShopping receipt from the grocery store.\n", "2020-01-01T00:00:00"),
}


def stamp(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def build_tool_library(folder: Path) -> Engine:
    """Write the files under `folder/docs` (plus a 1,200-line text and an outlined note) and index them."""
    root = folder / "docs"
    for relative, (text, when) in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (stamp(when), stamp(when)))
    long_lines = [f"line {n} about topic {n % 7}" for n in range(1, 1201)]
    long_lines[499] = "The quick brown"
    long_lines[500] = "fox jumps over the lazy dog"
    (root / "long.txt").write_text("\n".join(long_lines) + "\n", encoding="utf-8")
    (root / "outline.md").write_text(
        "# Guide\n\nintro\n\n## Install\n\nsteps\n\n### Linux\n\napt\n\n### Mac\n\nbrew\n\n## Use\n\nrun it\n",
        encoding="utf-8",
    )
    engine = Engine(Config(data_dir=folder / "data", libraries=[LibraryConfig(name="docs", paths=[root])]))
    engine.index()
    engine.root = root  # type: ignore[attr-defined]
    return engine


def index_linked_notes(folder: Path) -> Engine:
    """A copy of `fixtures/linked-notes` under `folder/notes`, indexed; `engine.doc(relative)` is a note's id."""
    root = folder / "notes"
    shutil.copytree(LINKED_NOTES, root)
    engine = Engine(Config(data_dir=folder / "data", libraries=[LibraryConfig(name="notes", paths=[root])]))
    engine.index()
    engine.doc = lambda relative: make_doc_id(str(root / relative))  # type: ignore[attr-defined]
    return engine


def copy_rust_chapters_and_slides(folder: Path) -> Path:
    """The fixture's Rust book chapters and the slides converted from one of them, in `folder`/rust."""
    fixtures = Path(__file__).resolve().parents[2] / "fixtures"
    library = folder / "rust"
    library.mkdir()
    for source in (*sorted((fixtures / "notes" / "rust").glob("*.md")), *(fixtures / "slides").glob("*.pptx")):
        (library / source.name).write_bytes(source.read_bytes())
    return library


def search(engine: Engine, **arguments: Any) -> Any:
    return call_tool(engine, "search", {"query": "shopping", **arguments})


def rel(engine: Engine, hits: list[Any]) -> list[str]:
    return [Path(hit.path).relative_to(engine.root).as_posix() for hit in hits]  # type: ignore[attr-defined]


def doc(engine: Engine, relative: str) -> str:
    return engine.catalog.by_path(str(engine.root / relative)).doc_id  # type: ignore[attr-defined]
