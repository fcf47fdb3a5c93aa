"""Keep the index current from a background thread, as the one writer among linkly processes.

Several processes may open the same index (`linkly serve`, a `linkly mcp`
an agent spawned, the language server). Only the one holding the writer
lock file (`<data_dir>/writer.lock`, an advisory `flock`) indexes and
watches; the others serve what is indexed and pick the role up when the
writer exits. The lock is released by the kernel if the holder dies.
"""

from __future__ import annotations

import logging
import sys
import threading
from dataclasses import dataclass
from typing import Protocol

from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.indexer import IndexReport
from linkly_ls.core.store.writer_lock import WriterLock

log = logging.getLogger("linkly_ls.mcp")

LOCK_RETRY_SECONDS = 1.0


class _Stopped(Exception):
    """Raised from the progress callback to end an indexing run early when the process stops."""


@dataclass
class IndexStatus:
    """What the keeper is doing, for the note tools add while the first indexing runs."""

    writer: bool = False
    initial_done: bool = False
    library: str = ""
    done: int = 0
    total: int = 0
    error: str | None = None

    def note(self) -> str | None:
        """A sentence for the agent while results may be incomplete, else None."""
        if self.initial_done or not self.writer:
            return None
        if self.total:
            return (
                f"Indexing is still running ({self.library}: {self.done} of {self.total} changed files); "
                "results may be incomplete, call again shortly."
            )
        return "Indexing is starting; results may be incomplete, call again shortly."

    def meta(self) -> dict[str, object] | None:
        if self.initial_done or not self.writer:
            return None
        return {"library": self.library, "done": self.done, "total": self.total}


class Keeper(Protocol):
    """What the MCP server reads from whoever indexes in this process (IndexKeeper, the language server)."""

    @property
    def lock(self) -> WriterLock | None: ...

    @property
    def status(self) -> IndexStatus | None: ...


class IndexKeeper:
    """Index the libraries once, then watch them, in a daemon thread, while holding the writer lock."""

    def __init__(self, engine: Engine, watch: bool = True) -> None:
        self.engine = engine
        self.watch = watch
        self.status = IndexStatus()
        self.lock = WriterLock(engine.data_dir)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> IndexKeeper:
        self._thread = threading.Thread(target=self._run, name="linkly-index-keeper", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop indexing and watching; the lock is kept while a run is still finishing."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if not self.running:
            self.lock.release()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self.lock.try_acquire():
            if self._stop.wait(LOCK_RETRY_SECONDS):
                return
        self.status.writer = True
        try:
            self._index_all()
            self._start_embedding()
            if self.watch and not self._stop.is_set():
                from linkly_ls.core.indexing.watcher import watch_libraries

                watch_libraries(self.engine, on_batch=_log_reports, stop=self._stop)
        except _Stopped:
            return
        except Exception as error:  # the server keeps serving what is indexed
            self.status.error = str(error)
            self.status.initial_done = True
            log.exception("indexing stopped: %s", error)

    def _start_embedding(self) -> None:
        """As the writer, also compute chunk vectors for hybrid search, in the engine's own thread."""
        vectors = getattr(self.engine, "vectors", None)  # engines without vector search have none
        if vectors is not None and not self._stop.is_set():
            vectors.start()

    def _index_all(self) -> None:
        def progress(done: int, total: int, path: str) -> None:
            # Stopping mid-run is safe: what was stored stays, and Engine.recover() finishes
            # the keyword-index work at the next open, as after a crash.
            if self._stop.is_set():
                raise _Stopped
            self.status.done, self.status.total = done, total

        for library in self.engine.libraries():
            if self._stop.is_set():
                return
            self.status.library, self.status.done, self.status.total = library.name, 0, 0
            reports = self.engine.index([library.name], progress=progress)
            _log_reports(reports)
        self.status.initial_done = True


def _log_reports(reports: list[IndexReport]) -> None:
    for report in reports:
        for path, message in report.errors:
            print(f"linkly: failed: {path}: {message}", file=sys.stderr, flush=True)
        if report.indexed or report.removed or report.failed:
            print(f"linkly: {report.summary()}", file=sys.stderr, flush=True)
