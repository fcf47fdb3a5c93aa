import os
import shutil
import time
from pathlib import Path

from linkly_ls.core.store.catalog import make_doc_id
from linkly_ls.core.tools import call_tool


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def titles(engine, query: str) -> list[str]:
    return [hit.title for hit in call_tool(engine, "search", {"query": query}).results]


def test_incremental_indexing_counts_and_stable_ids(library_dir, engine_for):
    write(library_dir / "alpha.md", "# Alpha\n\nThe quick brown fox jumps over the lazy dog.\n")
    write(library_dir / "beta.md", "# Beta\n\nPostgres vacuum tuning notes.\n")
    engine = engine_for(library_dir)
    (first,) = engine.index()
    assert (first.indexed, first.unchanged, first.failed, first.removed) == (2, 0, 0, 0)
    alpha_id = make_doc_id(str(library_dir / "alpha.md"))
    assert engine.catalog.get(alpha_id).title == "Alpha"

    (second,) = engine.index()
    assert (second.indexed, second.unchanged) == (0, 2)

    os.utime(library_dir / "alpha.md", (time.time() + 5, time.time() + 5))
    (touched,) = engine.index()
    assert (touched.indexed, touched.unchanged) == (0, 2), "same content: only the mtime is updated"

    write(library_dir / "beta.md", "# Beta\n\nPostgres autovacuum and checkpoint tuning.\n")
    (changed,) = engine.index()
    assert changed.indexed == 1 and "Beta" in titles(engine, "checkpoint")

    (library_dir / "alpha.md").unlink()
    (removed,) = engine.index()
    assert removed.removed == 1
    assert titles(engine, "fox") == []
    assert engine.catalog.get(alpha_id) is None


def test_doc_ids_survive_a_rebuild_from_scratch(library_dir, engine_for):
    write(library_dir / "n.md", "# Note\n\nsome text\n")
    first = engine_for(library_dir)
    first.index()
    second = engine_for(library_dir)
    second.index()
    assert [r.doc_id for r in first.catalog.all_documents()] == [r.doc_id for r in second.catalog.all_documents()]


