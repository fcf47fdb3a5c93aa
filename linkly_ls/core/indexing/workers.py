"""Extraction in worker processes, each task under a time limit and a memory cap.

A file that hangs a parser or makes it allocate without bound costs one worker
process, which is killed and replaced; the indexer records a clear error for
that file and goes on with the rest.

A worker's death is put down to its file only when a second worker dies on it
too: the first death may have another cause (the system's out-of-memory killer,
a signal sent to the process), and a file marked failed is not read again
until it changes. While no worker of a run has answered, such failures are
held back; if the workers keep dying (an installation they cannot start from),
the run stops with `WorkersFailedError` and no file is marked failed.

A worker collects garbage rarely: extraction builds millions of small objects
(MuPDF's JSON of every PDF page parsed into dicts, a line object per line) and
frees them without cycles, yet with CPython's default thresholds a collection
fell every 700 of them, and each full one scanned every module the fork server
had imported: 0.58 of 9.1 CPU-s extracting the home-like bench corpus in one
process. The imported objects are frozen (out of the collector's sight, and
their pages stay shared with the fork server), a young collection waits for
`GC_YOUNG_THRESHOLD` new objects, and a full one runs after each task, once its
answer is sent: it finds what a task left in cycles (an HTML parse tree) while
the frozen modules are not scanned, so a worker's memory stays as it was (peak
RSS 171 MB on the corpora's HTML, EPUB and Office files in one process, 203 MB
without that collection).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.reduction import ForkingPickler
from typing import Any

from linkly_ls.core.errors import WorkersFailedError
from linkly_ls.core.indexing.handover import AnswerQueue, RunInterrupted
from linkly_ls.core.indexing.worker_deaths import Deaths, death_reason

DEFAULT_TIMEOUT_S = 180.0
DEFAULT_MEMORY_MB = 3072
#: answers a run holds for its caller before the feeding thread waits for the caller (`handover.py`):
#: this many per worker, and this many bytes in all as the workers sent them. With 16 a worker, a
#: folder of small notes filled the queue during each commit of the keyword index, and the workers
#: then waited for tasks (1.8 s each of a 9 s run of 4,570 notes)
OUTCOMES_AHEAD_PER_WORKER = 256
OUTCOMES_AHEAD_BYTES = 64 * 2**20
#: tasks a worker holds at once when those behind the first are quick ones (`run`'s `quick`): the next
#: waits in its pipe when it answers, so it starts at once instead of when the feeding thread, which
#: shares the indexer's interpreter lock (switched every 5 ms) with the thread writing the index, has
#: read the answer; with one, the workers of a folder of small notes (2-3 ms each) were starved. A
#: long task never waits behind another: it would keep the run going after the other worker is done
TASKS_IN_FLIGHT = 2
#: how often the feeding thread looks whether its caller stopped the run early
STOP_CHECK_S = 0.25
#: container objects allocated (net) before a worker's young-generation collection; CPython's default is 700
GC_YOUNG_THRESHOLD = 20_000
#: deaths in a row, no worker of the run having answered yet, after which the run stops (at least this many,
#: and at least 4 a worker): the workers cannot run, whatever the files hold
DEATHS_BEFORE_GIVING_UP = 8
_FINISHED = object()


def _start_method() -> str:
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def start_fork_server(preload: tuple[str, ...]) -> bool:
    """Start the fork server that this process's pools fork their workers from, importing `preload`,
    and return at once, while it imports (False where workers are spawned instead). A pool created
    later keeps this server and its preload."""
    if _start_method() != "forkserver":
        return False
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(preload))
    from multiprocessing import forkserver

    forkserver.ensure_running()
    return True


@dataclass
class TaskOutcome:
    key: Any
    value: Any = None
    error: str | None = None
    #: wall time from handing the task to a worker until its answer, its death or its timeout
    seconds: float = 0.0


def _worker_main(connection: Connection, function: Callable, memory_mb: int) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the indexing process stops the run and its
    # workers, which would otherwise each print a KeyboardInterrupt traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    try:
        import resource

        limit = memory_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass
    while True:
        try:
            task = connection.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        key, argument = task
        try:
            try:
                connection.send((key, function(argument), None))
            except MemoryError:
                connection.send(
                    (key, None, f"ran out of memory (over the {memory_mb} MB cap per file, [limits] extract_memory_mb)")
                )
            except Exception as error:  # reported per file; the worker lives on
                connection.send((key, None, f"{type(error).__name__}: {error}"))
        except (BrokenPipeError, ConnectionResetError):  # the pool stopped the run or its process ended
            return
        gc.collect()


def _hand_over(outcomes: AnswerQueue, item: Any, stop: threading.Event, size: int = 0) -> None:
    """Queue `item` for the caller; give up if the caller stopped the run (and no longer reads)."""
    outcomes.put(item, size, stop, STOP_CHECK_S)


class _Worker:
    def __init__(self, context, function: Callable, memory_mb: int) -> None:
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child, function, memory_mb), daemon=True)
        self.process.start()
        child.close()
        #: tasks sent and not answered yet, in the order the worker takes them
        self.tasks: deque[tuple[Any, Any]] = deque()
        #: when the first of `tasks` times out: its limit counts from when the worker started it
        self.deadline = 0.0

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.connection.close()


class WorkerPool:
    """Runs `function(argument)` for many arguments in `size` processes."""

    def __init__(
        self,
        function: Callable,
        size: int | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        memory_mb: int = DEFAULT_MEMORY_MB,
        preload: tuple[str, ...] = (),
    ) -> None:
        """`preload`: modules the fork server imports once, so every worker forked from it starts with them."""
        self.function = function
        self.size = size or max(1, min(os.cpu_count() or 1, 4))
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        method = _start_method()
        self._context = multiprocessing.get_context(method)
        if method == "forkserver" and preload:
            # Takes effect only if this process has not started its fork server yet.
            self._context.set_forkserver_preload(list(preload))
        self._workers: list[_Worker] = []
        self._feeding: tuple[threading.Thread, threading.Event] | None = None
        self._interrupt = threading.Event()

    def _spawn(self) -> _Worker:
        return _Worker(self._context, self.function, self.memory_mb)

    @property
    def started(self) -> bool:
        """True once worker processes are up (a run after the first finds them ready)."""
        return bool(self._workers)

    def run(self, tasks: Iterable[tuple[Any, Any]], quick: Callable[[Any], bool] | None = None) -> Iterator[TaskOutcome]:
        """Start a run at once; iterate the result for an outcome per (key, argument) task, in completion order.

        The workers are started and fed by a thread of their own, so the caller can do
        other work while their processes start (the first start takes a few tenths of a
        second), and a worker that finishes while the caller is busy with an earlier
        outcome (writing the index takes a good part of a second) gets its next task at
        once instead of waiting for it. A run left before its end is stopped by `stop_run`,
        by the next run or by `close` (iterating it to its end, or closing the iteration
        once started, stops it too). `quick(key)`: whether that task may wait in a busy worker's pipe
        (TASKS_IN_FLIGHT); None: none may.
        """
        self.stop_run()
        self._interrupt.clear()
        pending = list(tasks)
        pending.reverse()
        for worker in list(self._workers):
            if worker.tasks:  # left busy by a run whose consumer stopped early (e.g. disk full)
                self._replace(worker)
        wanted = min(self.size, max(len(pending), 1))
        outcomes = AnswerQueue(OUTCOMES_AHEAD_PER_WORKER * wanted, OUTCOMES_AHEAD_BYTES)
        stop = threading.Event()
        feeder = threading.Thread(
            target=self._feed, args=(pending, wanted, outcomes, stop, quick), name="linkly-workers", daemon=True
        )
        self._feeding = (feeder, stop)
        feeder.start()
        return self._outcomes(outcomes)

    def _outcomes(self, outcomes: AnswerQueue) -> Iterator[TaskOutcome]:
        try:
            while True:
                item = outcomes.get(self._interrupt, STOP_CHECK_S)
                if self._interrupt.is_set():
                    raise RunInterrupted
                if item is _FINISHED:
                    return
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.stop_run()

    def interrupt(self) -> None:
        """End the current run from another thread: its caller gets `RunInterrupted` within STOP_CHECK_S
        instead of waiting for a long PDF's part; busy workers are replaced by the next run or killed by `close`."""
        self._interrupt.set()

    def stop_run(self) -> None:
        """Stop the feeding thread of a run whose caller left without finishing it (a no-op after a
        finished run); a worker still busy with a task is replaced when the next run starts."""
        if self._feeding is not None:
            feeder, stop = self._feeding
            stop.set()
            feeder.join()
            self._feeding = None

    def _feed(
        self,
        pending: list[tuple[Any, Any]],
        wanted: int,
        outcomes: AnswerQueue,
        stop: threading.Event,
        quick: Callable[[Any], bool] | None,
    ) -> None:
        """The feeding thread: start workers, hand out tasks, collect answers, deaths and timeouts, until done or stopped."""
        try:
            while len(self._workers) < wanted and not stop.is_set():
                self._workers.append(self._spawn())
            busy: dict[Connection, _Worker] = {}
            deaths = Deaths()
            while (pending or busy) and not stop.is_set():
                self._dispatch(pending, busy, quick)
                nearest = min(worker.deadline for worker in busy.values())
                timeout = min(STOP_CHECK_S, max(0.0, nearest - time.monotonic()))
                collected = self._collect(wait(list(busy), timeout=timeout), busy, pending, deaths)
                finished = self._released(collected, deaths)
                self._dispatch(pending, busy, quick)
                for outcome, size in finished:
                    _hand_over(outcomes, outcome, stop, size)
            for outcome, size in deaths.held:  # the run ended before any worker answered: a few files' own deaths
                _hand_over(outcomes, outcome, stop, size)
        except BaseException as error:  # noqa: BLE001 - raised again in the caller's thread
            _hand_over(outcomes, error, stop)
        finally:
            _hand_over(outcomes, _FINISHED, stop)

    def _released(self, finished: list[tuple[TaskOutcome, int]], deaths: Deaths) -> list[tuple[TaskOutcome, int]]:
        """The outcomes to hand over now: none while no worker of the run has answered (held back), then
        the held ones first; raises WorkersFailedError once the workers have died too often for that."""
        if deaths.answered:
            released, deaths.held = deaths.held + finished, []
            return released
        deaths.held += finished
        if deaths.in_a_row >= max(DEATHS_BEFORE_GIVING_UP, 4 * self.size):
            raise WorkersFailedError(
                f"the extraction workers died {deaths.in_a_row} times in a row without reading a file "
                f"(the last: {deaths.last_reason}); no file was marked as failed. Is the installation complete? "
                "Index again once it is."
            )
        return []

    def _collect(
        self, ready: list[Any], busy: dict[Connection, _Worker], pending: list[tuple[Any, Any]], deaths: Deaths
    ) -> list[tuple[TaskOutcome, int]]:
        """Outcomes of the workers that answered or died, and of those past their deadline, each with the
        size of the answer as sent (0 for a death or a timeout). A worker that dies or is stopped fails
        only the task it was reading, and that only on its second death (the first time, the task goes
        back to the front of `pending`, which is in reverse order); the tasks waiting behind it go back
        to the front as well."""
        finished: list[tuple[TaskOutcome, int]] = []
        for connection in ready:
            worker = busy[connection]
            task = worker.tasks.popleft()
            key = task[0]
            now = time.monotonic()
            seconds = now - (worker.deadline - self.timeout_s)
            try:
                answer = connection.recv_bytes()
                _, value, error = ForkingPickler.loads(answer)
                finished.append((TaskOutcome(key=key, value=value, error=error, seconds=seconds), len(answer)))
                deaths.answered, deaths.in_a_row = True, 0
            except (EOFError, OSError):
                signal_number = self._killing_signal(worker)
                self._give_back(worker, pending)
                self._replace(worker)
                deaths.in_a_row += 1
                deaths.last_reason = death_reason(signal_number)
                if key in deaths.retried:
                    finished.append((TaskOutcome(key=key, error=death_reason(signal_number, twice=True), seconds=seconds), 0))
                else:
                    deaths.retried.add(key)
                    pending.append(task)
            if worker.tasks:
                worker.deadline = now + self.timeout_s  # it starts its next task now
            else:
                busy.pop(connection)
        now = time.monotonic()
        for connection, worker in list(busy.items()):
            if worker.deadline <= now:
                busy.pop(connection)
                key = worker.tasks.popleft()[0]
                self._give_back(worker, pending)
                self._replace(worker)
                error = f"extraction took longer than {self.timeout_s:g} s ([limits] extract_timeout_s); stopped"
                finished.append((TaskOutcome(key=key, error=error, seconds=self.timeout_s), 0))
        return finished

    @staticmethod
    def _give_back(worker: _Worker, pending: list[tuple[Any, Any]]) -> None:
        while worker.tasks:
            pending.append(worker.tasks.pop())

    def _dispatch(
        self, pending: list[tuple[Any, Any]], busy: dict[Connection, _Worker], quick: Callable[[Any], bool] | None
    ) -> None:
        """Give each idle worker the next pending task (`pending` is in reverse order), then each worker
        the following ones while they are quick, up to TASKS_IN_FLIGHT."""
        for index, worker in enumerate(self._workers):
            if pending and not worker.tasks:
                if not worker.process.is_alive():
                    worker = self._workers[index] = self._spawn()
                worker.deadline = time.monotonic() + self.timeout_s
                self._send(worker, pending.pop(), busy)
        if quick is None:
            return
        for worker in self._workers:
            while pending and len(worker.tasks) < TASKS_IN_FLIGHT and quick(pending[-1][0]):
                try:
                    self._send(worker, pending[-1], busy)
                except OSError:  # it died on its task (a crash the next collect reports): keep this one
                    worker.tasks.pop()
                    break
                pending.pop()

    @staticmethod
    def _send(worker: _Worker, task: tuple[Any, Any], busy: dict[Connection, _Worker]) -> None:
        worker.tasks.append(task)
        worker.connection.send(task)
        busy[worker.connection] = worker

    @staticmethod
    def _killing_signal(worker: _Worker) -> int | None:
        """The signal that ended a dead worker, or None when it exited on its own."""
        worker.process.join(1)
        code = worker.process.exitcode
        return -code if code is not None and code < 0 else None

    def _replace(self, worker: _Worker) -> None:
        index = self._workers.index(worker)
        worker.kill()
        self._workers[index] = self._spawn()

    def close(self) -> None:
        self.stop_run()
        for worker in self._workers:
            if worker.tasks:  # busy with a task whose answer no one reads now: waiting would only delay the exit
                worker.kill()
                continue
            try:
                worker.connection.send(None)
            except (OSError, ValueError):
                pass
        for worker in self._workers:
            worker.process.join(2)
            if worker.process.is_alive():
                worker.kill()
        self._workers = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
