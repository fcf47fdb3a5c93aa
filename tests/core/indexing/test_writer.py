"""The writer role: one process at a time indexes, embeds and watches an index."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import IndexHeldError
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.indexing.handover import RunInterrupted
from linkly_ls.core.indexing.writer import IndexWriter
from linkly_ls.core.store.writer_lock import WriterLock
from linkly_ls.core.tools import call_tool

HOLD_LOCK = (
    "import sys; from pathlib import Path; from linkly_ls.core.store.writer_lock import WriterLock;"
    "lock = WriterLock(Path(sys.argv[1])); assert lock.try_acquire(); print('held', flush=True); sys.stdin.read()"
)


def hold_lock(data_dir: Path) -> subprocess.Popen[str]:
    """Another process holding the writer lock until it is killed, or this process ends (its stdin closes)."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(data_dir)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )


def open_engine(data_dir: Path, library: Path) -> Engine:
    return Engine(
        Config(
            data_dir=data_dir,
            libraries=[LibraryConfig(name="notes", paths=[library])],
            limits=ExtractLimits(ocr=False),
            raw={"embedding": {"model": "none"}},
        )
    )


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "zebra.md").write_text("# Zebra\n\nzebra crossing\n", encoding="utf-8")
    return folder


@pytest.fixture
def engine(tmp_path: Path, library: Path):
    engine = open_engine(tmp_path / "data", library)
    yield engine
    engine.close()


@pytest.fixture
def other_process_holds_the_lock(tmp_path: Path):
    data_dir = tmp_path / "data"
    data_dir.mkdir(exist_ok=True)
    holder = hold_lock(data_dir)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    yield holder
    holder.kill()
    holder.wait()


def titles(engine: Engine, query: str) -> list[str]:
    return [hit["title"] for hit in call_tool(engine, "search", {"query": query}).to_json()["results"]]


def test_claim_names_the_process_that_holds_the_role(engine, other_process_holds_the_lock):
    writer = IndexWriter(engine)
    with pytest.raises(IndexHeldError, match=rf"another linkly process \(pid {other_process_holds_the_lock.pid}\)"):
        writer.claim()
    with pytest.raises(IndexHeldError):
        writer.index()
    assert not writer.held and not writer.status.writer


def test_the_refusal_says_what_kind_of_writer_holds_the_role(engine, tmp_path):
    """A `linkly index` run was said to keep the index current and re-index changed files itself."""
    from linkly_ls.core.indexing.writer_status import held_error

    writer = IndexWriter(engine, one_run=True)
    writer.claim()
    try:  # asked at once: the refused process waits a moment for the role the new writer publishes
        message = str(held_error(WriterLock(tmp_path / "data")))
        assert "is indexing now" in message and "try again once it has finished" in message, message
        assert "keeps this index current" not in message
    finally:
        writer.stop()


def test_the_role_is_held_for_the_whole_run_and_released_by_stop(engine, tmp_path):
    writer = IndexWriter(engine)
    writer.claim()
    seen_from_outside: list[bool] = []
    reports = writer.index(progress=lambda done, total, path: seen_from_outside.append(
        WriterLock(tmp_path / "data").held_elsewhere()
    ))
    assert [report.indexed for report in reports] == [1]
    assert seen_from_outside and all(seen_from_outside)
    assert titles(engine, "zebra") == ["Zebra"]
    writer.stop()
    assert not writer.held
    assert WriterLock(tmp_path / "data").try_acquire()


def test_a_background_writer_waits_for_the_role_then_indexes_and_watches(tmp_path, library):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    holder = hold_lock(data_dir)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    engine = open_engine(data_dir, library)
    writer = IndexWriter(engine, on_reports=lambda reports: None).start()
    try:
        time.sleep(1.5)
        assert writer.running and not writer.held and writer.status.note() is None
        holder.kill()
        holder.wait()
        deadline = time.monotonic() + 60
        while not writer.status.initial_done and time.monotonic() < deadline:
            time.sleep(0.1)
        assert writer.held and titles(engine, "zebra") == ["Zebra"]
        (library / "okapi.md").write_text("# Okapi\n\nokapi forest\n", encoding="utf-8")
        deadline = time.monotonic() + 60
        while not titles(engine, "okapi") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert titles(engine, "okapi") == ["Okapi"], "the watcher re-indexes saved files"
    finally:
        writer.stop()
        engine.close()
    assert not writer.running and WriterLock(data_dir).try_acquire()


def test_exclusive_releases_only_what_it_took(engine, tmp_path):
    writer = IndexWriter(engine, watch=False)
    with writer.exclusive():
        assert WriterLock(tmp_path / "data").held_elsewhere()
        writer.index()
    assert not writer.held, "taken for one run, released after it"
    writer.claim()
    with writer.exclusive():
        writer.index()
    assert writer.held, "a writer that already had the role keeps it"


