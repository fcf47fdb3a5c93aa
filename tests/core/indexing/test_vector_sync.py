"""Background embedding gives way: nice 19, waits while tool calls are answered, stops within one model call."""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from linkly_ls.core import background
from linkly_ls.core.background import LOW_PRIORITY_NICE
from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.embedding.static import STATIC_MODEL_ID
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.embedding_rounds import passage_text
from linkly_ls.core.search.chunking import Chunk
from linkly_ls.core.store.records import DocumentRecord
from linkly_ls.core.tools import call_tool

#: how long to wait for work of the background thread: at nice 19 on a busy machine it gets what
#: the other processes leave, and loading the model alone took 100 s beside four busy processes
BACKGROUND_TIMEOUT_S = 300.0

WORDS = "ownership borrowing lifetime trait struct enum match closure iterator slice vector string".split()


def write_notes(folder: Path, count: int, sections: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        body = []
        for section in range(sections):
            words = " ".join(WORDS[(number + section + k) % len(WORDS)] for k in range(60))
            body.append(f"## Section {section}\n\n{words}.\n")
        (folder / f"note-{number:03d}.md").write_text(f"# Note {number}\n\n" + "\n".join(body), encoding="utf-8")


def indexed_engine(root: Path, notes: int, sections: int) -> Engine:
    write_notes(root / "notes", notes, sections)
    return indexed_engine_of(root)


def indexed_engine_of(root: Path) -> Engine:
    """An engine over `root/notes` with the bundled model, its keyword index built."""
    config = Config(
        data_dir=root / "data",
        libraries=[LibraryConfig(name="notes", paths=[root / "notes"])],
        raw={"embedding": {"model": "bundled"}},
    )
    engine = Engine(config)
    engine.index()
    return engine


def embedding_thread() -> threading.Thread:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for thread in threading.enumerate():
            if thread.name == "linkly-embedding":
                return thread
        time.sleep(0.01)
    raise AssertionError("no embedding thread")


def all_embedded(engine: Engine, documents: int) -> bool:
    """The model's run (not the first pass before it) has embedded `documents` and stopped."""
    state = engine.vectors.state()
    return state.done == documents and not state.running and state.model != STATIC_MODEL_ID


def wait_for(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice is per thread on Linux only")
def test_the_background_thread_runs_at_nice_19_and_embeds_everything(tmp_path):
    engine = indexed_engine(tmp_path, notes=4, sections=2)
    try:
        engine.vectors.start()
        thread = embedding_thread()
        assert wait_for(lambda: os.getpriority(os.PRIO_PROCESS, thread.native_id) == LOW_PRIORITY_NICE, 60)
        assert wait_for(lambda: all_embedded(engine, 4), BACKGROUND_TIMEOUT_S)
        assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != LOW_PRIORITY_NICE
    finally:
        engine.close()


def test_embedding_waits_while_a_tool_call_is_answered(tmp_path, monkeypatch):
    monkeypatch.setattr(background.FOREGROUND, "max_wait_s", 60.0)
    engine = indexed_engine(tmp_path, notes=6, sections=2)
    try:
        with background.FOREGROUND.request():  # a search being answered, as `call_tool` marks it
            engine.vectors.start()
            assert wait_for(lambda: engine.vectors.state().total == 6, BACKGROUND_TIMEOUT_S)
            time.sleep(1.0)
            assert engine.vectors.state().embedded == 0
        assert wait_for(lambda: all_embedded(engine, 6), BACKGROUND_TIMEOUT_S)
        assert call_tool(engine, "search", {"query": "ownership borrowing"}).mode == "hybrid"
    finally:
        engine.close()


def test_close_stops_background_embedding_within_one_model_call(tmp_path, monkeypatch):
    """A round holds hundreds of passages, minutes of work at nice 19 on a busy machine: closing
    must not wait for the round, nor for one call of PASSAGES_PER_CALL of them.

    Counted in model calls, not seconds: at nice 19 on a busy machine one call alone can take
    seconds, and on a fast one the whole round can end within a second. The background thread
    gives way (`yield_to_requests`) before every model call; `close()` comes as the first begins."""
    engine = indexed_engine(tmp_path, notes=30, sections=12)
    vectors = engine.vectors
    give_way = vectors.yield_to_requests
    went_on: list[float] = []
    first_model_call = threading.Event()

    def counted() -> None:
        give_way()  # raises once `close()` is called
        went_on.append(time.monotonic())
        if len(went_on) == 2:  # the round's start, then the first model call
            first_model_call.set()

    monkeypatch.setattr(vectors, "yield_to_requests", counted)
    try:
        vectors.start()
        thread = embedding_thread()
        assert first_model_call.wait(BACKGROUND_TIMEOUT_S), "no model call began"
    finally:
        closing = time.monotonic()
        engine.close()  # waits 30 s at most: a starved call may still be running, and must end the thread
    thread.join(BACKGROUND_TIMEOUT_S)
    assert not thread.is_alive()
    assert vectors.state().done == 0, "the round ended before close(): it stopped nothing"
    assert sum(when >= closing for when in went_on) <= 1, went_on


def test_indexes_still_in_use_by_the_background_thread_are_left_for_it_to_close(tmp_path, monkeypatch):
    """A model call at nice 19 on a saturated machine can outlast `close()`'s wait: the indexes are
    not closed under it, and the thread closes them (releasing the writer lock) as it stops."""
    from linkly_ls.core.indexing import vector_sync

    monkeypatch.setattr(vector_sync, "CLOSE_WAIT_SECONDS", 0.2)
    engine = indexed_engine(tmp_path, notes=30, sections=12)
    vectors = engine.vectors
    give_way = vectors.yield_to_requests
    in_model_call, model_call_ends = threading.Event(), threading.Event()
    calls: list[int] = []

    def slow_model_call() -> None:
        calls.append(1)
        if len(calls) == 2:  # the first model call: held as a starved one would be
            in_model_call.set()
            model_call_ends.wait(BACKGROUND_TIMEOUT_S)
        give_way()

    monkeypatch.setattr(vectors, "yield_to_requests", slow_model_call)
    vectors.start()
    thread = embedding_thread()
    assert in_model_call.wait(BACKGROUND_TIMEOUT_S), "no model call began"
    (index,) = vectors._indexes.values()
    engine.close()
    assert thread.is_alive() and index.writable and index._took_writer_lock, "closed under the running thread"
    model_call_ends.set()
    thread.join(BACKGROUND_TIMEOUT_S)
    assert not thread.is_alive()
    assert not index._took_writer_lock and vectors._indexes == {}


def test_coverage_and_status_never_wait_for_the_vector_index_to_open(tmp_path):
    """Opening a large vector index holds the open lock for as long as it takes; coverage is read
    from the catalog alone, so `linkly status` and `list_libraries` still answer meanwhile."""
    engine = indexed_engine(tmp_path, notes=3, sections=2)
    try:
        engine.vectors.start()
        assert wait_for(lambda: all_embedded(engine, 3), BACKGROUND_TIMEOUT_S)
        assert engine.vectors.coverage() == {"notes": 1.0}
        words = engine.vectors.embedded_words()
        assert words is not None and words[0] == words[1] > 0
        answers: dict[str, object] = {}

        def ask() -> None:
            answers["coverage"] = engine.vectors.coverage()
            answers["words"] = engine.vectors.embedded_words()
            answers["libraries"] = call_tool(engine, "list_libraries", {}).to_json()["libraries"]

        with engine.vectors._open_lock:  # as while another thread opens the index
            asker = threading.Thread(target=ask)
            asker.start()
            asker.join(10)
            assert not asker.is_alive(), "coverage waited for the vector index"
        assert answers["coverage"] == {"notes": 1.0} and answers["words"] == words
        assert answers["libraries"][0]["vector_coverage"] == 1.0
    finally:
        engine.close()


def passage_record(title: str) -> DocumentRecord:
    return DocumentRecord(
        doc_id="d1", library="notes", path="/notes/x.txt", doc_type="txt", title=title, size=1, mtime_ns=0,
        content_hash="h", word_count=3, total_lines=1, has_outline=False, language="en", keywords=[], outline=[],
        page_starts=[], warnings=[], text_missing_reason=None, indexed_at=0.0,
    )


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("100", "Tshombe leaves Katanga."),
        ("2024-03-01", "Tshombe leaves Katanga."),
        ("The Congo", "The Congo\nTshombe leaves Katanga."),
        ("1984 notes", "1984 notes\nTshombe leaves Katanga."),
    ],
)
def test_a_title_without_a_letter_is_left_out_of_the_embedded_passage(title, expected):
    chunk = Chunk(number=0, start_line=1, end_line=1, headings="", text="Tshombe leaves Katanga.")
    assert passage_text(passage_record(title), chunk) == expected


