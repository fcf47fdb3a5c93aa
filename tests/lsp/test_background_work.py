"""Work off the event loop: a daemon thread's result or error reaches the awaiting coroutine."""

from __future__ import annotations

import asyncio
import threading

import pytest

from linkly_ls.lsp.background_work import run_in_daemon_thread, run_percentage


def test_the_result_and_the_error_of_work_on_a_daemon_thread_reach_the_coroutine():
    seen: list[bool] = []

    def work(value: int) -> int:
        seen.append(threading.current_thread().daemon)
        return value * 2

    def failing() -> None:
        raise ValueError("a broken file")

    async def main() -> int:
        loop = asyncio.get_running_loop()
        with pytest.raises(ValueError, match="a broken file"):
            await run_in_daemon_thread(loop, failing)
        return await run_in_daemon_thread(loop, work, 21)

    assert asyncio.run(main()) == 42
    assert seen == [True], "a daemon thread: an index run never delays the process exit"


def test_a_run_over_several_libraries_reports_a_rising_percentage() -> None:
    steps = [(position, done, 4) for position in range(3) for done in range(5)]
    percentages = [run_percentage(position, 3, done, total) for position, done, total in steps]
    assert percentages == sorted(percentages) and percentages[0] == 0 and percentages[-1] == 100
