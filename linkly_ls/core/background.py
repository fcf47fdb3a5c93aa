"""Background work (embedding, OCR) gives way to the requests someone is waiting for.

Three means, used together by the long-running processes:

- OS priority: `lower_current_thread()` gives the calling thread nice 19 (Linux,
  where nice is per thread); threads it starts afterwards inherit it, which is
  how onnxruntime's pool threads get it. `lower_process(pid)` does the same for
  a child process (tesseract). Nice 19 rather than SCHED_IDLE: a background
  thread that holds the GIL when it is preempted stalls every request thread
  until it runs again, and an idle-class thread on a busy machine may not run
  for seconds. What serves requests but may be made by a lowered thread (the
  session that reads queries, whose pool threads get its maker's nice) is made
  through `at_normal_priority`.
- A core left free: `background_threads()` is what background embedding uses
  by default, one core fewer than the machine has.
- Yielding: `FOREGROUND` counts the tool calls being answered (`call_tool`
  enters `FOREGROUND.request()`); the embedding loop calls
  `FOREGROUND.wait_turn()` before each model call, which returns once no call
  has been running for QUIET_S (a client sending calls back to back keeps it
  waiting), or after MAX_WAIT_S so that embedding still moves under constant
  load.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

LOW_PRIORITY_NICE = 19
#: how long after the last answered call background work waits before it goes on
QUIET_S = 0.1
#: the longest a background step waits for a quiet moment
MAX_WAIT_S = 2.0
#: how often a waiting background step looks at its stop event
_STOP_POLL_S = 0.1

_lowered = threading.local()
_normal_lock = threading.Lock()
#: one thread kept at the process's own priority, started before the first thread is lowered
_normal_runner: ThreadPoolExecutor | None = None
_normal_nice: int | None = None
T = TypeVar("T")


def background_threads() -> int:
    """Threads for background embedding: all cores but one, at least one."""
    return max(1, (os.cpu_count() or 1) - 1)


def lower_current_thread() -> bool:
    """Nice 19 for the calling thread (and the threads it starts later); False where not supported.

    Only Linux keeps a nice value per thread: elsewhere `setpriority` would
    lower the whole process, request threads included, so nothing is done.
    """
    if not sys.platform.startswith("linux"):
        return False
    _start_normal_runner()
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOW_PRIORITY_NICE)
    except OSError:
        return False
    _lowered.value = True
    return True


def current_thread_is_lowered() -> bool:
    return getattr(_lowered, "value", False)


def at_normal_priority(make: Callable[[], T]) -> T:
    """`make()`, run where the threads it starts get the process's own priority: on the calling thread,
    or, when that thread runs lowered (itself, or started by a lowered thread), on a thread kept at
    normal priority since before the first thread was lowered."""
    runner = _normal_runner
    if runner is None or _thread_nice() <= (_normal_nice or 0):
        return make()
    return runner.submit(make).result()


def _start_normal_runner() -> None:
    """Start the normal-priority thread now, from a thread not yet lowered (a pool starts its thread
    on its first task, and a thread inherits the nice of the thread that starts it)."""
    global _normal_runner, _normal_nice
    with _normal_lock:
        if _normal_runner is not None:
            return
        runner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="linkly-normal-priority")
        try:
            _normal_nice = runner.submit(_thread_nice).result()
        except RuntimeError:  # no thread to be had, or the interpreter is ending: made where asked
            return
        _normal_runner = runner


def _thread_nice() -> int:
    try:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    except OSError:
        return 0


def lower_process(pid: int) -> None:
    """Nice 19 for a child process (best effort: it may have exited already)."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, LOW_PRIORITY_NICE)
    except (OSError, AttributeError):
        pass


class ForegroundGate:
    """How many requests are being answered right now, for background work to wait on."""

    def __init__(self, quiet_s: float = QUIET_S, max_wait_s: float = MAX_WAIT_S) -> None:
        self.quiet_s = quiet_s
        self.max_wait_s = max_wait_s
        self._active = 0
        self._last_end = float("-inf")
        self._changed = threading.Condition()

    @contextmanager
    def request(self) -> Iterator[None]:
        with self._changed:
            self._active += 1
        try:
            yield
        finally:
            with self._changed:
                self._active -= 1
                self._last_end = time.monotonic()
                self._changed.notify_all()

    @property
    def busy(self) -> bool:
        return self._active > 0

    def wait_turn(self, stop: threading.Event | None = None) -> float:
        """Block while requests are answered and until QUIET_S after the last one (at most MAX_WAIT_S,
        or until `stop` is set); returns the seconds waited."""
        started = time.monotonic()
        deadline = started + self.max_wait_s
        with self._changed:
            while stop is None or not stop.is_set():
                now = time.monotonic()
                quiet_at = now if self._active else self._last_end + self.quiet_s
                if (self._active == 0 and quiet_at <= now) or now >= deadline:
                    break
                until = deadline if self._active else min(quiet_at, deadline)
                self._changed.wait(min(until - now, _STOP_POLL_S))
        return time.monotonic() - started


#: the process's gate: every face's tool calls go through `call_tool`, which enters it
FOREGROUND = ForegroundGate()
