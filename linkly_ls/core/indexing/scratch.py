"""The indexing run's scratch space: `<data_dir>/scratch/`, never the system's temporary folder.

A run that is killed (kill -9, a power cut, the OOM killer) cannot remove what it
wrote to a temporary folder: the parts of a long PDF read by several workers are
tens of megabytes, and under `/tmp` nothing would ever remove them. Under the data
dir, each folder's name carries the process id that made it, and the next run
removes the folders of processes that are no longer alive.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

SCRATCH_DIR_NAME = "scratch"


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    except OSError:
        return False
    return True


def scratch_folder(data_dir: Path, kind: str) -> Path:
    """A new empty folder for this process's `kind` of scratch files (the caller removes it)."""
    root = data_dir / SCRATCH_DIR_NAME
    root.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{kind}-{os.getpid()}-", dir=root))


def clear_abandoned(data_dir: Path) -> list[Path]:
    """Remove the scratch folders whose process is gone; returns what was removed."""
    removed: list[Path] = []
    try:
        entries = list((data_dir / SCRATCH_DIR_NAME).iterdir())
    except OSError:
        return removed
    for entry in entries:
        if not pid_alive(_owner(entry.name)):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _owner(name: str) -> int:
    """The process id in `kind-PID-random`; 0 (no one) for a name of another shape."""
    parts = name.rsplit("-", 2)
    return int(parts[1]) if len(parts) == 3 and parts[1].isdigit() else 0