def test_broken_files_get_one_error_each_and_the_rest_indexes(library_dir, engine_for):
    write(library_dir / "good.md", "# Good\n\nreadable text here\n")
    (library_dir / "empty.pdf").write_bytes(b"")
    (library_dir / "broken.docx").write_bytes(b"PK\x03\x04 this is not a real zip archive at all")
    (library_dir / "broken.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    engine = engine_for(library_dir)
    (report,) = engine.index()
    assert report.indexed == 1 and report.failed == 3
    messages = dict(report.errors)
    assert "empty file" in messages[str(library_dir / "empty.pdf")]
    assert all(message and "Traceback" not in message for message in messages.values())
    assert {e.path for e in engine.catalog.errors()} == set(messages)
    (again,) = engine.index()
    assert again.failed == 3 and again.errors == [], "unchanged broken files are not retried"
    (library_dir / "broken.docx").unlink()
    (library_dir / "empty.pdf").write_bytes((Path(__file__).resolve().parents[3] / "fixtures" / "papers" / "multicolumn.pdf").read_bytes())
    (fixed,) = engine.index()
    assert fixed.indexed == 1 and engine.catalog.error_for(str(library_dir / "empty.pdf")) is None


def test_an_empty_note_is_indexed_by_its_name_and_found_and_linked(library_dir, engine_for):
    (library_dir / "Someday.md").write_bytes(b"")
    write(library_dir / "index.md", "# Index\n\nsee [[Someday]]\n")
    engine = engine_for(library_dir)
    (report,) = engine.index()
    assert report.indexed == 2 and report.failed == 0
    record = engine.catalog.by_path(str(library_dir / "Someday.md"))
    assert record is not None and record.total_lines == 0 and record.warnings
    hits = call_tool(engine, "search", {"query": "someday"}).results
    assert hits[0].doc_id == record.doc_id


def test_read_only_library_is_indexed_and_never_written(library_dir, engine_for):
    write(library_dir / "sub" / "a.md", "# A\n\ntext\n")
    before = sorted(p.relative_to(library_dir).as_posix() for p in library_dir.rglob("*"))
    for path in [library_dir / "sub" / "a.md", library_dir / "sub", library_dir]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        engine = engine_for(library_dir)
        (report,) = engine.index()
        assert report.indexed == 1 and report.failed == 0
    finally:
        for path in [library_dir, library_dir / "sub"]:
            path.chmod(0o755)
    assert sorted(p.relative_to(library_dir).as_posix() for p in library_dir.rglob("*")) == before


def test_pending_keyword_work_is_recovered_on_open(library_dir, engine_for, tmp_path):
    write(library_dir / "a.md", "# A\n\nzebra crossing\n")
    engine = engine_for(library_dir)
    engine.indexer.flush = lambda: None
    engine.index()
    assert titles(engine, "zebra") == []
    engine.close()
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    reopened = Engine(Config(data_dir=engine.data_dir, libraries=[LibraryConfig(name="lib", paths=[library_dir])]))
    try:
        assert titles(reopened, "zebra") == ["A"]
    finally:
        reopened.close()


def test_a_long_document_is_written_without_waiting_for_the_other_files(library_dir, engine_for, monkeypatch):
    # With the text threshold at one character, every document read is flushed on its own
    # (the count and time thresholds alone would leave all three to the final flush).
    from linkly_ls.core.indexing import indexer

    monkeypatch.setattr(indexer, "FLUSH_EVERY_CHARS", 1)
    for name in ("one", "two", "three"):
        write(library_dir / f"{name}.md", f"# {name.title()}\n\nA note called {name}.\n")
    engine = engine_for(library_dir)
    flushed: list[list[str]] = []
    engine.indexer.after_flush.append(lambda pending, tombstones: flushed.append(pending))
    (report,) = engine.index()
    assert report.indexed == 3
    assert [len(pending) for pending in flushed] == [1, 1, 1]


def test_a_touched_file_with_the_same_content_is_checked_without_the_workers(library_dir, engine_for):
    import shutil

    repo = Path(__file__).resolve().parents[3]
    pdf = library_dir / "outline.pdf"
    shutil.copy(repo / "fixtures/papers/pdflatex-outline.pdf", pdf)
    engine = engine_for(library_dir)
    engine.index()
    os.utime(pdf, (time.time() + 5, time.time() + 5))

    def no_workers():
        raise AssertionError("the workers were started for a file whose content did not change")

    engine.indexer.pool = no_workers
    (report,) = engine.index()
    assert (report.indexed, report.unchanged) == (0, 1)
    assert engine.catalog.file_states(report.library)[str(pdf)][2] == pdf.stat().st_mtime_ns
    (again,) = engine.index()
    assert again.unchanged == 1


def test_small_notes_are_read_here_while_the_workers_start(library_dir, engine_for, monkeypatch):
    import shutil

    from linkly_ls.core.indexing import indexer

    repo = Path(__file__).resolve().parents[3]
    shutil.copy(repo / "fixtures/papers/pdflatex-outline.pdf", library_dir / "outline.pdf")
    notes = [write(library_dir / f"note{number}.md", f"# Note {number}\n\nzebra number {number}\n") for number in range(12)]
    read_here: list[str] = []
    real = indexer.prepare_here

    def recorded(work):
        read_here.extend(key for key, _ in work)
        return real(work)

    monkeypatch.setattr(indexer, "prepare_here", recorded)
    engine = engine_for(library_dir)
    (report,) = engine.index()
    assert report.indexed == 13 and report.failed == 0
    assert sorted(read_here) == sorted(str(note) for note in notes), "the notes, not the PDF"
    assert len(titles(engine, "zebra")) == 12
    assert engine.indexer.pool().started

    read_here.clear()
    for note in notes:
        write(note, note.read_text(encoding="utf-8") + "\nedited\n")
    shutil.copy(repo / "fixtures/papers/multicolumn.pdf", library_dir / "second.pdf")
    (again,) = engine.index()
    assert again.indexed == 13
    assert read_here == [], "the workers are up: no head start"


def test_an_error_while_storing_the_head_start_stops_the_workers_and_leaves_no_part_folder(
    library_dir, engine_for, monkeypatch
):
    import shutil
    import tempfile
    import threading

    import pytest

    from linkly_ls.core.indexing import pdf_split
    from linkly_ls.core.engine import EngineError

    repo = Path(__file__).resolve().parents[3]
    shutil.copy(repo / "fixtures/papers/autogen-multi-agent.pdf", library_dir / "paper.pdf")
    for number in range(12):
        write(library_dir / f"note{number}.md", f"# Note {number}\n\ntext {number}\n")
    monkeypatch.setattr(pdf_split, "SPLIT_MIN_SECONDS", 0.0)  # the PDF is read in parts, in a part folder
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def recorded_mkdtemp(*args, **kwargs):  # noqa: ANN002, ANN003
        made.append(real_mkdtemp(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", recorded_mkdtemp)
    engine = engine_for(library_dir)

    def full_disk(prepared, library):  # noqa: ANN001
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine.indexer.documents, "store", full_disk)
    with pytest.raises(EngineError, match="No space left"):
        engine.index()
    assert not any(thread.name == "linkly-workers" for thread in threading.enumerate())
    part_folders = [Path(folder) for folder in made if "pdf-parts-" in folder]
    assert part_folders and not any(folder.exists() for folder in part_folders)
    assert all(folder.parent == engine.data_dir / "scratch" for folder in part_folders), "never in /tmp"


def test_a_newer_extractor_reads_its_documents_again_and_their_passages_are_cut_again(library_dir, engine_for, monkeypatch):
    from linkly_ls.core.extract import EXTRACTOR_VERSIONS

    write(library_dir / "record.txt", "Consumer information in Sheffield.\n")
    write(library_dir / "notes.md", "# Notes\n\nPostgres vacuum tuning.\n")
    engine = engine_for(library_dir)
    (first,) = engine.index()
    assert first.indexed == 2
    assert engine.vectors.run_until_complete(wait_for_model=True) == 2

    monkeypatch.setitem(EXTRACTOR_VERSIONS, "txt", 99)
    (upgraded,) = engine.index()
    assert (upgraded.indexed, upgraded.unchanged) == (1, 1), "only the text file's extractor is newer"
    assert engine.catalog.get(make_doc_id(str(library_dir / "record.txt"))).title == "Consumer information in Sheffield"
    assert engine.vectors.run_until_complete(wait_for_model=True) == 1, "the text file's passages are cut again"
    state = engine.vectors.state()
    assert (state.embedded, state.reused) == (0, 1), "its passage did not change: the vector is reused"

    (again,) = engine.index()
    assert (again.indexed, again.unchanged) == (0, 2)


def test_a_file_that_failed_is_tried_again_by_a_newer_extractor_only(library_dir, engine_for, monkeypatch):
    from linkly_ls.core.extract import EXTRACTOR_VERSIONS

    broken = library_dir / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 this is not a real zip archive at all")
    engine = engine_for(library_dir)
    (first,) = engine.index()
    current = EXTRACTOR_VERSIONS["docx"]
    assert first.failed == 1 and engine.catalog.error_for(str(broken)).extractor == current
    monkeypatch.setitem(EXTRACTOR_VERSIONS, "pptx", 50)
    engine.index()
    assert engine.catalog.error_for(str(broken)).extractor == current, "another type's extractor changed: not read"
    monkeypatch.setitem(EXTRACTOR_VERSIONS, "docx", 50)
    (retried,) = engine.index()
    assert retried.failed == 1 and engine.catalog.error_for(str(broken)).extractor == 50


def test_a_file_an_earlier_version_failed_after_one_worker_death_is_read_once_more(library_dir, engine_for):
    # before a second worker read such a file, one death (perhaps the out-of-memory killer's) marked it
    # failed until it changed; such marks are tried once, other errors of unchanged files are not
    from linkly_ls.core.extract import extractor_version
    from linkly_ls.core.store.records import ErrorRecord

    flaky = write(library_dir / "flaky.md", "# Flaky\n\nread at last\n")
    broken = write(library_dir / "broken.md", "# Broken\n\nmarked by another error\n")
    engine = engine_for(library_dir)
    for path, message in (
        (flaky, "the extractor process died while reading this file"),
        (broken, "the extractor process died twice while reading this file"),
    ):
        stat = path.stat()
        engine.catalog.put_error(ErrorRecord(str(path), "lib", message, stat.st_size, stat.st_mtime_ns, extractor_version(path)))
    (report,) = engine.index()
    assert (report.indexed, report.failed) == (1, 1)
    assert engine.catalog.error_for(str(flaky)) is None and titles(engine, "read at last") == ["Flaky"]
    assert engine.catalog.error_for(str(broken)).message.endswith("twice while reading this file")


def test_a_type_the_first_run_did_not_preload_is_read_by_the_workers_of_a_later_run(library_dir, engine_for):
    # The pool's fork server preloads the first run's extractors (PDF here); a DOCX and a PPTX of a
    # later run are read by the same workers, which import their readers then
    fixtures = Path(__file__).resolve().parents[3] / "fixtures"
    shutil.copy(fixtures / "papers" / "multicolumn.pdf", library_dir / "columns.pdf")
    for number in range(10):
        write(library_dir / f"note-{number}.md", f"# Note {number}\n\nzebra crossing {number}\n")
    engine = engine_for(library_dir)
    (report,) = engine.index()
    assert report.failed == 0 and engine.indexer.pool().started
    shutil.copy(fixtures / "documents" / "dpkg cheat sheet.docx", library_dir / "cheat.docx")
    slides = next((fixtures / "slides").glob("*.pptx"))
    shutil.copy(slides, library_dir / "slides.pptx")
    for number in range(10, 20):
        write(library_dir / f"note-{number}.md", f"# Note {number}\n\nzebra crossing {number}\n")
    (report,) = engine.index()
    assert report.indexed == 12 and report.failed == 0, report.errors
    assert engine.catalog.get(make_doc_id(str(library_dir / "cheat.docx"))).doc_type == "docx"
    assert engine.catalog.get(make_doc_id(str(library_dir / "slides.pptx"))).doc_type == "pptx"


def test_a_size_limit_lowered_then_raised_takes_files_out_and_back_in(tmp_path):
    """Lowered, an indexed file over the limit stayed searchable while counted as skipped; raised again,
    the file that had failed under it stayed out with an error quoting a limit no longer set."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ExtractLimits

    library = tmp_path / "notes"
    write(library / "big.md", "# Big\n\n" + "walrus tusk " * 200)
    write(library / "small.md", "# Small\n\nwalrus\n")

    removed: list[int] = []

    def run(max_file_bytes: int) -> tuple[list[str], list[str]]:
        engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[library])],
                               limits=ExtractLimits(ocr=False, max_file_bytes=max_file_bytes), raw={"embedding": {"model": "none"}}))
        try:
            (report,) = engine.index()
            removed.append(report.removed)
            indexed = sorted(Path(path).name for path in engine.catalog.file_states("n"))
            return indexed, [message for _, message in report.errors]
        finally:
            engine.close()

    assert run(10_000_000) == (["big.md", "small.md"], [])
    indexed, errors = run(1_000)
    assert indexed == ["small.md"] and len(errors) == 1 and "1,000-byte limit" in errors[0]
    assert removed == [0, 1], "the summary counts the document that left the index"
    assert run(2_000)[1][0].endswith("over the 2,000-byte limit ([limits] max_file_mb)"), "the limit it quotes is the one set"
    assert run(10_000_000) == (["big.md", "small.md"], [])


def test_a_file_deleted_while_the_run_reads_it_is_gone_not_failed(library_dir, engine_for):
    # a burst of renames: the walk found the old names, which were gone when a worker came to them
    notes = [write(library_dir / f"moved{number}.md", f"# Moved {number}\n\nokapi {number}\n") for number in range(300)]
    engine = engine_for(library_dir)
    gone: list[Path] = []

    def delete_the_rest(done: int, total: int, path: str) -> None:
        if not gone:
            gone.extend(note for note in notes if str(note) != path)
            for note in gone:
                note.unlink()

    (report,) = engine.index(progress=delete_the_rest)
    assert report.failed == 0 and report.errors == []
    assert engine.catalog.errors("lib") == []


def test_a_file_that_could_not_be_read_from_disk_is_read_again_by_the_next_run(library_dir, engine_for):
    # permission denied says nothing of the content: once access is given, the unchanged file comes in
    from linkly_ls.core.extract import extractor_version
    from linkly_ls.core.store.records import ErrorRecord

    note = write(library_dir / "locked.md", "# Locked\n\nwombat\n")
    broken = library_dir / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 this is not a real zip archive at all")
    engine = engine_for(library_dir)
    engine.index()
    stat = note.stat()
    engine.catalog.remove_document(engine.catalog.by_path(str(note)).doc_id)  # as the run that could not read it left it
    engine.catalog.put_error(
        ErrorRecord(str(note), "lib", "cannot read file: Permission denied", stat.st_size, stat.st_mtime_ns, extractor_version(note))
    )
    (again,) = engine.index()
    assert again.indexed == 1 and again.failed == 1  # the note read again; the broken file, unchanged, is not
    assert titles(engine, "wombat") == ["Locked"] and engine.catalog.error_for(str(note)) is None


def test_a_moved_folder_stays_in_the_index_while_its_files_are_read_at_their_new_place(tmp_path):
    """A watcher batch holding a folder's move removed its 2,845 documents first and read them again for
    minutes: search lost three quarters of the library meanwhile."""
    import shutil

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "lib"
    for number in range(6):
        (root / "inbox").mkdir(parents=True, exist_ok=True)
        (root / "inbox" / f"note-{number}.md").write_text(f"# Note {number}\n\nquince {number}\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="lib", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        shutil.move(root / "inbox", root / "archive")
        for note in (root / "archive").iterdir():  # edited too: read again, not taken from the stored documents
            note.write_text(note.read_text(encoding="utf-8") + "edited\n", encoding="utf-8")
        counts: list[int] = []
        [report] = engine.index(progress=lambda done, total, path: counts.append(engine.catalog.count()))
        assert counts and min(counts) >= 6, counts
        assert report.indexed == 6 and report.removed == 6 and engine.catalog.count() == 6
        assert all("/archive/" in path for path in engine.catalog.paths())
    finally:
        engine.close()


def test_a_document_refused_by_the_unpacked_limit_is_read_once_the_limit_is_raised(tmp_path):
    """The error said to raise `max_unzipped_mb`; raised, the unchanged file stayed failed until it changed."""
    import shutil

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ExtractLimits

    library = tmp_path / "decks"
    library.mkdir()
    shutil.copy(Path(__file__).resolve().parents[3] / "fixtures" / "slides" / "rust ownership - lunch and learn.pptx", library / "deck.pptx")

    def run(max_unzipped_bytes: int) -> tuple[int, list[str]]:
        engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="d", paths=[library])],
                               limits=ExtractLimits(ocr=False, max_unzipped_bytes=max_unzipped_bytes), raw={"embedding": {"model": "none"}}))
        try:
            (report,) = engine.index()
            return report.indexed, [message for _, message in report.errors]
        finally:
            engine.close()

    indexed, errors = run(10_000)
    assert indexed == 0 and "max_unzipped_mb" in errors[0]
    assert run(500_000_000) == (1, [])
