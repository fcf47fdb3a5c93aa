"""`linkly watch` as a user runs it: a saved file becomes searchable, a deleted one goes."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


def linkly(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "linkly_ls.cli", *args], env=env, capture_output=True, text=True)


def found(env: dict, query: str) -> list[str]:
    result = linkly(env, "search", query, "--json")
    assert result.returncode == 0, result.stderr
    return [hit["path"] for hit in json.loads(result.stdout)["results"]]


def wait_for(predicate, timeout: float = 60.0) -> float:
    """Poll until `predicate` holds: each poll is a `linkly search` process, seconds apiece on a busy machine."""
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if predicate():
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError("condition not met in time")


@pytest.fixture
def watching(tmp_path):
    library = tmp_path / "notes"
    (library / "sub").mkdir(parents=True)
    (library / "first.md").write_text("# First\n\nplain words\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(f'[[library]]\nname = "notes"\npaths = ["{library}"]\n', encoding="utf-8")
    env = {**os.environ, "LINKLY_DATA_DIR": str(tmp_path / "data"), "LINKLY_CONFIG": str(config)}
    process = subprocess.Popen(
        [sys.executable, "-m", "linkly_ls.cli", "watch"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    for line in process.stdout:
        if line.startswith("watching"):  # printed before the watches are set: a change meanwhile is caught up
            break
    yield env, library
    process.terminate()
    process.wait(10)


def test_saved_file_becomes_searchable_and_deleted_file_disappears(watching):
    env, library = watching
    target = library / "sub" / "new-note.md"
    target.write_text("# Zeppelin\n\nA note about airships and helium.\n", encoding="utf-8")
    wait_for(lambda: str(target) in found(env, "zeppelin airships"))
    target.write_text("# Zeppelin\n\nNow about hydrogen instead.\n", encoding="utf-8")
    wait_for(lambda: str(target) in found(env, "hydrogen"))
    target.unlink()
    wait_for(lambda: str(target) not in found(env, "zeppelin"))
    assert str(library / "first.md") in found(env, "plain words")


def test_watching_some_libraries_leaves_the_others_alone(tmp_path):
    import threading

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import watch_libraries

    folders = {name: tmp_path / name for name in ("notes", "zoo")}
    for folder in folders.values():
        folder.mkdir()
    engine = Engine(
        Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name=name, paths=[folder]) for name, folder in folders.items()])
    )
    batches: list[list[str]] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch_libraries,
        kwargs={"engine": engine, "on_batch": lambda reports: batches.append([r.library for r in reports if r.indexed]),
                "stop": stop, "names": ["zoo"]},
    )
    thread.start()
    try:
        wait_for(lambda: batches != [])  # the catch-up run: the watches are in place
        (folders["notes"] / "other.md").write_text("# Other\n\nokapi\n", encoding="utf-8")
        (folders["zoo"] / "zebra.md").write_text("# Zebra\n\nstripes\n", encoding="utf-8")
        wait_for(lambda: ["zoo"] in batches)
        time.sleep(0.5)
        assert all(batch in ([], ["zoo"]) for batch in batches)
        assert engine.catalog.by_path(str(folders["notes"] / "other.md")) is None
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_a_linked_folder_that_appears_brings_nothing_from_outside_the_library(tmp_path):
    """The walk never follows a symlink; a watcher's batch naming one (or a file seen through it) must not either."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import apply_changes

    library, outside = tmp_path / "notes", tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    library.mkdir()
    (library / "note.md").write_text("# Note\n\nkoala\n", encoding="utf-8")
    (outside / "sub" / "secret.md").write_text("# Secret\n\nkoala outside\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[library])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        os.symlink(outside, library / "link")
        os.symlink(library, library / "loop")
        apply_changes(engine, {library / "link", library / "loop", library / "link" / "sub" / "secret.md", library / "loop" / "note.md"})
        assert sorted(engine.catalog.file_states("notes")) == [str(library / "note.md")]
    finally:
        engine.close()


def test_an_edited_gitignore_brings_in_what_it_no_longer_ignores_and_drops_what_it_now_does(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import apply_changes

    library = tmp_path / "notes"
    (library / "sub").mkdir(parents=True)
    (library / ".gitignore").write_text("ignored.md\n", encoding="utf-8")
    for name in ("ignored.md", "sub/kept.md"):
        (library / name).write_text(f"# {name}\n\nkoala\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[library])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        assert sorted(engine.catalog.file_states("notes")) == [str(library / "sub" / "kept.md")]
        (library / ".gitignore").write_text("sub/kept.md\n", encoding="utf-8")
        apply_changes(engine, {library / ".gitignore"})
        assert sorted(engine.catalog.file_states("notes")) == [str(library / "ignored.md")]
    finally:
        engine.close()


def test_a_library_added_while_watching_is_caught_up_and_watched(tmp_path):
    """The folders watched were fixed when watching began: a library added meanwhile (a config file's new
    library, which any command's start adds to the catalog) was not watched until a restart."""
    import threading

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import watch_libraries

    first, added = tmp_path / "notes", tmp_path / "added"
    first.mkdir()
    added.mkdir()
    (added / "waiting.md").write_text("# Waiting\n\nwombat\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[first])], raw={"embedding": {"model": "none"}}))
    batches: list[list[str]] = []
    stop = threading.Event()
    thread = threading.Thread(
        target=watch_libraries, kwargs={"engine": engine, "on_batch": lambda reports: batches.append([r.library for r in reports]), "stop": stop}
    )
    thread.start()
    try:
        wait_for(lambda: batches != [])  # watching the first library
        engine.add_library([added], "added")
        wait_for(lambda: engine.catalog.by_path(str(added / "waiting.md")) is not None)  # caught up
        (added / "saved.md").write_text("# Saved\n\nwombat again\n", encoding="utf-8")
        wait_for(lambda: engine.catalog.by_path(str(added / "saved.md")) is not None)  # watched
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_watching_goes_on_while_no_folder_is_there_and_resumes_when_one_is(tmp_path):
    """With no library yet, or its only folder gone for a while (an unmounted disk, a rename and back), the
    watcher returned and the server watched nothing more until a restart."""
    import threading

    from linkly_ls.core.config import Config
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import watch_libraries

    notes = tmp_path / "notes"
    notes.mkdir()
    engine = Engine(Config(data_dir=tmp_path / "data", raw={"embedding": {"model": "none"}}))  # no library yet
    stop = threading.Event()
    thread = threading.Thread(target=watch_libraries, kwargs={"engine": engine, "stop": stop})
    thread.start()
    try:
        time.sleep(0.5)
        assert thread.is_alive(), "a watcher with nothing to watch waits for a library"
        engine.add_library([notes], "notes")
        (notes / "first.md").write_text("# First\n\nkoala\n", encoding="utf-8")
        wait_for(lambda: engine.catalog.by_path(str(notes / "first.md")) is not None)
        notes.rename(tmp_path / "away")  # every folder gone
        time.sleep(2)
        assert thread.is_alive()
        (tmp_path / "away").rename(notes)
        (notes / "back.md").write_text("# Back\n\nkoala again\n", encoding="utf-8")
        wait_for(lambda: engine.catalog.by_path(str(notes / "back.md")) is not None)
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_a_file_replaced_by_a_folder_of_its_name_leaves_the_index(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import apply_changes

    notes = tmp_path / "notes"
    notes.mkdir()
    report = notes / "report.md"
    report.write_text("# Report\n\ncapybara\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[notes])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        report.unlink()
        report.mkdir()
        (report / "inner.md").write_text("# Inner\n\nwombat\n", encoding="utf-8")
        apply_changes(engine, {report})  # watchfiles names the folder that appeared
        assert engine.catalog.by_path(str(report)) is None
        assert engine.catalog.by_path(str(report / "inner.md")) is not None
    finally:
        engine.close()


def test_a_deleted_folder_of_many_files_reads_each_librarys_documents_once(tmp_path, monkeypatch):
    """A branch switch or `rm -rf` of 2,000 notes read the library's documents once per deleted path
    (15 s before the next save was seen); the grouping is done in one reading a library."""
    import shutil

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import apply_changes, paths_by_library

    notes = tmp_path / "notes"
    (notes / "burst").mkdir(parents=True)
    for number in range(300):
        (notes / "burst" / f"n{number}.md").write_text(f"# N{number}\n\nword{number}\n", encoding="utf-8")
    (notes / "keep.md").write_text("# Keep\n\nkept\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[notes])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        changed = {notes / "burst" / f"n{number}.md" for number in range(300)} | {notes / "burst"}
        shutil.rmtree(notes / "burst")
        readings: list[str] = []
        file_states = engine.catalog.file_states
        monkeypatch.setattr(engine.catalog, "file_states", lambda library, *more: readings.append(library) or file_states(library, *more))
        grouped = paths_by_library(engine, changed)
        assert readings == ["notes"] and set(grouped["notes"]) == changed
        apply_changes(engine, changed)
        assert [Path(path).name for path in engine.catalog.paths()] == ["keep.md"]
    finally:
        engine.close()


def test_a_change_under_a_nested_library_hands_the_file_to_the_inner_library(tmp_path):
    """The outer library indexed the folder before a library of its inner folder was added: a file there
    belongs to the inner library (the innermost folder), whichever indexed it first; a deletion leaves
    the index whichever holds it."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import apply_changes

    outer, inner = tmp_path / "outer", tmp_path / "outer" / "inner"
    inner.mkdir(parents=True)
    note = inner / "note.md"
    note.write_text("# Note\n\nquokka\n", encoding="utf-8")
    outer_only = [LibraryConfig(name="outer", paths=[outer])]
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=outer_only, raw={"embedding": {"model": "none"}}))
    engine.index()
    engine.close()
    both = [*outer_only, LibraryConfig(name="inner", paths=[inner])]  # a config file's, which may nest
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=both, raw={"embedding": {"model": "none"}}))
    try:
        note.write_text("# Note\n\nnumbat\n", encoding="utf-8")
        apply_changes(engine, {note})
        held = engine.catalog.by_path(str(note))
        assert held is not None and held.library == "inner" and "numbat" in engine.catalog.lines(held.doc_id)
        fresh = inner / "fresh.md"
        fresh.write_text("# Fresh\n\nbilby\n", encoding="utf-8")
        apply_changes(engine, {fresh})
        assert engine.catalog.by_path(str(fresh)).library == "inner"
        note.unlink()
        apply_changes(engine, {note})
        assert engine.catalog.by_path(str(note)) is None
    finally:
        engine.close()


def test_a_root_folder_made_again_and_a_single_file_library_saved_over_are_still_watched(tmp_path):
    """The watches follow the folder renamed away, and a file replaced by a rename drops its watch: the
    library went unwatched for good while `linkly status` said it was watching."""
    import threading

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import watch_libraries

    notes, single = tmp_path / "notes", tmp_path / "single.md"
    notes.mkdir()
    (notes / "first.md").write_text("# First\n\nkoala\n", encoding="utf-8")
    single.write_text("# Single\n\nwallaby\n", encoding="utf-8")
    libraries = [LibraryConfig(name="notes", paths=[notes]), LibraryConfig(name="single", paths=[single])]
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=libraries, raw={"embedding": {"model": "none"}}))
    stop = threading.Event()
    thread = threading.Thread(target=watch_libraries, kwargs={"engine": engine, "stop": stop})
    thread.start()

    def holds(path, word: str) -> bool:
        record = engine.catalog.by_path(str(path))
        return record is not None and any(word in line for line in engine.catalog.lines(record.doc_id))

    try:
        wait_for(lambda: holds(notes / "first.md", "koala") and holds(single, "wallaby"))
        notes.rename(tmp_path / "old")
        notes.mkdir()
        (notes / "second.md").write_text("# Second\n\nnumbat\n", encoding="utf-8")
        wait_for(lambda: holds(notes / "second.md", "numbat"))
        (notes / "third.md").write_text("# Third\n\nquokka\n", encoding="utf-8")
        wait_for(lambda: holds(notes / "third.md", "quokka"))
        for word in ("dingo", "echidna"):  # saved the way editors save: a new file renamed over it
            (tmp_path / "single.tmp").write_text(f"# Single\n\n{word}\n", encoding="utf-8")
            (tmp_path / "single.tmp").replace(single)
            wait_for(lambda: holds(single, word))
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_an_edited_include_or_exclude_is_applied_while_watching(tmp_path):
    """A config file's new `exclude` reached the catalog (any command records it) but the watcher kept the
    files it now leaves out until each was edited, and kept out those a removed exclude let in."""
    import dataclasses
    import threading

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import watch_libraries

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "keep.md").write_text("# Keep\n\nkept\n", encoding="utf-8")
    (notes / "draft.md").write_text("# Draft\n\ndrafted\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[notes])], raw={"embedding": {"model": "none"}}))
    stop = threading.Event()
    thread = threading.Thread(target=watch_libraries, kwargs={"engine": engine, "stop": stop})
    thread.start()
    try:
        wait_for(lambda: engine.catalog.by_path(str(notes / "draft.md")) is not None)
        record = engine.catalog.library("notes")
        engine.catalog.upsert_library(dataclasses.replace(record, exclude=["draft*"]))
        wait_for(lambda: engine.catalog.by_path(str(notes / "draft.md")) is None)
        assert engine.catalog.by_path(str(notes / "keep.md")) is not None
        engine.catalog.upsert_library(record)
        wait_for(lambda: engine.catalog.by_path(str(notes / "draft.md")) is not None)
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_a_config_file_edited_while_watching_is_read_again_and_applied(tmp_path):
    """An `exclude` added to the config file while `linkly serve` ran was not applied, and the excluded file
    stayed readable, until some other command happened to record the file in the catalog."""
    import threading

    from linkly_ls.core.config import load_config
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.indexing.watcher import watch_libraries

    notes, papers = tmp_path / "notes", tmp_path / "papers"
    for folder in (notes, papers):
        folder.mkdir()
    (notes / "keep.md").write_text("# Keep\n\nkept\n", encoding="utf-8")
    (notes / "private.md").write_text("# Private\n\nsecret\n", encoding="utf-8")
    (papers / "paper.md").write_text("# Paper\n\nfindings\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    table = f'[embedding]\nmodel = "none"\n[index]\ndata_dir = "{tmp_path / "data"}"\n[[library]]\nname = "notes"\npaths = ["{notes}"]\n'
    config.write_text(table, encoding="utf-8")
    engine = Engine(load_config(config))
    stop = threading.Event()
    thread = threading.Thread(target=watch_libraries, kwargs={"engine": engine, "stop": stop})
    thread.start()
    try:
        wait_for(lambda: engine.catalog.by_path(str(notes / "private.md")) is not None)
        config.write_text(table + 'exclude = ["private*"]\n'
                          + f'[[library]]\nname = "papers"\npaths = ["{papers}"]\n', encoding="utf-8")
        wait_for(lambda: engine.catalog.by_path(str(notes / "private.md")) is None)
        wait_for(lambda: engine.catalog.by_path(str(papers / "paper.md")) is not None)
        assert engine.catalog.by_path(str(notes / "keep.md")) is not None
        config.write_text("[[library]\nbroken", encoding="utf-8")  # unreadable for now: nothing changes
        time.sleep(2)
        assert thread.is_alive() and engine.catalog.by_path(str(papers / "paper.md")) is not None
        assert "cannot parse config file" in (engine.config_problem or "")
    finally:
        stop.set()
        thread.join(10)
        engine.close()


def test_a_cover_written_before_its_books_metadata_leaves_the_index_when_the_metadata_comes(tmp_path):
    """Calibre writes `cover.jpg` before `metadata.opf`: a batch naming only the metadata file kept the cover."""
    import shutil

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ExtractLimits
    from linkly_ls.core.indexing.watcher import apply_changes

    book = tmp_path / "books" / "Jane Austen" / "Emma (12)"
    book.mkdir(parents=True)
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="books", paths=[tmp_path / "books"])],
                           limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "none"}}))
    try:
        shutil.copy(FIXTURES / "scans" / "ocr-sample.jpg", book / "cover.jpg")
        apply_changes(engine, {book / "cover.jpg"})
        assert engine.catalog.by_path(str(book / "cover.jpg")) is not None
        (book / "metadata.opf").write_text("<package/>", encoding="utf-8")
        apply_changes(engine, {book / "metadata.opf"})
        assert engine.catalog.by_path(str(book / "cover.jpg")) is None
    finally:
        engine.close()


def test_a_saved_pages_files_written_before_the_page_leave_the_index_when_the_page_comes(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ExtractLimits
    from linkly_ls.core.indexing.watcher import apply_changes

    web = tmp_path / "web"
    (web / "Article_files").mkdir(parents=True)
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="web", paths=[web])],
                           limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "none"}}))
    try:
        (web / "Article_files" / "ad.html").write_text("<p>Buy now</p>", encoding="utf-8")
        apply_changes(engine, {web / "Article_files" / "ad.html"})
        assert engine.catalog.by_path(str(web / "Article_files" / "ad.html")) is not None
        (web / "Article.html").write_text("<h1>Harbor deal</h1><p>The article.</p>", encoding="utf-8")
        apply_changes(engine, {web / "Article.html"})
        assert engine.catalog.by_path(str(web / "Article_files" / "ad.html")) is None
        assert engine.catalog.by_path(str(web / "Article.html")) is not None
    finally:
        engine.close()
