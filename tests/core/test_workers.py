"""The worker pool keeps its workers busy while the caller handles an outcome."""

from __future__ import annotations

from linkly_ls.core.workers import WorkerPool


def test_the_next_task_is_handed_out_before_an_outcome_is_yielded():
    with WorkerPool(abs, size=1) as pool:
        busy_while_handling = []
        outcomes = []
        for outcome in pool.run([("a", -1), ("b", -2), ("c", -3)]):
            busy_while_handling.append(pool._workers[0].task is not None)
            outcomes.append((outcome.key, outcome.value))
    assert outcomes == [("a", 1), ("b", 2), ("c", 3)]
    assert busy_while_handling == [True, True, False]


def test_tasks_run_in_the_order_given():
    with WorkerPool(str, size=1) as pool:
        keys = [outcome.key for outcome in pool.run([(name, name) for name in "zyxw"])]
    assert keys == list("zyxw")
