from pathlib import Path

import pytest

from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.extract.ocr import OCR_PENDING
from linkly_ls.core.indexing.document_store import DocumentStore
from linkly_ls.core.indexing.preparation import PreparedFile, prepare_file
from linkly_ls.core.store.catalog import make_doc_id
from linkly_ls.core.tools import call_tool


def read(path: Path, text: str) -> PreparedFile:
    path.write_text(text, encoding="utf-8")
    return prepare_file((str(path), None, ExtractLimits()))


def titles(engine, query: str) -> list[str]:
    return [hit.title for hit in call_tool(engine, "search", {"query": query, "mode": "keyword"}).results]


@pytest.fixture
def engine(library_dir, engine_for):
    return engine_for(library_dir)


def test_a_stored_document_reaches_the_catalog_when_saved_and_search_when_flushed(engine, library_dir):
    store = DocumentStore(engine.catalog, engine.keyword)
    flushed: list[list[str]] = []
    store.after_flush.append(lambda pending, tombstones: flushed.append(pending))
    path = library_dir / "zebra.md"
    store.store(read(path, "# Zebra\n\nCrossings painted in stripes.\n"), "lib")
    assert engine.catalog.by_path(str(path)) is None, "kept in memory until the save"

    store.save_read_documents()
    assert engine.catalog.by_path(str(path)).title == "Zebra"
    assert titles(engine, "stripes") == []

    store.flush()
    assert titles(engine, "stripes") == ["Zebra"]
    assert flushed == [[make_doc_id(str(path))]]


def test_a_document_saved_by_another_store_is_chunked_again_from_its_lines(engine, library_dir):
    saved_only = DocumentStore(engine.catalog, engine.keyword)
    saved_only.store(read(library_dir / "okapi.md", "# Okapi\n\nA forest giraffe of the Congo.\n"), "lib")
    saved_only.save_read_documents()

    DocumentStore(engine.catalog, engine.keyword).flush()
    assert titles(engine, "giraffe") == ["Okapi"]


def test_an_error_replaces_what_the_catalog_held_for_the_file(engine, library_dir):
    store = DocumentStore(engine.catalog, engine.keyword)
    path = library_dir / "notes.md"
    store.store(read(path, "# Notes\n\nPostgres vacuum tuning.\n"), "lib")
    store.flush()

    store.record_error(str(path), "lib", "cannot read file: Permission denied")
    store.flush()
    assert engine.catalog.by_path(str(path)) is None
    assert [(error.path, error.message) for error in engine.catalog.errors("lib")] == [
        (str(path), "cannot read file: Permission denied")
    ]
    assert titles(engine, "vacuum") == []


def test_a_failed_save_leaves_nothing_for_the_next_flush(engine, library_dir, monkeypatch):
    store = DocumentStore(engine.catalog, engine.keyword)
    flushed: list[list[str]] = []
    store.after_flush.append(lambda pending, tombstones: flushed.append(pending))
    store.store(read(library_dir / "full.md", "# Full\n\nThe disk filled up.\n"), "lib")

    def full_disk(*args, **kwargs):  # noqa: ANN002, ANN003
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(engine.catalog, "put_documents", full_disk)
    with pytest.raises(OSError, match="No space left"):
        store.save_read_documents()
    monkeypatch.undo()

    store.flush()
    assert flushed == [], "the unsaved document is read again by the next run, not half-written now"
    assert engine.catalog.by_path(str(library_dir / "full.md")) is None


def test_a_failed_ocr_replaces_the_pending_note_and_keeps_the_text_layer(engine, library_dir):
    store = DocumentStore(engine.catalog, engine.keyword)
    path = library_dir / "scan.md"
    prepared = read(path, "# Scan\n\nThe text layer of a scanned page.\n")
    prepared.document.warnings.append(f"{OCR_PENDING}: 1 page")
    store.store(prepared, "lib")
    store.flush()

    store.record_ocr_failure(str(path), "tesseract exited with 1")
    record = engine.catalog.by_path(str(path))
    assert record.warnings == ["OCR failed: tesseract exited with 1"]
    assert titles(engine, "scanned") == ["Scan"]


def test_a_failed_ocr_of_a_file_gone_from_the_catalog_changes_nothing(engine, library_dir):
    store = DocumentStore(engine.catalog, engine.keyword)
    store.record_ocr_failure(str(library_dir / "gone.png"), "tesseract exited with 1")
    assert engine.catalog.errors("lib") == []


def test_a_flush_of_many_documents_commits_them_in_batches_the_removals_with_the_first(engine, library_dir, monkeypatch):
    from linkly_ls.core.indexing import document_store

    store = DocumentStore(engine.catalog, engine.keyword)
    gone = library_dir / "gone.md"
    store.store(read(gone, "# Gone\n\nA note about to go.\n"), "lib")
    store.flush()
    engine.catalog.remove_document(make_doc_id(str(gone)))
    for name in ("zebra", "okapi", "quagga"):
        store.store(read(library_dir / f"{name}.md", f"# {name.title()}\n\nThe {name} of the savanna.\n"), "lib")
    commits: list[tuple[int, int]] = []
    store.after_flush.append(lambda added, removed: commits.append((len(added), len(removed))))
    monkeypatch.setattr(document_store, "FLUSH_BATCH_CHUNKS", 1)
    store.flush()
    assert commits == [(1, 1), (1, 0), (1, 0)], "a commit a document; the removal goes with the first"
    assert sorted(titles(engine, "savanna")) == ["Okapi", "Quagga", "Zebra"] and titles(engine, "about") == []
    assert engine.catalog.pending_keyword_work() == ([], [])
