"""The engine as a second process sees it, and what opening one costs.

A language server beside `linkly serve` (or a second editor) opens the same
index as a reader: what the writer commits must reach its searches and its
document text at once. Opening an engine to search loads no extraction code,
and search does not wait for the embedding model while it loads in the background.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, ConfigError, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool

REPO = Path(__file__).resolve().parents[2]
NOTES = REPO / "fixtures" / "notes" / "rust"


def open_engine(data_dir: Path, library: Path, model: str = "none") -> Engine:
    config = Config(
        data_dir=data_dir,
        libraries=[LibraryConfig(name="notes", paths=[library])],
        raw={"embedding": {"model": model}},
    )
    return Engine(config)


@pytest.fixture
def library(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    for source in sorted(NOTES.glob("*.md"))[:4]:
        shutil.copy2(source, folder / source.name)
    return folder


def paths_found(engine: Engine, query: str) -> list[str]:
    return [hit.path for hit in call_tool(engine, "search", {"query": query, "limit": 5}).results]


def in_a_fresh_process(script: str) -> object:
    """What `script`, run by a new Python, printed as JSON on its last line."""
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=REPO, timeout=120
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


@contextmanager
def writer_and_reader(data_dir: Path, library: Path) -> Iterator[tuple[Engine, Engine]]:
    """An engine that has indexed `library`, and a second one on the same index, as another process would."""
    writer = open_engine(data_dir, library)
    writer.index()
    reader = open_engine(data_dir, library)
    try:
        yield writer, reader
    finally:
        reader.close()
        writer.close()


def test_a_reader_sees_the_writers_change_at_once_in_search_and_text(tmp_path, library):
    with writer_and_reader(tmp_path / "data", library) as (writer, reader):
        target = sorted(library.glob("*.md"))[0]
        doc_id = writer.catalog.by_path(str(target)).doc_id
        old_lines = reader.catalog.lines(doc_id)  # now cached in the reader
        assert paths_found(reader, "zanzibarquokka") == []

        target.write_text(target.read_text(encoding="utf-8") + "\nThe zanzibarquokka paragraph.\n", encoding="utf-8")
        writer.index_paths(writer.catalog.library("notes"), [target])

        assert paths_found(reader, "zanzibarquokka") == [str(target)]
        lines = reader.catalog.lines(doc_id)
        assert lines != old_lines and "The zanzibarquokka paragraph." in lines
        result = call_tool(reader, "read", {"doc_id": doc_id, "offset": len(lines) - 3, "limit": 5})
        assert any("zanzibarquokka" in text for _, text in result.lines)


def test_a_deleted_document_has_no_cached_text_left(tmp_path, library):
    with writer_and_reader(tmp_path / "data", library) as (writer, reader):
        target = sorted(library.glob("*.md"))[0]
        doc_id = writer.catalog.by_path(str(target)).doc_id
        assert reader.catalog.lines(doc_id)
        target.unlink()
        writer.index_paths(writer.catalog.library("notes"), [target])
        assert reader.catalog.lines(doc_id) == []


def test_opening_and_searching_loads_no_indexing_or_vector_code(tmp_path, library):
    engine = open_engine(tmp_path / "data", library)
    engine.index()
    engine.close()
    script = f"""
import json, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_engine import open_engine, paths_found
engine = open_engine(Path({str(tmp_path / "data")!r}), Path({str(library)!r}), model="bundled")
found = paths_found(engine, "ownership")
heavy = ["linkly_ls.core.indexing.indexer", "linkly_ls.core.indexing.workers", "watchfiles", "numpy", "fastembed", "usearch", "mcp"]
print(json.dumps({{"found": len(found), "loaded": [name for name in heavy if name in sys.modules]}}))
"""
    answer = in_a_fresh_process(script)
    assert answer["found"] > 0
    assert answer["loaded"] == []  # no vectors exist yet, so no model is loaded either


def test_grep_and_read_load_no_numpy_and_a_plain_word_no_regex_engine(tmp_path, library):
    engine = open_engine(tmp_path / "data", library)
    engine.index()
    doc_id = engine.catalog.all_documents()[0].doc_id
    engine.close()
    script = f"""
import json, sys
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_engine import open_engine
from linkly_ls.core.tools import call_tool
engine = open_engine(Path({str(tmp_path / "data")!r}), Path({str(library)!r}))
loaded = {{}}
for step, tool, arguments in [
    ("word", "grep", {{"pattern": "the", "context": 2}}),
    ("read", "read", {{"offset": 2, "limit": 5}}),
    ("regex", "grep", {{"pattern": "[a-z]+\\\\.[a-z]+\\\\(", "case_insensitive": True}}),
]:
    call_tool(engine, tool, {{"doc_id": {doc_id!r}, **arguments}}).to_markdown()
    loaded[step] = [name for name in ("numpy", "regex") if name in sys.modules]
