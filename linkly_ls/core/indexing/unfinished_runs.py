"""Index runs that began and did not end (a process killed, a machine shut down, a run stopped), for
`linkly status`.

The catalog holds what a run read, not what it was to read: after a run killed half-way the library
looks whole, short of the files it never reached. So a run of a whole library records its start in
`<data_dir>/unfinished-runs.json` and clears it when it ends; the next complete run clears it too.
Only the writer runs them, so the file has one writer. Failing to write it (a full disk) never stops
the run: the record is a courtesy.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

FILE_NAME = "unfinished-runs.json"


def read_unfinished(data_dir: Path) -> dict[str, float]:
    """Library -> when its unfinished run started (Unix time)."""
    try:
        data = json.loads((data_dir / FILE_NAME).read_text(encoding="utf-8"))
        return {str(name): float(started) for name, started in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


@contextmanager
def recorded_run(data_dir: Path, library: str) -> Iterator[None]:
    """Record the run of `library` as unfinished while it runs; cleared when the block ends without an
    exception (an interrupted or failed run stays recorded)."""
    runs = read_unfinished(data_dir)
    runs[library] = time.time()
    _write(data_dir, runs)
    yield
    runs = read_unfinished(data_dir)
    if runs.pop(library, None) is not None:
        _write(data_dir, runs)


def _write(data_dir: Path, runs: dict[str, float]) -> None:
    path = data_dir / FILE_NAME
    try:
        if not runs:
            path.unlink(missing_ok=True)
            return
        descriptor, temporary = tempfile.mkstemp(prefix=".unfinished-runs.", suffix=".json", dir=data_dir)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump(runs, handle)
        os.replace(temporary, path)
    except OSError:
        pass