def test_a_new_chunking_version_embeds_only_the_passages_whose_text_changed(tmp_path, monkeypatch):
    """Notes titled by a number ("100.txt") lose the title from their passages under the new version;
    the others' passages are unchanged and keep their vectors."""
    from linkly_ls.core.indexing import embedding_rounds, refined_coverage
    from linkly_ls.core.search import vectors

    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "100.txt").write_text(
        "\nKatanga's secessionist leader announced in his palace garden that his work was done. "
        "He would leave for Northern Rhodesia to rest, he told newsmen, and return when called.\n",
        encoding="utf-8",
    )
    (tmp_path / "notes" / "ownership.md").write_text("# Ownership\n\nEach value has one owner.\n", encoding="utf-8")
    monkeypatch.setattr(embedding_rounds, "passage_text", lambda record, chunk: f"{record.title}\n{chunk.text}")
    engine = indexed_engine_of(tmp_path)
    try:
        assert engine.vectors.run_until_complete(wait_for_model=True) == 2
    finally:
        engine.close()
    monkeypatch.undo()
    monkeypatch.setattr(refined_coverage, "CHUNKING_VERSION", 99)
    monkeypatch.setattr(vectors, "CHUNKING_VERSION", 99)
    engine = indexed_engine_of(tmp_path)
    try:
        assert engine.vectors.run_until_complete(wait_for_model=True) == 2
        state = engine.vectors.state()
        assert (state.embedded, state.reused) == (1, 1)
    finally:
        engine.close()



