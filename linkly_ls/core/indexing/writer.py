"""The writer role: the one linkly process that indexes, embeds and watches an index.

Several processes may open the same index (`linkly serve`, a `linkly mcp` an
agent spawned, an editor's language server, `linkly index` or `watch`). Only
the one holding `<data_dir>/writer.lock` (the engine's `writer_lock`, an
advisory `flock` the kernel releases if the holder dies) writes; the others
serve what is indexed. Every face takes the role through `IndexWriter`:

- `claim()` fails at once, naming the holder (`linkly index`, `linkly watch`);
- `start()` waits for the role in a daemon thread, then indexes every library,
  starts the chunk vectors and watches (`linkly serve`, `linkly mcp`);
- the language server claims with its own retry loop and calls `index()`,
  `start_vectors()` and `start_watching()` itself, to report `$/progress`;
- `exclusive()` holds the role for one run (`index_library` when no writer
  runs in this process).

While it holds the role, a writer publishes what it is doing (`writer_status.py`)
for `linkly status` in other processes.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.errors import LinklyError
from linkly_ls.core.indexing.handover import RunInterrupted
from linkly_ls.core.indexing.writer_status import (
    EMBEDDING,
    IDLE,
    ONE_RUN,
    SERVES_UNWATCHED,
    INDEXING,
    STARTING,
    WATCHING,
    EmbeddingEta,
    IndexStatus,
    WriterActivity,
    format_duration,
    held_error,
    remove_activity,
    write_activity,
)

if TYPE_CHECKING:
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.indexer import IndexReport, ProgressCallback
    from linkly_ls.core.store.writer_lock import WriterLock

log = logging.getLogger("linkly_ls.writer")

LOCK_RETRY_SECONDS = 1.0
#: the first pause before a failed run is tried again (doubling up to FAILURE_RETRY_MAX_S)
FAILURE_RETRY_S = 15.0
FAILURE_RETRY_MAX_S = 300.0
#: how often a writer checks whether what it does changed, and publishes it
PUBLISH_SECONDS = 1.0
ReportsCallback = Callable[[list["IndexReport"]], None]


class _Stopped(Exception):
    """Raised from the progress callback to end an indexing run early when the writer stops."""


def print_reports(reports: list[IndexReport]) -> None:
    """The default report sink of a background writer: failures and changes, one line each, on stderr.
    A run that changed nothing says nothing (the watcher's catch-up run after the first one would
    repeat its line, files that failed before and did not change included)."""
    for report in reports:
        for path, message in report.errors:
            print(f"linkly: failed: {path}: {message}", file=sys.stderr, flush=True)
        if report.indexed or report.removed or report.errors:
            print(f"linkly: {report.summary()}", file=sys.stderr, flush=True)


class IndexWriter:
    """This process's claim on writing one engine's index, and the work done with it."""

    def __init__(
        self, engine: Engine, watch: bool = True, on_reports: ReportsCallback = print_reports, one_run: bool = False
    ) -> None:
        self.engine = engine
        self.watch = watch
        #: the role is held for one command's run (`linkly index`), not by a process that serves
        self.one_run = one_run
        self.on_reports = on_reports
        self.status = IndexStatus()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watcher: threading.Thread | None = None
        #: `watch_here` runs on a caller's thread (`linkly watch`): watching all the same
        self._watching_here = False
        #: the libraries `watch_here` keeps current, when not all (`linkly watch --library NAME`)
        self._watched_names: list[str] | None = None
        self._watcher_stop = threading.Event()
        #: index runs in progress (a run, a watcher batch)
        self._runs = 0
        self._eta = EmbeddingEta()
        self._publisher: threading.Thread | None = None

    @property
    def lock(self) -> WriterLock:
        return self.engine.writer_lock

    @property
    def held(self) -> bool:
        return self.lock.held

    @property
    def running(self) -> bool:
        """The background role (`start()`) is still at work."""
        return self._thread is not None and self._thread.is_alive()

    def try_claim(self) -> bool:
        lost = self.engine.data_dir_lost()
        if lost is not None:  # the lock now there guards another index than the one this engine has open
            self.status.error = f"{lost}; restart it to index into the folder now there"
            return False
        try:
            acquired = self.lock.try_acquire()
        except OSError as error:  # the folder went after the check above: the next check says so
            self.status.error = f"cannot claim the index in {self.engine.data_dir}: {error}"
            return False
        if acquired:
            self.status.writer = True
            self._start_publishing()
            return True
        return False

    def activity(self) -> WriterActivity:
        """What this writer does now (for `linkly status` and the editors' status)."""
        activity = self._activity()
        if self.one_run:
            activity.role = ONE_RUN
        elif not self.watch:
            activity.role = SERVES_UNWATCHED
        return activity

    def _activity(self) -> WriterActivity:
        status = self.status
        if self._runs:
            phase = self.engine.indexer.phase if "indexer" in self.engine.__dict__ else ""
            return WriterActivity(os.getpid(), INDEXING, status.library, status.done, status.total, phase=phase)
        state = self.engine.vectors.state()
        if state.running:
            now = time.monotonic()
            if self._eta.due(now):
                words = self.engine.vectors.embedded_words()
                if words is not None:
                    self._eta.sample(now, *words)
            eta = self._eta.eta
            embedding = {
                "documents_done": state.done,
                "documents_total": state.total,
                "eta_seconds": None if eta is None or state.done >= state.total else round(eta),
            }
            return WriterActivity(os.getpid(), EMBEDDING, embedding=embedding)
        self._eta.reset()
        if not status.initial_done and self.running:
            return WriterActivity(os.getpid(), STARTING)
        watching = (
            self._watching_here or (self._watcher is not None and self._watcher.is_alive()) or (self.running and self.watch)
        )
        problem = status.error if self.running and status.error else status.watch_problem
        return WriterActivity(
            os.getpid(), WATCHING if watching else IDLE, problem=problem or "", libraries=self._watched_names
        )

    def _start_publishing(self) -> None:
        if self._publisher is not None and self._publisher.is_alive():
            return
        self._publisher = threading.Thread(target=self._publish, name="linkly-writer-status", daemon=True)
        self._publisher.start()

    def _publish(self) -> None:
        """Rewrite the status file when the activity changes, until the role is given up."""
        data_dir = self.engine.data_dir
        published: WriterActivity | None = None
        try:
            while self.held:
                if self._gave_up_on_a_lost_index():
                    return
                current = self.activity()
                if not current.same_as(published):
                    try:
                        write_activity(data_dir, current)
                        published = current
                    except Exception as error:  # a full disk: status is a courtesy; tried again next round
                        log.debug("cannot publish the writer status: %s", error)  # the failed write itself is reported
                if self._stop.wait(PUBLISH_SECONDS):
                    break
        finally:
            try:
                if self.engine.data_dir_lost() is None:  # else the status file now there is another writer's
                    remove_activity(data_dir)
            except OSError:
                pass

    def _gave_up_on_a_lost_index(self) -> bool:
        """When the index folder is gone (`data_dir_lost`): stop indexing and watching, and give up the role,
        for good, saying why once."""
        lost = self.engine.data_dir_lost()
        if lost is None:
            return False
        if self.held:
            self.status.error = f"{lost}; indexing stopped: restart it to index into the folder now there"
            log.error("%s", self.status.error)
            self.interrupt()
            self._watcher_stop.set()
            self.lock.release()
            self.status.writer = False
        return True

    def claim(self) -> None:
        """Become the writer now, or raise IndexHeldError naming the process that is."""
        if not self.try_claim():
            raise held_error(self.lock)

    def check_held(self) -> None:
        """Raise IndexHeldError unless this process is the writer."""
        if not self.held:
            raise held_error(self.lock)

    @contextmanager
    def exclusive(self) -> Iterator[None]:
        """Hold the role for one run: kept if this process already had it, released after otherwise."""
        taken_now = not self.held
        self.claim()
        try:
            yield
        finally:
            if taken_now and not self.running:
                self.lock.release()
                self.status.writer = False

    def index(self, names: list[str] | None = None, progress: ProgressCallback | None = None) -> list[IndexReport]:
        """Index the named libraries (all by default) one by one, as the writer; only what changed is read."""
        self.check_held()
        names = names if names is not None else [library.name for library in self.engine.libraries()]
        reports: list[IndexReport] = []
        self._runs += 1
        try:
            self._index_each(names, progress, reports)
        finally:
            self._runs -= 1
        return reports

    def _index_each(self, names: list[str], progress: ProgressCallback | None, reports: list[IndexReport]) -> None:
        for name in names:
            if self._stop.is_set():
                break
            self.status.library, self.status.done, self.status.total = name, 0, 0

            def track(done: int, total: int, path: str) -> None:
                # Stopping mid-run is safe: what was stored stays, and Engine.recover() finishes
                # the keyword-index work at the next open, as after a crash.
                if self._stop.is_set():
                    raise _Stopped
                self.status.done, self.status.total = done, total
                if progress is not None:
                    progress(done, total, path)

            try:
                reports += self.engine.index([name], progress=track)
            except (_Stopped, RunInterrupted):
                break

    def index_paths(self, paths: set[Path]) -> list[IndexReport]:
        """Re-index just these files or folders (changed, created or deleted), as the writer."""
        from linkly_ls.core.indexing.watcher import apply_changes

        self.check_held()
        self._runs += 1
        try:
            return apply_changes(self.engine, paths)
        except RunInterrupted:  # the writer is stopping
            return []
        finally:
            self._runs -= 1

    def start_vectors(self) -> None:
        """Compute the missing chunk vectors in the engine's background thread (none without a model)."""
        if self.held and not self._stop.is_set():
            self.engine.vectors.start()

    def start_watching(
        self, on_batch: ReportsCallback | None = None, on_error: Callable[[str], None] | None = None
    ) -> None:
        """(Re)start a watcher thread over every library's folders; its batches go to `on_batch`,
        and why it stopped, if it does (a vanished root, an inotify limit), to `on_error`."""
        from linkly_ls.core.indexing.watcher import watch_libraries

        self.stop_watching()
        stop = self._watcher_stop = threading.Event()
        sink = on_batch or self.on_reports

        def watch() -> None:
            try:
                watch_libraries(self.engine, on_batch=sink, stop=stop, on_problem=self._watch_problem)
            except Exception as error:  # say so, keep serving
                self.status.error = f"the file watcher stopped: {error}"
                log.warning("%s", self.status.error)
                if on_error is not None:
                    on_error(self.status.error)

        self._watcher = threading.Thread(target=watch, name="linkly-watcher", daemon=True)
        self._watcher.start()

    def _watch_problem(self, problem: str | None) -> None:
        self.status.watch_problem = problem
        if problem:
            log.warning("%s", problem)
        else:
            log.warning("every library is watched again")

    def stop_watching(self) -> None:
        self._watcher_stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=2.0)
            self._watcher = None

    def watch_here(self, names: list[str] | None = None) -> None:
        """Watch the named libraries (all by default) on the calling thread until `stop()` (or Ctrl-C);
        batches go to `on_reports`."""
        from linkly_ls.core.indexing.watcher import watch_libraries

        self.check_held()
        self._watching_here, self._watched_names = True, names
        try:
            watch_libraries(self.engine, on_batch=self.on_reports, stop=self._stop, names=names, on_problem=self._watch_problem)
        finally:
            self._watching_here, self._watched_names = False, None

    def start(self) -> IndexWriter:
        """Take the role in a daemon thread (waiting while another process has it), index, embed, watch."""
        self._thread = threading.Thread(target=self._run, name="linkly-writer", daemon=True)
        self._thread.start()
        return self

    def interrupt(self) -> None:
        """End the index run under way (of `start()` or of a face's own thread) without waiting for the
        file the workers are reading: what was stored stays, and the next run reads the rest. The
        lock is kept; `stop` also ends the role."""
        self._stop.set()
        self.engine.indexer.interrupt()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop indexing and watching; the lock is kept while a run is still finishing."""
        self.interrupt()
        self.stop_watching()
        if self._thread is not None:
            self._thread.join(timeout)
        if not self.running:
            self.lock.release()
            self.status.writer = False

    def _run(self) -> None:
        """Claim, index, embed, watch. A run that fails (a full disk, a write refused) is tried again
        after a pause that doubles up to FAILURE_RETRY_MAX_S, so a writer never keeps the role while
        doing nothing: the catch-up run of the retry picks up what changed meanwhile."""
        while not self.try_claim():
            if self._stop.wait(LOCK_RETRY_SECONDS):
                return
        pause = FAILURE_RETRY_S
        while not self._stop.is_set():
            try:
                self.on_reports(self.index())
                self.status.initial_done = True
                self.status.error = None
                self.start_vectors()
                if self.watch and not self._stop.is_set():
                    self.watch_here()
                return
            except Exception as error:  # the server keeps serving what is indexed
                self.status.initial_done = True
                if self._gave_up_on_a_lost_index():  # a run that failed because its folder went: no retry
                    return
                self.status.error = f"indexing stopped: {error}; trying again in {format_duration(pause)}"
                if isinstance(error, LinklyError):  # a reason for the user, not a bug: no traceback
                    log.error("%s", self.status.error)
                else:
                    log.exception("%s", self.status.error)
            if self._stop.wait(pause):
                return
            pause = min(pause * 2, FAILURE_RETRY_MAX_S)
