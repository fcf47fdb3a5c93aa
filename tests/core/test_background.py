"""Background work's means of giving way: per-thread nice 19, and the gate of requests being answered."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from linkly_ls.core.background import (
    LOW_PRIORITY_NICE,
    ForegroundGate,
    at_normal_priority,
    background_threads,
    current_thread_is_lowered,
    lower_current_thread,
    lower_process,
)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice is per thread on Linux only")


def thread_nice(native_id: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, native_id)


@linux_only
def test_a_lowered_thread_and_the_threads_it_starts_get_nice_19_and_the_others_keep_theirs():
    before = thread_nice(threading.get_native_id())
    seen: dict[str, int | bool] = {}

    def child() -> None:
        seen["child"] = thread_nice(threading.get_native_id())

    def background() -> None:
        seen["lowered"] = lower_current_thread()
        seen["flag"] = current_thread_is_lowered()
        seen["self"] = thread_nice(threading.get_native_id())
        started = threading.Thread(target=child)
        started.start()
        started.join()

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    assert seen == {"lowered": True, "flag": True, "self": LOW_PRIORITY_NICE, "child": LOW_PRIORITY_NICE}
    assert thread_nice(threading.get_native_id()) == before and not current_thread_is_lowered()


@linux_only
def test_a_child_process_is_lowered():
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        lower_process(child.pid)
        assert os.getpriority(os.PRIO_PROCESS, child.pid) == LOW_PRIORITY_NICE
    finally:
        child.communicate(b"")
    lower_process(child.pid)  # gone by now: nothing to do, no error


def test_background_embedding_leaves_a_core_free():
    assert background_threads() == max(1, (os.cpu_count() or 1) - 1)


def test_an_idle_gate_lets_background_work_go_at_once():
    """No request yet: no quiet moment to wait for (a long one, so that a pause of this thread on a busy
    machine cannot pass for it)."""
    assert ForegroundGate(quiet_s=60, max_wait_s=120).wait_turn() < 30


class _SeenStop(threading.Event):
    """A stop event that tells when `wait_turn` first looks at it: the wait has begun by then."""

    def __init__(self) -> None:
        super().__init__()
        self.looked_at = threading.Event()

    def is_set(self) -> bool:
        self.looked_at.set()
        return super().is_set()


def test_background_work_waits_for_the_request_and_a_quiet_moment_after_it():
    """The request lasts 0.3 s from the moment the wait has begun (however late the thread starts)."""
    gate = ForegroundGate(quiet_s=0.2, max_wait_s=10)
    waited: list[float] = []
    stop = _SeenStop()
    with gate.request():
        assert gate.busy
        thread = threading.Thread(target=lambda: waited.append(gate.wait_turn(stop)))
        thread.start()
        assert stop.looked_at.wait(30)
        time.sleep(0.3)
        assert thread.is_alive()
        ended = time.monotonic()
    thread.join(30)
    assert not gate.busy
    assert waited and waited[0] >= 0.45 and time.monotonic() - ended >= 0.19


def test_under_constant_requests_background_work_still_moves_after_max_wait():
    gate = ForegroundGate(quiet_s=0.05, max_wait_s=0.3)
    with gate.request():
        waited = gate.wait_turn()
    assert 0.29 <= waited < 1.0


def test_a_stop_event_ends_the_wait():
    gate = ForegroundGate(max_wait_s=30)
    stop = threading.Event()
    threading.Timer(0.2, stop.set).start()
    with gate.request():
        assert gate.wait_turn(stop) < 1.0


@linux_only
def test_what_must_serve_requests_is_made_at_normal_priority_even_from_a_lowered_thread():
    """A lowered thread, or one it started, hands `at_normal_priority` work to a thread at the process's
    priority, so the threads that work starts (onnxruntime's pool) get that priority too."""
    normal = thread_nice(threading.get_native_id())
    seen: dict[str, int] = {}

    def started_by_the_work() -> None:
        seen["started"] = thread_nice(threading.get_native_id())

    def work() -> int:
        thread = threading.Thread(target=started_by_the_work)
        thread.start()
        thread.join()
        return thread_nice(threading.get_native_id())

    def background() -> None:
        lower_current_thread()
        seen["lowered"] = at_normal_priority(work)
        inherited = threading.Thread(target=lambda: seen.__setitem__("inherited", at_normal_priority(work)))
        inherited.start()
        inherited.join()

    thread = threading.Thread(target=background)
    thread.start()
    thread.join()
    assert seen == {"lowered": normal, "started": normal, "inherited": normal}
    assert at_normal_priority(lambda: thread_nice(threading.get_native_id())) == normal


@linux_only
def test_a_thread_is_still_lowered_when_no_normal_priority_thread_can_be_started(monkeypatch):
    from linkly_ls.core import background

    class NoThreads:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def submit(self, *args, **kwargs):
            raise RuntimeError("can't start new thread")

    monkeypatch.setattr(background, "_normal_runner", None)
    monkeypatch.setattr(background, "ThreadPoolExecutor", NoThreads)
    seen: dict[str, object] = {}

    def lowered() -> None:
        seen["lowered"] = lower_current_thread()
        seen["inline"] = at_normal_priority(lambda: thread_nice(threading.get_native_id()))

    thread = threading.Thread(target=lowered)
    thread.start()
    thread.join()
    assert seen == {"lowered": True, "inline": LOW_PRIORITY_NICE}
