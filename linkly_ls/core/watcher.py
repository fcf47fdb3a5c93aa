"""Keep the index current: watch the libraries' folders and re-index what changed.

Changes arrive in debounced batches from watchfiles; each batch re-indexes only
the files it names (a deleted folder removes the documents under it), so a
saved file is searchable within about a second and nothing is re-indexed whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from watchfiles import watch

from linkly_ls.core.engine import Engine
from linkly_ls.core.indexer import IndexReport

DEBOUNCE_MS = 150


def paths_by_library(engine: Engine, changed: set[Path]) -> dict[str, list[Path]]:
    """Group changed paths under their library; a vanished folder expands to its documents."""
    grouped: dict[str, list[Path]] = {}
    for path in changed:
        library = engine.library_for_path(path)
        if library is None:
            continue
        targets = [path]
        if not path.is_file():
            prefix = str(path).rstrip("/") + "/"
            targets += [Path(p) for p in engine.catalog.file_states(library.name) if p.startswith(prefix)]
            if path.is_dir():
                targets = [p for p in path.rglob("*") if p.is_file()] + targets[1:]
        grouped.setdefault(library.name, []).extend(targets)
    return grouped


def apply_changes(engine: Engine, changed: set[Path]) -> list[IndexReport]:
    reports: list[IndexReport] = []
    for name, paths in paths_by_library(engine, changed).items():
        library = engine.catalog.library(name)
        if library is not None:
            reports.append(engine.index_paths(library, sorted(set(paths))))
    return reports


def watch_libraries(
    engine: Engine,
    on_batch: Callable[[list[IndexReport]], None] | None = None,
    stop: threading.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
) -> None:
    """Block, applying changes as they come, until `stop` is set (or Ctrl-C)."""
    roots = sorted({root for library in engine.libraries() for root in library.paths if Path(root).exists()})
    if not roots:
        return
    for changes in watch(
        *roots,
        debounce=debounce_ms,
        step=50,
        stop_event=stop,
        rust_timeout=1000,
        yield_on_timeout=False,
        recursive=True,
        ignore_permission_denied=True,
    ):
        changed = {Path(path) for _, path in changes}
        reports = apply_changes(engine, changed)
        if on_batch and reports:
            on_batch(reports)