def test_documents_saved_while_embedding_grow_the_total_the_done_count_never_passes(tmp_path, monkeypatch):
    """`linkly status` said "embedding: 713 of 9 documents": the total was counted once, at the start."""
    from linkly_ls.core.indexing import embedding_rounds

    monkeypatch.setattr(embedding_rounds, "DOCS_PER_ROUND", 2)
    engine = indexed_engine(tmp_path, 3, 1)
    seen: list[tuple[int, int]] = []
    try:
        def progress(done: int, total: int, path: str) -> None:
            state = engine.vectors.state()
            seen.append((state.done, state.total))
            if len(seen) == 1:  # a burst of notes saved meanwhile
                write_notes(tmp_path / "notes" / "later", 5, 1)
                engine.index()

        engine.vectors.run_until_complete(progress=progress, wait_for_model=True)
        state = engine.vectors.state()
        assert (state.done, state.total) == (8, 8)
        assert all(done <= total for done, total in seen), seen
    finally:
        engine.close()


def test_coverage_says_100_percent_only_when_complete_and_0_only_when_empty():
    from linkly_ls.core.indexing.vector_sync import coverage_text

    assert [coverage_text(share) for share in (0.0, 0.0001, 0.5, 0.9999, 1.0)] == ["0%", "<1%", "50%", ">99%", "100%"]
