"""The vector rows: keys, current chunks, missing documents, coverage, and the tables' migration."""

from __future__ import annotations

import pytest

from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.vector_rows import (
    VectorRows,
    ensure_vector_tables,
    forget_all_vectors,
    has_vectors,
    stored_vector_rows,
)

MODEL = "test/model"
OTHER = "test/other"
DAY = 86_400 * 10**9


@pytest.fixture
def rows(catalog) -> VectorRows:
    ensure_vector_tables(catalog)
    return VectorRows(catalog, MODEL)


def embed(rows: VectorRows, doc_id: str, content_hash: str, keys: list[int], text_hashes=None) -> None:
    """Commit rows for a document: one chunk per key, chunk n covering line n + 1."""
    text_hashes = text_hashes or [None] * len(keys)
    chunks = [
        (rows.model_id, key, doc_id, number, number + 1, number + 1, text_hash)
        for number, (key, text_hash) in enumerate(zip(keys, text_hashes))
    ]
    rows.commit(chunks, [(rows.model_id, doc_id, content_hash, len(keys))])


def test_ensuring_the_tables_twice_changes_nothing(catalog):
    ensure_vector_tables(catalog)
    ensure_vector_tables(catalog)
    indexes = {row[0] for row in catalog.connect().execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"vector_chunks_of_doc", "vector_chunks_text"} <= indexes


def test_a_document_s_chunks_are_read_from_the_index_alone(catalog):
    """The rows of a document's chunks come from the covering index, which replaces the older one."""
    with catalog.connect() as db:
        db.execute(
            "CREATE TABLE vector_chunks (model TEXT NOT NULL, key INTEGER NOT NULL, doc_id TEXT NOT NULL, "
            "chunk INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, text_hash INTEGER, "
            "PRIMARY KEY (model, key))"
        )
        db.execute("CREATE INDEX vector_chunks_doc ON vector_chunks(model, doc_id)")
    ensure_vector_tables(catalog)
    db = catalog.connect()
    indexes = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "vector_chunks_doc" not in indexes
    plan = " ".join(
        str(row[3])
        for row in db.execute(
            "EXPLAIN QUERY PLAN SELECT key, chunk, start_line, end_line FROM vector_chunks WHERE model = ? AND doc_id = ?",
            (MODEL, "a"),
        )
    )
    assert "COVERING INDEX vector_chunks_of_doc" in plan


def test_tables_from_before_text_hashes_get_the_column_and_keep_their_rows(catalog):
    with catalog.connect() as db:
        db.execute(
            "CREATE TABLE vector_chunks (model TEXT NOT NULL, key INTEGER NOT NULL, doc_id TEXT NOT NULL, "
            "chunk INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, PRIMARY KEY (model, key))"
        )
        db.execute("INSERT INTO vector_chunks VALUES (?, 7, 'a', 0, 1, 1)", (MODEL,))
    ensure_vector_tables(catalog)
    rows = VectorRows(catalog, MODEL)
    assert rows.keys() == {7} and rows.max_key() == 7
    assert rows.keys_for_texts([1, 2]) == {}  # old rows have no text hash: never reused
    assert stored_vector_rows(catalog)[0] == [(MODEL, 7, "a", 0, 1, 1, None)]


def test_keys_per_model_and_document(rows, catalog):
    assert rows.max_key() == 0 and rows.keys() == set() and rows.count() == 0
    embed(rows, "a", "h1", [1, 2])
    embed(rows, "b", "h1", [3])
    embed(VectorRows(catalog, OTHER), "a", "h1", [9])
    assert rows.max_key() == 3 and rows.keys() == {1, 2, 3} and rows.count() == 3
    assert sorted(rows.keys_of(["a"])) == [1, 2] and rows.keys_of(["zzz"]) == []
    rows.delete_documents(["a"])
    assert rows.keys() == {3}
    assert VectorRows(catalog, OTHER).keys() == {9}  # another model's rows stay


def test_keys_for_texts_names_the_smallest_key_of_each_text(rows):
    embed(rows, "a", "h1", [5, 6], text_hashes=[11, -22])
    embed(rows, "b", "h1", [2], text_hashes=[11])
    assert rows.keys_for_texts([11, -22, 33]) == {11: 2, -22: 6}
    assert rows.keys_for_texts(list(range(1000, 2200)) + [11]) == {11: 2}  # batched past 500 values


def test_current_chunks_leave_out_deleted_and_changed_documents(rows, catalog, make_record):
    for name, content_hash in (("a", "h1"), ("b", "h1"), ("c", "h1")):
        catalog.put_document(make_record(f"/docs/{name}.md", doc_id=name, content_hash=content_hash), ["x"])
    embed(rows, "a", "h1", [1, 2])
    embed(rows, "b", "h1", [3])
    embed(rows, "c", "h1", [4])
    catalog.put_document(make_record("/docs/b.md", doc_id="b", content_hash="h2"), ["changed"])
    catalog.remove_document("c")
    assert sorted(rows.current_chunks_of_documents(["a", "b", "c"])) == [(1, "a", 0, 1, 1), (2, "a", 1, 2, 2)]
    assert rows.current_chunks_of_keys([2, 3, 4, 99]) == [(2, "a", 1, 2, 2)]
    assert rows.documents_with_vectors(["a", "b", "c", "d"]) == {"a"}
    assert sorted(rows.outdated_documents()) == ["b", "c"]


