"""The answers waiting for the caller of a worker pool's run: bounded by count and by bytes."""

from __future__ import annotations

import threading
import time

from linkly_ls.core.indexing.handover import AnswerQueue

CHECK_S = 0.01


def put_in_thread(answers: AnswerQueue, item: str, size: int, stop: threading.Event) -> tuple[threading.Thread, list[bool]]:
    done: list[bool] = []
    thread = threading.Thread(target=lambda: done.append(answers.put(item, size, stop, CHECK_S)))
    thread.start()
    return thread, done


def test_answers_come_out_in_the_order_they_went_in():
    answers, stop = AnswerQueue(max_items=10, max_bytes=1000), threading.Event()
    for item in ("a", "b", "c"):
        assert answers.put(item, 10, stop, CHECK_S)
    assert [answers.get() for _ in range(3)] == ["a", "b", "c"]


def test_a_full_queue_by_count_waits_for_the_caller():
    answers, stop = AnswerQueue(max_items=2, max_bytes=1000), threading.Event()
    answers.put("a", 1, stop, CHECK_S)
    answers.put("b", 1, stop, CHECK_S)
    thread, done = put_in_thread(answers, "c", 1, stop)
    time.sleep(0.1)
    assert not done  # two answers wait: the third waits for room
    assert answers.get() == "a"
    thread.join(2)
    assert done == [True]
    assert [answers.get(), answers.get()] == ["b", "c"]


def test_a_full_queue_by_size_waits_but_one_answer_always_passes():
    answers, stop = AnswerQueue(max_items=100, max_bytes=100), threading.Event()
    assert answers.put("huge", 5000, stop, CHECK_S)  # alone: let through whatever its size
    thread, done = put_in_thread(answers, "small", 10, stop)
    time.sleep(0.1)
    assert not done  # 5,010 bytes would be over the 100 allowed
    assert answers.get() == "huge"
    thread.join(2)
    assert done == [True] and answers.get() == "small"


def test_a_stopped_run_gives_up_waiting():
    answers, stop = AnswerQueue(max_items=1, max_bytes=1000), threading.Event()
    answers.put("a", 1, stop, CHECK_S)
    thread, done = put_in_thread(answers, "b", 1, stop)
    time.sleep(0.05)
    stop.set()
    thread.join(2)
    assert done == [False]
    assert answers.get() == "a"


def test_the_caller_waits_for_an_answer():
    answers, stop = AnswerQueue(max_items=4, max_bytes=1000), threading.Event()
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(answers.get()))
    reader.start()
    time.sleep(0.05)
    assert not got
    answers.put("late", 1, stop, CHECK_S)
    reader.join(2)
    assert got == ["late"]
