"""The one-writer rule between linkly processes that share an index.

Several processes may open the same index (`linkly serve`, a `linkly mcp` an
agent spawned, an editor's language server, `linkly index` or `watch`). Only
the one holding `<data_dir>/writer.lock` (an advisory `flock`, released by
the kernel if the holder dies) indexes and watches; the others read.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

WRITER_LOCK_NAME = "writer.lock"


class WriterLock:
    """An exclusive, non-blocking, process-wide claim on writing the index in `data_dir`."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / WRITER_LOCK_NAME
        self._handle: IO[str] | None = None
        self._guard = threading.Lock()

    @property
    def held(self) -> bool:
        return self._handle is not None

    def try_acquire(self) -> bool:
        with self._guard:
            return self._try_acquire()

    def _try_acquire(self) -> bool:
        if self._handle is not None:
            return True
        if fcntl is None:  # no advisory locks on this platform: the Tantivy writer lock still guards
            self._handle = open(os.devnull, "w")  # noqa: SIM115 - held until release()
            return True
        # the index folder is not made here: one deleted under a server must not come back as an empty index
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            return False
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        self._handle = handle
        return True

    def release(self) -> None:
        with self._guard:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def held_elsewhere(self) -> bool:
        """True when another holder (another process, or another WriterLock of this one) has the lock."""
        if self._handle is not None or fcntl is None or not self.path.exists():
            return False
        with open(self.path, "a+", encoding="utf-8") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except OSError:
                return True
            fcntl.flock(handle, fcntl.LOCK_UN)
        return False

    def holder_pid(self) -> int | None:
        """The pid written by the process that holds the lock, when there is one."""
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None
