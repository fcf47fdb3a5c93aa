"""Catalog writes, keyword bookkeeping and per-thread connections."""

from __future__ import annotations

import threading

import pytest

from linkly_ls.core.store.catalog import ErrorRecord, LibraryRecord, StoreError


def test_each_thread_has_its_own_connection(catalog):
    mine = catalog.connect()
    assert catalog.connect() is mine
    theirs: list[object] = []
    thread = threading.Thread(target=lambda: theirs.append(catalog.connect()))
    thread.start()
    thread.join()
    assert theirs[0] is not mine
    catalog.close()
    assert catalog.connect() is not mine  # a closed connection is replaced on next use


def test_upsert_library_updates_in_place(catalog):
    catalog.upsert_library(LibraryRecord(name="lib", paths=["/a"]))
    catalog.upsert_library(LibraryRecord(name="lib", paths=["/a", "/b"], description="both", origin="config"))
    assert catalog.libraries() == [LibraryRecord(name="lib", paths=["/a", "/b"], description="both", origin="config")]


def test_putting_a_document_clears_its_error_and_tombstone_and_leaves_it_pending(catalog, make_record):
    record = make_record("/docs/a.md")
    catalog.put_error(ErrorRecord(record.path, "lib", "broken", 1, 1))
    catalog.remove_document(record.doc_id)
    assert catalog.pending_keyword_work() == ([], [record.doc_id])
    catalog.put_document(record, ["# Top"])
    assert catalog.error_for(record.path) is None
    assert catalog.pending_keyword_work() == ([record.doc_id], [])
    catalog.mark_keyword_done([record.doc_id], [])
    assert catalog.pending_keyword_work() == ([], [])


def test_removing_a_document_leaves_a_tombstone_until_the_keyword_index_forgets_it(catalog, make_record):
    record = make_record("/docs/a.md")
    catalog.put_document(record, ["# Top"])
    catalog.mark_keyword_done([record.doc_id], [])
    catalog.remove_document(record.doc_id)
    assert catalog.get(record.doc_id) is None and catalog.lines(record.doc_id) == []
    assert catalog.pending_keyword_work() == ([], [record.doc_id])
    catalog.mark_keyword_done([], [record.doc_id])
    assert catalog.pending_keyword_work() == ([], [])


def test_warnings_and_mtime_change_without_touching_the_text(catalog, make_record):
    record = make_record("/docs/a.md")
    catalog.put_document(record, ["# Top", "body"])
    catalog.set_warnings(record.doc_id, ["OCR pending"], "scanned")
    catalog.touch_document(record.doc_id, 42)
    stored = catalog.get(record.doc_id)
    assert (stored.warnings, stored.text_missing_reason, stored.mtime_ns) == (["OCR pending"], "scanned", 42)
    assert catalog.lines(record.doc_id) == ["# Top", "body"]


def test_put_documents_is_one_transaction(catalog, make_record):
    good = [make_record(f"/docs/{number}.md") for number in range(3)]
    catalog.put_error(ErrorRecord(good[0].path, "lib", "broken", 1, 1))
    unstorable = make_record("/docs/bad.md", size=object())  # no SQLite value: the insert fails
    with pytest.raises(StoreError):
        catalog.put_documents([(record, ["line"]) for record in good] + [(unstorable, ["line"])])
    assert catalog.count() == 0  # nothing of the batch was committed, not even the error's removal
    assert catalog.error_for(good[0].path) is not None
    catalog.put_documents([(record, ["line"]) for record in good])
    assert catalog.count() == 3 and catalog.error_for(good[0].path) is None
    catalog.put_documents([])
    assert catalog.count() == 3


def test_errors_are_replaced_and_removed_by_path(catalog):
    catalog.put_error(ErrorRecord("/docs/a.pdf", "lib", "first", 1, 1))
    catalog.put_error(ErrorRecord("/docs/a.pdf", "lib", "second", 2, 2))
    assert catalog.errors() == [ErrorRecord("/docs/a.pdf", "lib", "second", 2, 2)]
    catalog.remove_error("/docs/a.pdf")
    assert catalog.errors() == []


def test_removing_a_library_forgets_its_documents_errors_and_skipped_counts_only(catalog, make_record):
    from linkly_ls.core.store.catalog import SkippedCount

    catalog.upsert_library(LibraryRecord(name="lib", paths=["/docs"], respect_gitignore=False))
    catalog.upsert_library(LibraryRecord(name="other", paths=["/other"]))
    mine, theirs = make_record("/docs/a.md"), make_record("/other/b.md", library="other")
    catalog.put_documents([(mine, ["# A"]), (theirs, ["# B"])])
    catalog.mark_keyword_done([mine.doc_id, theirs.doc_id], [])
    catalog.put_error(ErrorRecord("/docs/broken.pdf", "lib", "broken", 1, 1))
    catalog.replace_skipped("lib", [SkippedCount("lib", "/docs", "gitignore", 4)])
    catalog.replace_skipped("other", [SkippedCount("other", "/other", "unsupported", 1)])
    assert catalog.library("lib").respect_gitignore is False
    assert catalog.remove_library("lib") == [mine.doc_id]
    assert [library.name for library in catalog.libraries()] == ["other"]
    assert catalog.get(mine.doc_id) is None and catalog.get(theirs.doc_id) is not None
    assert catalog.errors() == [] and catalog.error_counts() == {}
    assert catalog.skipped() == [SkippedCount("other", "/other", "unsupported", 1)]
    assert catalog.pending_keyword_work() == ([], [mine.doc_id])  # the keyword index forgets it at the next flush


def test_a_full_walk_replaces_the_skipped_counts_of_its_library(catalog):
    from linkly_ls.core.store.catalog import SkippedCount

    catalog.replace_skipped("lib", [SkippedCount("lib", "/docs", "gitignore", 4), SkippedCount("lib", "/docs/x", "exclude", 9)])
    catalog.replace_skipped("lib", [SkippedCount("lib", "/docs", "unsupported", 2)])
    assert catalog.skipped("lib") == [SkippedCount("lib", "/docs", "unsupported", 2)]
