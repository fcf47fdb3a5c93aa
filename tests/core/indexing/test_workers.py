"""The worker pool keeps its workers busy while the caller handles an outcome."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from linkly_ls.core.errors import WorkersFailedError
from linkly_ls.core.indexing import workers
from linkly_ls.core.indexing.worker_deaths import marked_after_one_death
from linkly_ls.core.indexing.handover import RunInterrupted
from linkly_ls.core.indexing.workers import WorkerPool


def _wait_until(condition, timeout_s: float = 60.0) -> bool:  # noqa: ANN001 (workers start late on a busy machine)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_workers_go_on_while_the_caller_is_busy_with_an_outcome(tmp_path: Path):
    # Each task makes a folder; the caller, busy with the first outcome, sees every folder
    # appear: the workers were handed the following tasks without waiting for it.
    folders = [tmp_path / f"task-{number}" for number in range(6)]
    with WorkerPool(os.mkdir, size=1) as pool:
        keys = []
        for outcome in pool.run([(folder.name, str(folder)) for folder in folders]):
            if not keys:
                assert _wait_until(lambda: all(folder.is_dir() for folder in folders))
            assert outcome.error is None
            keys.append(outcome.key)
    assert keys == [folder.name for folder in folders]


def test_answers_larger_than_the_queue_allows_all_reach_the_caller(monkeypatch):
    # each answer (a 20,000-character string) is over the byte bound alone: it passes when the queue
    # is empty, and the feeding thread waits for the caller between them
    monkeypatch.setattr(workers, "OUTCOMES_AHEAD_BYTES", 1000)
    with WorkerPool(bytes, size=2) as pool:
        outcomes = list(pool.run([(number, 20_000) for number in range(8)]))
    assert sorted(outcome.key for outcome in outcomes) == list(range(8))
    assert all(outcome.value == bytes(20_000) for outcome in outcomes)


def test_tasks_run_in_the_order_given():
    with WorkerPool(str, size=1) as pool:
        keys = [outcome.key for outcome in pool.run([(name, name) for name in "zyxw"])]
    assert keys == list("zyxw")


def test_a_run_stopped_early_leaves_the_pool_usable():
    with WorkerPool(time.sleep, size=2) as pool:
        for _ in pool.run([(number, 0.2) for number in range(6)]):
            break
        outcomes = list(pool.run([("a", 0), ("b", 0)]))
    assert sorted(outcome.key for outcome in outcomes) == ["a", "b"]
    assert all(outcome.error is None for outcome in outcomes)


def test_an_error_in_a_task_is_its_outcome_and_the_run_goes_on():
    with WorkerPool(abs, size=1) as pool:
        outcomes = list(pool.run([("bad", "text"), ("good", -4)]))
    assert [(outcome.key, outcome.value) for outcome in outcomes] == [("bad", None), ("good", 4)]
    assert outcomes[0].error.startswith("TypeError: ")


def test_closing_the_pool_stops_the_feeding_of_a_run_left_unfinished():
    pool = WorkerPool(time.sleep, size=1)
    run = pool.run([(number, 0.05) for number in range(40)])
    next(run)
    pool.close()
    assert not any(thread.name == "linkly-workers" for thread in threading.enumerate())
    run.close()


def test_an_interrupted_run_ends_its_callers_wait_and_closing_kills_the_busy_worker():
    # the writer stopping while a worker reads a long file: the caller must not wait for its answer
    pool = WorkerPool(time.sleep, size=1)
    run = pool.run([("long", 60), ("next", 0)])
    assert _wait_until(lambda: pool.started)
    threading.Timer(0.3, pool.interrupt).start()
    started = time.monotonic()
    with pytest.raises(RunInterrupted):
        next(run)
    pool.close()
    assert time.monotonic() - started < 10


def test_a_run_after_an_interrupted_one_runs():
    with WorkerPool(abs, size=1) as pool:
        pool.interrupt()
        assert [outcome.value for outcome in pool.run([("a", -1)])] == [1]


def test_a_run_starts_its_workers_before_its_outcomes_are_asked_for(tmp_path: Path):
    # The indexer reads a few small files itself meanwhile: the workers must not wait for that.
    marker = tmp_path / "done"
    with WorkerPool(os.mkdir, size=2) as pool:
        assert not pool.started
        outcomes = pool.run([("only", str(marker))])
        assert _wait_until(marker.is_dir), "the task ran without anyone iterating the run"
        assert pool.started
        assert [outcome.key for outcome in outcomes] == ["only"]


def test_closing_the_pool_stops_a_run_never_iterated():
    pool = WorkerPool(time.sleep, size=2)
    pool.run([(number, 0.05) for number in range(40)])
    pool.close()
    assert not any(thread.name == "linkly-workers" for thread in threading.enumerate())
    assert not pool.started


def test_a_worker_keeps_the_collector_off_what_it_imported_and_collects_young_objects_rarely():
    probe = "__import__('gc').get_threshold()[0], __import__('gc').get_freeze_count()"
    with WorkerPool(eval, size=1) as pool:
        (outcome,) = list(pool.run([("gc", probe)]))
    threshold, frozen = outcome.value
    assert threshold == workers.GC_YOUNG_THRESHOLD
    assert frozen > 1000  # the modules of the fork server, frozen at the worker's start


def test_a_worker_collects_all_generations_after_each_task():
    probe = "__import__('gc').get_stats()[2]['collections']"
    with WorkerPool(eval, size=1) as pool:
        before, after = (outcome.value for outcome in pool.run([("first", probe), ("second", probe)]))
    assert after == before + 1


def test_a_task_waiting_behind_another_has_its_whole_time_limit():
    # Both tasks are sent to the one worker at once; each takes most of the limit, so the second one
    # would time out if its limit counted from when it was sent rather than from when it started.
    assert workers.TASKS_IN_FLIGHT >= 2
    with WorkerPool(time.sleep, size=1, timeout_s=1.5) as pool:
        outcomes = list(pool.run([("first", 1.0), ("second", 1.0)], quick=lambda key: True))
    assert [(outcome.key, outcome.error) for outcome in outcomes] == [("first", None), ("second", None)]


def test_a_task_waiting_behind_one_that_hangs_is_read_by_the_next_worker():
    with WorkerPool(time.sleep, size=1, timeout_s=0.5) as pool:
        outcomes = list(pool.run([("hangs", 30), ("behind", 0), ("last", 0)], quick=lambda key: True))
    assert [outcome.key for outcome in outcomes] == ["hangs", "behind", "last"]
    assert "took longer than 0.5 s" in outcomes[0].error
    assert outcomes[1].error is None and outcomes[2].error is None


def test_a_task_that_is_not_quick_waits_for_an_idle_worker():
    # One long task on each of two workers, then a long one that is not quick: it must not be queued
    # behind the first worker's task (it would wait there while the other worker runs out of work).
    with WorkerPool(time.sleep, size=2) as pool:
        list(pool.run([("warm", 0), ("up", 0)]))  # both workers started
        started = time.monotonic()
        outcomes = list(pool.run([("a", 1.0), ("b", 0.1), ("c", 1.0)], quick=lambda key: key != "c"))
        took = time.monotonic() - started
    assert [outcome.key for outcome in outcomes] == ["b", "a", "c"]
    assert took < 1.8, "c ran after a on the same worker instead of on the idle one"


def test_a_task_waiting_behind_one_that_crashes_is_read_by_the_next_worker():
    with WorkerPool(signal.raise_signal, size=1) as pool:
        outcomes = list(
            pool.run(
                [("crash", signal.SIGSEGV), ("after", signal.SIGCHLD), ("last", signal.SIGCHLD)],
                quick=lambda key: key != "crash",
            )
        )
    assert [outcome.key for outcome in outcomes] == ["crash", "after", "last"]
    assert outcomes[0].error.startswith("the extractor crashed (signal 11)")
    assert outcomes[1].error is None and outcomes[2].error is None


def test_a_quick_task_for_a_worker_that_died_unseen_stays_pending():
    # The worker died on its task and the feeding thread has not collected that yet: the quick task
    # meant to wait behind it cannot be sent, so it stays pending instead of ending the run.
    with WorkerPool(time.sleep, size=1) as pool:
        worker = pool._spawn()
        pool._workers.append(worker)
        worker.tasks.append(("running", 30))
        worker.process.kill()
        worker.process.join(5)
        pending, busy = [("next", 0)], {}
        pool._dispatch(pending, busy, quick=lambda key: True)
        assert pending == [("next", 0)] and list(worker.tasks) == [("running", 30)]


def _dies_the_first_time(marker: str | None) -> str:
    """Ends its worker process the first time it reads `marker` (a file it then makes); answers after."""
    if marker is not None and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(3)
    return "read"


def test_a_file_whose_first_worker_dies_is_read_again_by_a_fresh_one(tmp_path: Path):
    # the death may have another cause than the file (the out-of-memory killer): a file marked failed
    # is not read again until it changes, so one death is not put down to it
    with WorkerPool(_dies_the_first_time, size=1) as pool:
        outcomes = list(pool.run([("flaky", str(tmp_path / "marker")), ("plain", None)]))
    assert sorted((outcome.key, outcome.value, outcome.error) for outcome in outcomes) == [
        ("flaky", "read", None),
        ("plain", "read", None),
    ]


def test_a_file_that_kills_two_workers_fails_even_when_nothing_else_is_read():
    with WorkerPool(signal.raise_signal, size=2) as pool:
        outcomes = list(pool.run([("crash", signal.SIGSEGV)]))
    assert [outcome.key for outcome in outcomes] == ["crash"]
    assert outcomes[0].error == "the extractor crashed (signal 11) twice on this file; the file is probably malformed"
    assert not marked_after_one_death(outcomes[0].error), "a file two workers died on is not read again"


def test_the_marks_of_one_death_are_those_earlier_versions_wrote():
    assert marked_after_one_death("the extractor process died while reading this file")
    assert marked_after_one_death("the extractor crashed (signal 9); the file is probably malformed")
    assert not marked_after_one_death("the extractor process died twice while reading this file")
    assert not marked_after_one_death("extraction took longer than 180 s ([limits] extract_timeout_s); stopped")


def test_workers_that_die_before_reading_any_file_stop_the_run_without_failing_a_file():
    yielded = []
    with WorkerPool(os._exit, size=2) as pool:
        with pytest.raises(WorkersFailedError, match="times in a row without reading a file") as raised:
            for outcome in pool.run([(number, 1) for number in range(20)]):
                yielded.append(outcome)
    assert yielded == []
    # both workers may be found dead in one look, so the count may pass the limit by one
    assert int(str(raised.value).split(" died ")[1].split()[0]) in (8, 9)