print(json.dumps(loaded))
"""
    assert in_a_fresh_process(script) == {"word": [], "read": [], "regex": ["regex"]}


@pytest.mark.slow
def test_search_ranks_by_keywords_while_the_model_loads_in_the_background(tmp_path, library):
    engine = open_engine(tmp_path / "data", library, model="bundled")
    engine.index()
    engine.vectors.run_until_complete()
    engine.close()

    waiting = open_engine(tmp_path / "data", library, model="bundled")
    try:
        waiting.vectors.load_in_background(delay_s=60)
        result = call_tool(waiting, "search", {"query": "ownership rules"})
        assert result.results and result.mode == "keyword"
        assert "still loading" in result.mode_reason and result.indexing
    finally:
        waiting.close()  # ends the wait: closing stops the loader too

    loading = open_engine(tmp_path / "data", library, model="bundled")
    try:
        loading.vectors.load_in_background()
        deadline = time.monotonic() + 120
        while (result := call_tool(loading, "search", {"query": "ownership rules"})).mode != "hybrid":
            assert time.monotonic() < deadline, result.mode_reason
            time.sleep(0.1)
        assert result.results
    finally:
        loading.close()


def test_a_read_error_from_a_library_file_is_not_called_a_failed_write(tmp_path, library):
    """Per-file handling catches a library's read errors; one that escapes it must not send the user to
    check the disk of the data dir, and an error inside the data dir still reads as a failed write."""
    from linkly_ls.core.engine import EngineError

    engine = open_engine(tmp_path / "data", library)
    document = library / sorted(path.name for path in library.iterdir())[0]
    try:
        with pytest.raises(EngineError) as read_error, engine._writing():
            raise PermissionError(13, "Permission denied", str(document))
        assert str(read_error.value).startswith(f"cannot read {document}: Permission denied")
        with pytest.raises(EngineError) as write_error, engine._writing():
            raise OSError(28, "No space left on device", str(engine.data_dir / "catalog.sqlite3"))
        assert str(write_error.value) == f"cannot write the index in {engine.data_dir}: No space left on device"
        scratch = tmp_path / "scratch" / "part-1.pickle"
        with pytest.raises(EngineError) as elsewhere, engine._writing():
            raise OSError(28, "No space left on device", str(scratch))
        assert str(elsewhere.value) == f"cannot write {scratch}: No space left on device"
    finally:
        engine.close()


def test_a_folder_another_library_holds_is_refused_with_the_library_to_search(tmp_path):
    (tmp_path / "notes" / "rust").mkdir(parents=True)
    (tmp_path / "notes" / "rust" / "own.md").write_text("# Own\n\nownership\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data"))
    try:
        engine.add_library([tmp_path / "notes"], "notes")
        for path in (tmp_path / "notes", tmp_path / "notes" / "rust", tmp_path / "notes" / "rust" / "own.md"):
            with pytest.raises(ConfigError, match="already in library 'notes'.*--library notes"):
                engine.add_library([path], "other")
        assert [library.name for library in engine.libraries()] == ["notes"]
        again = engine.add_library([tmp_path / "notes" / "rust"], "notes")
        assert again.paths == [str(tmp_path / "notes")], "a folder the library holds already is not added twice"
        outside = tmp_path / "elsewhere"
        outside.mkdir()
        assert engine.add_library([outside], "other").paths == [str(outside)]
        with pytest.raises(ConfigError, match="is the whole file system"):
            engine.add_library([Path("/")], "everything")
    finally:
        engine.close()


def test_a_folder_named_like_another_library_is_not_merged_into_it_unasked(tmp_path):
    for folder in ("a/notes", "b/notes"):
        (tmp_path / folder).mkdir(parents=True)
    engine = Engine(Config(data_dir=tmp_path / "data"))
    try:
        engine.add_library([tmp_path / "a" / "notes"])
        assert engine.add_library([tmp_path / "a" / "notes"]).paths == [str(tmp_path / "a" / "notes")]  # again: fine
        with pytest.raises(ConfigError, match="a library named 'notes' already holds .*a/notes; to add .*b/notes to it, pass `--library notes`"):
            engine.add_library([tmp_path / "b" / "notes"])
        both = engine.add_library([tmp_path / "b" / "notes"], "notes")  # named: added on purpose
        assert both.paths == [str(tmp_path / "a" / "notes"), str(tmp_path / "b" / "notes")]
    finally:
        engine.close()


def test_linklys_own_data_folder_is_no_library_and_a_description_can_be_set_later(tmp_path):
    (tmp_path / "notes").mkdir()
    engine = Engine(Config(data_dir=tmp_path / "data"))
    try:
        for path in (tmp_path / "data", tmp_path / "data" / "keyword"):
            with pytest.raises(ConfigError, match="in linkly's own data folder"):
                engine.add_library([path], "index")
        engine.add_library([tmp_path / "notes"], "notes")
        assert engine.describe_library("notes", "My notes").description == "My notes"
        assert engine.catalog.library("notes").description == "My notes"
        with pytest.raises(ConfigError, match="unknown library: other"):
            engine.describe_library("other", "x")
    finally:
        engine.close()


def test_a_folder_named_in_another_script_gives_its_library_its_name_and_finds_it_by_either_form(tmp_path):
    import unicodedata

    from linkly_ls.core.tools import call_tool

    for name in ("笔记", "Bücher"):
        folder = tmp_path / unicodedata.normalize("NFD", name)
        folder.mkdir()
        (folder / "note.md").write_text(f"# {name}\n\nkeyword zebrafish\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data"))
    try:
        assert engine.add_library([tmp_path / "笔记"]).name == "笔记"
        assert engine.add_library([tmp_path / unicodedata.normalize("NFD", "Bücher")]).name == "Bücher"
        engine.index()
        for typed in ("Bücher", unicodedata.normalize("NFD", "Bücher"), "local://Bücher"):
            result = call_tool(engine, "search", {"query": "zebrafish", "library": typed})
            assert [hit.library for hit in result.results] == ["Bücher"], typed
    finally:
        engine.close()
