"""Work the language server does off its event loop: daemon threads that never hold up the process's
exit, and `$/progress` reports for a run."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types

from linkly_ls.lsp.server import LinklyLanguageServer

T = TypeVar("T")
PROGRESS_INTERVAL_S = 0.2


def run_in_daemon_thread(loop: asyncio.AbstractEventLoop, function: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """Like `asyncio.to_thread`, but on a daemon thread: an index run never delays the process exit."""
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def target() -> None:
        try:
            result = function(*args)
        except BaseException as error:  # handed to the awaiting coroutine
            loop.call_soon_threadsafe(settle, None, error)
        else:
            loop.call_soon_threadsafe(settle, result, None)

    threading.Thread(target=target, name=f"linkly-{getattr(function, '__name__', 'work')}", daemon=True).start()
    return future


def run_percentage(position: int, count: int, done: int, total: int) -> int:
    """How far a run over `count` libraries is, `done` of `total` files into its `position`-th (from 0)."""
    return int(100 * (position + done / max(total, 1)) / max(count, 1))


class ProgressReporter:
    """`$/progress` for one run; does nothing when the client did not offer `window.workDoneProgress`."""

    def __init__(self, ls: LinklyLanguageServer, token: str | None) -> None:
        self.ls = ls
        self.token = token
        self._last_report = 0.0

    @classmethod
    async def begin(cls, ls: LinklyLanguageServer, title: str) -> ProgressReporter:
        if not ls.client_supports("window.work_done_progress"):
            return cls(ls, None)
        token = f"linkly-index-{uuid.uuid4().hex[:8]}"
        try:
            await ls.work_done_progress.create_async(token)
        except Exception:  # the client refused the token: index without progress
            return cls(ls, None)
        ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, percentage=0, cancellable=False))
        return cls(ls, token)

    def for_library(self, library: str, position: int = 0, count: int = 1) -> Callable[[int, int, str], None] | None:
        """An indexer progress callback (called on the indexing thread), or None without a token. The run's
        `count` libraries each take an equal share of the percentage, this one the `position`-th: the LSP
        wants it rising, and a client may ignore a value that falls back to 0 at the next library."""
        if self.token is None:
            return None
        token = self.token

        def report(done: int, total: int, path: str) -> None:
            now = time.monotonic()
            if done < total and now - self._last_report < PROGRESS_INTERVAL_S:
                return
            self._last_report = now
            value = types.WorkDoneProgressReport(
                message=f"{library}: {done}/{total} {Path(path).name}",
                percentage=run_percentage(position, count, done, total),
            )
            self.ls.call_soon(self.ls.work_done_progress.report, token, value)

        return report

    def end(self, message: str) -> None:
        if self.token is not None:
            self.ls.call_soon(self.ls.work_done_progress.end, self.token, types.WorkDoneProgressEnd(message=message))