def test_missing_documents_come_newest_day_first_then_smallest(rows, catalog, make_record):
    start = 1_700_000_000 * 10**9
    documents = [
        ("old", start, 1),
        ("new-big", start + 2 * DAY, 500),
        ("new-small", start + 2 * DAY + 5, 3),
        ("embedded", start + 3 * DAY, 1),
    ]
    for name, mtime_ns, words in documents:
        catalog.put_document(make_record(f"/docs/{name}.md", doc_id=name, mtime_ns=mtime_ns, word_count=words), ["x"])
    embed(rows, "embedded", "h1", [1])
    assert rows.missing_documents(10) == [("new-small", "h1"), ("new-big", "h1"), ("old", "h1")]
    assert rows.missing_documents(1) == [("new-small", "h1")]


def test_coverage_counts_words_and_follows_commits_of_other_connections(tmp_path, make_record):
    path = tmp_path / "catalog.sqlite3"
    writer, reader = Catalog(path), Catalog(path)
    ensure_vector_tables(writer)
    for name, library, words in (("a", "notes", 10), ("b", "notes", 30), ("c", "books", 5)):
        writer.put_document(make_record(f"/{library}/{name}.md", doc_id=name, library=library, word_count=words), ["x"])
    writer_rows, reader_rows = VectorRows(writer, MODEL), VectorRows(reader, MODEL)
    assert reader_rows.coverage() == {"notes": (0, 40), "books": (0, 5)}
    embed(writer_rows, "b", "h1", [1])
    assert reader_rows.coverage() == {"notes": (30, 40), "books": (0, 5)}  # another connection committed
    embed(reader_rows, "c", "h1", [2])
    assert reader_rows.coverage() == {"notes": (30, 40), "books": (5, 5)}  # this connection committed
    reader_rows.coverage()["notes"] = (0, 0)
    assert reader_rows.coverage()["notes"] == (30, 40)  # callers get a copy of the cached answer
    writer.close()
    reader.close()


def test_has_vectors_needs_a_document_with_chunks(rows, catalog):
    assert not has_vectors(catalog, [MODEL, OTHER])
    rows.commit([], [(MODEL, "empty", "h1", 0)])
    assert not has_vectors(catalog, [MODEL])
    embed(rows, "a", "h1", [1])
    assert has_vectors(catalog, [OTHER, MODEL]) and not has_vectors(catalog, [OTHER])


def test_stored_rows_and_forgetting_them_all(catalog):
    assert stored_vector_rows(catalog) is None  # no vector tables yet
    forget_all_vectors(catalog)  # nothing to forget is not an error
    ensure_vector_tables(catalog)
    embed(VectorRows(catalog, MODEL), "a", "h1", [1], text_hashes=[5])
    embed(VectorRows(catalog, OTHER), "b", "h2", [1])
    chunks, docs = stored_vector_rows(catalog)
    assert sorted(chunks) == [(MODEL, 1, "a", 0, 1, 1, 5), (OTHER, 1, "b", 0, 1, 1, None)]
    assert sorted(docs) == [(MODEL, "a", "h1", 1), (OTHER, "b", "h2", 1)]
    forget_all_vectors(catalog)
    assert stored_vector_rows(catalog) == ([], [])


def test_documents_cut_by_an_older_chunking_stay_current_but_are_missing_again(catalog, make_record):
    ensure_vector_tables(catalog)
    for name in ("old-cut", "new-cut"):
        catalog.put_document(make_record(f"/docs/{name}.md", doc_id=name), ["x"])
    embed(VectorRows(catalog, MODEL, chunking=1), "old-cut", "h1", [1])
    embed(VectorRows(catalog, MODEL, chunking=2), "new-cut", "h1", [2])
    newer = VectorRows(catalog, MODEL, chunking=2)
    assert newer.documents_with_vectors(["old-cut", "new-cut"]) == {"old-cut", "new-cut"}
    assert sorted(row[1] for row in newer.current_chunks_of_documents(["old-cut", "new-cut"])) == ["new-cut", "old-cut"]
    assert newer.missing_documents(10) == [("old-cut", "h1")]
    assert VectorRows(catalog, MODEL, chunking=1).missing_documents(10) == []
    assert newer.coverage() == {"lib": (10, 10)}  # search keeps using the older cut meanwhile


def test_tables_from_before_chunking_versions_get_the_column_and_count_as_version_one(catalog, make_record):
    with catalog.connect() as db:
        db.execute(
            "CREATE TABLE vector_docs (model TEXT NOT NULL, doc_id TEXT NOT NULL, content_hash TEXT NOT NULL, "
            "chunks INTEGER NOT NULL, PRIMARY KEY (model, doc_id))"
        )
        db.execute("INSERT INTO vector_docs VALUES (?, 'a', 'h1', 1)", (MODEL,))
    catalog.put_document(make_record("/docs/a.md", doc_id="a"), ["x"])
    ensure_vector_tables(catalog)
    assert VectorRows(catalog, MODEL, chunking=1).missing_documents(10) == []
    assert VectorRows(catalog, MODEL, chunking=2).missing_documents(10) == [("a", "h1")]
    assert stored_vector_rows(catalog)[1] == [(MODEL, "a", "h1", 1)]