def test_vectors_are_written_only_under_the_index_writer_lock(engine, other_process_holds_the_lock, tmp_path):
    """Vectors share the index's one writer lock: no lock file of their own."""
    from linkly_ls.core.search.vectors import VectorIndex

    index = VectorIndex(engine.catalog, tmp_path / "data" / "vectors", "m", 4, writer=True, writer_lock=engine.writer_lock)
    try:
        assert not index.writable and index.writer_active_elsewhere()
    finally:
        index.close()
    assert not list((tmp_path / "data" / "vectors").rglob("writer.lock"))


def test_a_run_that_changed_nothing_says_nothing(capsys):
    from linkly_ls.core.indexing.indexer import IndexReport
    from linkly_ls.core.indexing.writer import print_reports

    print_reports([IndexReport(library="corpus", unchanged=120, failed=7)])  # failures of an earlier run
    assert capsys.readouterr().err == ""
    print_reports([IndexReport(library="corpus", indexed=1, failed=1, errors=[("/c/bad.pdf", "not a PDF")])])
    assert capsys.readouterr().err.splitlines() == [
        "linkly: failed: /c/bad.pdf: not a PDF",
        "linkly: corpus: 1 indexed, 0 unchanged, 1 failed, 0 removed in 0.0 s",
    ]


def test_a_writer_watching_on_its_callers_thread_says_it_watches(engine):
    """`linkly watch` watches on its main thread: status said idle, and a refused command that the
    writer did not watch its folders."""
    from linkly_ls.core.indexing.writer_status import WATCHING

    writer = IndexWriter(engine)
    writer.claim()
    watching = threading.Thread(target=writer.watch_here)
    watching.start()
    try:
        deadline = time.monotonic() + 30
        while writer.activity().activity != WATCHING and time.monotonic() < deadline:
            time.sleep(0.05)
        assert writer.activity().activity == WATCHING
    finally:
        writer.stop()
        watching.join(10)


def _long_pdf(path: Path, pages: int = 4096) -> None:
    """A PDF of `pages` pages of text, built by doubling one page (seconds of extraction, a second to make)."""
    import pymupdf

    document = pymupdf.open()
    document.new_page().insert_text((50, 50), "\n".join(f"line {n} about rivers and tides" for n in range(50)))
    while document.page_count < pages:
        document.insert_pdf(pymupdf.open("pdf", document.tobytes()))
    document.save(path)


def test_stopping_the_writer_does_not_wait_for_a_long_pdf_being_read(engine, library):
    # `linkly serve` stopped (Ctrl-C, an editor closing) while the workers read a long PDF: the run
    # ends at once; the PDF is read again at the next start
    _long_pdf(library / "long.pdf")
    writer = IndexWriter(engine, on_reports=lambda reports: None).start()
    deadline = time.monotonic() + 60
    while writer.status.total == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    writer.stop()
    stopped_after = time.monotonic() - started
    assert not writer.running and stopped_after < 5
    assert engine.catalog.by_path(str(library / "long.pdf")) is None


def test_a_run_that_waited_for_the_write_lock_does_not_start_once_the_writer_stopped(engine, library):
    # the language server's own run ends at shutdown and hands the lock to the watcher's catching up,
    # which must not then read the whole library
    (library / "okapi.md").write_text("# Okapi\n\nokapi forest\n", encoding="utf-8")
    IndexWriter(engine).interrupt()
    with pytest.raises(RunInterrupted):
        engine.index()
    assert engine.catalog.by_path(str(library / "okapi.md")) is None


def test_a_run_that_fails_to_write_is_tried_again_and_the_writer_says_why_meanwhile(tmp_path, library, monkeypatch, caplog):
    """A full disk ended the background writer's work for good while it kept the role: nothing was indexed
    again until a restart, and `linkly status` said nothing."""
    from linkly_ls.core.engine import EngineError
    from linkly_ls.core.indexing import writer as writer_module

    monkeypatch.setattr(writer_module, "FAILURE_RETRY_S", 0.5)
    engine = open_engine(tmp_path / "data", library)
    real_index = engine.index
    failures = iter([EngineError(f"cannot write the index in {tmp_path / 'data'}: No space left on device")])

    def index_once_failing(*args, **kwargs):
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return real_index(*args, **kwargs)

    monkeypatch.setattr(engine, "index", index_once_failing)
    writer = IndexWriter(engine, on_reports=lambda reports: None).start()
    try:
        deadline = time.monotonic() + 10
        while writer.status.error is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.status.error == (
            f"indexing stopped: cannot write the index in {tmp_path / 'data'}: No space left on device; trying again in 1 s"
        )
        assert writer.activity().problem == writer.status.error and writer.held
        assert "Traceback" not in caplog.text
        deadline = time.monotonic() + 60
        # the retried run's documents are searchable at its last commit, a moment before it ends and clears the error
        while not (titles(engine, "zebra") and writer.status.error is None) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert titles(engine, "zebra") == ["Zebra"] and writer.status.error is None
        (library / "okapi.md").write_text("# Okapi\n\nokapi forest\n", encoding="utf-8")
        deadline = time.monotonic() + 60
        while not titles(engine, "okapi") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert titles(engine, "okapi") == ["Okapi"], "watching again after the retry"
    finally:
        writer.stop()
        engine.close()


