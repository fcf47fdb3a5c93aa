"""The answers of a worker pool's run, waiting for the caller: bounded by count and by size.

The feeding thread hands each answer over here and then gives the workers their next tasks. When
the caller is busy (writing the index: a commit of the keyword index takes a tenth of a second and
more), answers pile up; once the queue is full the feeding thread waits, so the workers run out of
tasks and wait too. A folder of small notes answers hundreds of times a second, so the queue must
hold many of them; a long PDF's answer can be tens of megabytes, so it must not hold many of those.
The bound is therefore both: at most `max_items` answers and `max_bytes` of them as the workers
sent them (one answer is always let through, whatever its size).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Any


class RunInterrupted(Exception):
    """Raised to the caller of a run that `WorkerPool.interrupt` ended (the writer is stopping)."""


class AnswerQueue:
    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: deque[tuple[Any, int]] = deque()
        self._bytes = 0
        self._changed = threading.Condition()

    def put(self, item: Any, size: int, stop: threading.Event, check_s: float) -> bool:
        """Queue `item` (`size` bytes), waiting for room; False (not queued) once `stop` is set."""
        with self._changed:
            while not self._has_room(size):
                if stop.is_set():
                    return False
                self._changed.wait(check_s)
            self._items.append((item, size))
            self._bytes += size
            self._changed.notify_all()
            return True

    def get(self, interrupt: threading.Event | None = None, check_s: float = 0.25) -> Any:
        """The oldest answer, waiting for one; None once `interrupt` is set while none is there."""
        with self._changed:
            while not self._items:
                if interrupt is not None and interrupt.is_set():
                    return None
                self._changed.wait(check_s if interrupt is not None else None)
            item, size = self._items.popleft()
            self._bytes -= size
            self._changed.notify_all()
            return item

    def _has_room(self, size: int) -> bool:
        if not self._items:
            return True
        return len(self._items) < self.max_items and self._bytes + size <= self.max_bytes