def test_a_writer_watching_some_libraries_says_which_and_the_refusal_does_not_claim_it_keeps_all_current(engine, tmp_path):
    """`linkly watch --library A` held the role while B's edits went unindexed, and `linkly index B` was
    told that process re-indexes changed files itself."""
    from linkly_ls.core.indexing.writer_status import held_error, read_activity

    writer = IndexWriter(engine, on_reports=lambda reports: None)
    writer.claim()
    watching = threading.Thread(target=writer.watch_here, args=(["notes"],))
    watching.start()
    try:
        deadline = time.monotonic() + 30
        while (read_activity(tmp_path / "data") is None or read_activity(tmp_path / "data").libraries is None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert read_activity(tmp_path / "data").describe() == "watching for changes (only library notes)"
        message = str(held_error(WriterLock(tmp_path / "data")))
        assert "keeps only library notes current and watches no other" in message, message
        assert "re-indexes changed files itself" not in message
    finally:
        writer.stop()
        watching.join(10)
    assert writer.activity().libraries is None


def test_a_writer_whose_index_folder_is_deleted_gives_up_the_role_and_a_reader_does_not_take_it(tmp_path, library):
    """An editor's reader took the lock of the folder made again and sat as its writer with 0 documents;
    the old writer kept the lock of the deleted one, and removed the new writer's status file on exit."""
    import shutil

    from linkly_ls.core.indexing.writer_status import read_activity

    data_dir = tmp_path / "data"
    writer_engine, reader_engine = open_engine(data_dir, library), open_engine(data_dir, library)
    writer = IndexWriter(writer_engine, on_reports=lambda reports: None).start()
    reader = IndexWriter(reader_engine, on_reports=lambda reports: None)
    try:
        deadline = time.monotonic() + 60
        while not writer.status.initial_done and time.monotonic() < deadline:
            time.sleep(0.05)
        assert writer.held
        data_dir.rename(tmp_path / "data-deleted")  # at once: removed file by file, it races the status file
        shutil.rmtree(tmp_path / "data-deleted", ignore_errors=True)
        deadline = time.monotonic() + 10
        while writer.held and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not writer.held and f"the index folder {data_dir} was deleted" in (writer.status.error or "")
        fresh = open_engine(data_dir, library)  # the folder made again: a new index
        try:
            assert not reader.try_claim() and "was deleted" in (reader.status.error or "")
            newcomer = IndexWriter(fresh, on_reports=lambda reports: None)
            newcomer.claim()
            deadline = time.monotonic() + 10
            while read_activity(data_dir) is None and time.monotonic() < deadline:
                time.sleep(0.05)
            writer.stop()
            assert read_activity(data_dir) is not None, "the old writer leaves the new one's status alone"
            newcomer.stop()
        finally:
            fresh.close()
    finally:
        writer.stop()
        writer_engine.close()
        reader_engine.close()


def test_the_ocr_pass_is_named_in_the_writers_activity(tmp_path, monkeypatch):
    """`indexing lib: 1 of 1 files` read as done while a scan was OCRed for minutes."""
    import shutil

    from linkly_ls.core.indexing.indexer import Indexer
    from linkly_ls.core.indexing.writer_status import WriterActivity

    folder = tmp_path / "scans"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parents[3] / "fixtures" / "scans" / "ocr-sample.jpg", folder / "letter.jpg")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="scans", paths=[folder])], raw={"embedding": {"model": "none"}}))
    writer = IndexWriter(engine, watch=False)
    seen: list[str] = []
    run = Indexer._run

    def watched(self, work, *arguments, **options):
        seen.append(writer.activity().describe())
        return run(self, work, *arguments, **options)

    monkeypatch.setattr(Indexer, "_run", watched)
    try:
        with writer.exclusive():
            writer.index()
    finally:
        engine.close()
    assert seen[-1] == "indexing scans: OCR of 0 of 1 files", seen
    restored = WriterActivity(pid=1, activity="indexing", library="scans", done=3, total=7, phase="OCR")
    assert restored.describe() == "indexing scans: OCR of 3 of 7 files"


def test_a_claim_whose_index_folder_goes_as_it_claims_is_refused_and_does_not_make_the_folder_again(
    tmp_path, library, monkeypatch
):
    """The folder deleted between the lost-folder check and the lock: the lock made the folder again, or
    its error ended the writer's thread with a traceback."""
    import shutil

    data_dir = tmp_path / "data"
    engine = open_engine(data_dir, library)
    writer = IndexWriter(engine, on_reports=lambda reports: None)
    monkeypatch.setattr(engine, "data_dir_lost", lambda: None)  # the check ran just before the deletion
    try:
        shutil.rmtree(data_dir)
        assert writer.try_claim() is False and not writer.held
        assert f"cannot claim the index in {data_dir}" in (writer.status.error or "")
        assert not data_dir.exists()
        with pytest.raises(FileNotFoundError):
            WriterLock(data_dir).try_acquire()
        assert not data_dir.exists()
    finally:
        engine.close()
