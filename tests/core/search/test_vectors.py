"""The vector index: approximate search against the exact scan, and consistency across restarts."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.store.catalog import Catalog, DocumentRecord
from linkly_ls.core.search.vectors import EXPANSION_ADD, EXPANSION_SEARCH, ChunkRef, VectorIndex, _usearch

DIM = 64
MODEL = "test/random-64"


def put_document(catalog: Catalog, doc_id: str, content_hash: str = "h1", words: int = 10) -> None:
    record = DocumentRecord(
        doc_id=doc_id, library="lib", path=f"/docs/{doc_id}.md", doc_type="md", title=doc_id, size=1,
        mtime_ns=time.time_ns(), content_hash=content_hash, word_count=words, total_lines=1, has_outline=False,
        language="en", keywords=[], outline=[], page_starts=[], warnings=[], text_missing_reason=None,
        indexed_at=time.time(),
    )
    catalog.put_document(record, ["line"])


def unit(rows: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).normal(size=(rows, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    yield catalog
    catalog.close()


def fill(catalog: Catalog, index: VectorIndex, documents: int, chunks_each: int, seed: int = 0) -> np.ndarray:
    vectors = unit(documents * chunks_each, seed)
    for number in range(documents):
        doc_id = f"doc{number:05d}"
        put_document(catalog, doc_id)
        refs = [ChunkRef(doc_id, chunk, chunk * 10 + 1, chunk * 10 + 10) for chunk in range(chunks_each)]
        index.add(doc_id, "h1", refs, vectors[number * chunks_each : (number + 1) * chunks_each])
    index.checkpoint()
    return vectors


def test_approximate_search_matches_the_exact_scan(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    fill(catalog, index, documents=1500, chunks_each=2)
    assert len(index) == 3000
    recalls = []
    for query in unit(40, seed=99):
        approximate = {(h.doc_id, h.chunk) for h in index.search(query, 10)}
        exact = index.exact_search(query, 10)
        recalls.append(len(approximate & {(h.doc_id, h.chunk) for h in exact}) / 10)
        assert exact == sorted(exact, key=lambda h: -h.score)
    # random directions in 64 dimensions are the graph's hard case (0.94 here with 64 candidates a search, 0.95
    # with 96); passages' first-pass vectors of the six collections: 0.983 (22,017 vectors, 300 queries)
    assert np.mean(recalls) >= 0.93
    index.close()


def test_exact_scan_scores_are_cosines(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=20, chunks_each=1)
    hit = index.exact_search(vectors[7], 1)[0]
    assert hit.doc_id == "doc00007" and hit.score == pytest.approx(1.0, abs=1e-3)
    index.close()


def test_filtered_search_stays_within_the_allowed_documents(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=200, chunks_each=3)
    allowed = ["doc00003", "doc00150"]
    hits = index.search(vectors[0], 10, allowed)
    assert {hit.doc_id for hit in hits} == set(allowed) and len(hits) == 6
    index.close()


def test_best_chunk_per_document_is_the_exact_scans_first_hit(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    fill(catalog, index, documents=30, chunks_each=5)
    query = unit(1, seed=7)[0]
    wanted = ["doc00003", "doc00010", "doc00029", "doc99999"]
    expected: dict = {}
    for hit in index.exact_search(query, 1000, wanted):
        expected.setdefault(hit.doc_id, hit)
    assert index.best_per_document(query, wanted) == expected and len(expected) == 3
    put_document(catalog, "doc00010", content_hash="h2")  # changed since embedded: its vectors are not current
    assert set(index.best_per_document(query, wanted)) == {"doc00003", "doc00029"}
    assert index.best_per_document(query, []) == {}
    index.close()


def test_coverage_follows_changes_made_through_any_connection(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    fill(catalog, index, documents=3, chunks_each=1)
    assert index.coverage() == {"lib": (30, 30)}
    assert index.coverage() == {"lib": (30, 30)}
    put_document(catalog, "doc-new", words=5)
    assert index.coverage() == {"lib": (30, 35)}
    other = Catalog(catalog.path)
    put_document(other, "doc-other", words=7)
    other.close()
    assert index.coverage() == {"lib": (30, 42)}
    index.close()


def test_a_reopened_index_searches_and_inserts_as_it_did_before_it_was_saved(catalog, tmp_path):
    """usearch keeps only the connectivity in a saved file: its defaults would otherwise apply after a restart."""
    directory = tmp_path / "vectors"
    index = VectorIndex(catalog, directory, MODEL, DIM, writer=True, expansion_add=40)
    fill(catalog, index, documents=5, chunks_each=2)
    assert (index.index.expansion_add, index.index.expansion_search) == (40, EXPANSION_SEARCH)
    index.close()
    for writable in (True, False):
        reopened = VectorIndex(catalog, directory, MODEL, DIM, writer=writable, expansion_add=40)
        assert (reopened.index.expansion_add, reopened.index.expansion_search) == (40, EXPANSION_SEARCH)
        reopened.close()
    default = VectorIndex(catalog, directory, MODEL, DIM)
    assert (default.index.expansion_add, default.index.expansion_search) == (EXPANSION_ADD, EXPANSION_SEARCH)
    default.close()


def test_add_remove_persist_and_reopen(catalog, tmp_path):
    directory = tmp_path / "vectors"
    index = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=50, chunks_each=2)
    assert index.search(vectors[10], 1)[0].doc_id == "doc00005"
    assert index.remove_documents(["doc00005"]) == 2
    index.checkpoint()
    assert "doc00005" not in {hit.doc_id for hit in index.search(vectors[10], 20)}
    index.close()

    reopened = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    assert len(reopened) == 98
    assert "doc00005" not in {hit.doc_id for hit in reopened.search(vectors[10], 20)}
    assert reopened.search(vectors[20], 1)[0].doc_id == "doc00010"
    assert [doc_id for doc_id, _ in reopened.missing_documents()] == ["doc00005"]
    reopened.add("doc00005", "h1", [ChunkRef("doc00005", 0, 1, 10)], vectors[10:11])
    reopened.checkpoint()
    new_key_hit = reopened.search(vectors[10], 1)[0]
    assert new_key_hit.doc_id == "doc00005"
    reopened.close()


def test_reader_sees_what_the_writer_saved(catalog, tmp_path):
    directory = tmp_path / "vectors"
    writer = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    vectors = fill(catalog, writer, documents=10, chunks_each=1)
    reader = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    assert not reader.writable, "a second writer must not get the lock"
    assert reader.writer_active_elsewhere()  # flock locks belong to open files: the writer's counts as another
    assert len(reader) == 10
    put_document(catalog, "late")
    writer.add("late", "h1", [ChunkRef("late", 0, 1, 2)], unit(1, seed=5))
    writer.checkpoint()
    time.sleep(0.01)
    reader.refresh()
    assert len(reader) == 11
    assert reader.search(vectors[3], 1)[0].doc_id == "doc00003"
    writer.close()
    reader.close()


def test_reader_sees_a_rewrite_of_the_same_size_within_one_timestamp_tick(catalog, tmp_path):
    import os

    directory = tmp_path / "vectors"
    writer = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    fill(catalog, writer, documents=5, chunks_each=1)
    reader = VectorIndex(catalog, directory, MODEL, DIM)
    before = writer.path.stat()
    moved = unit(1, seed=11)
    writer.remove_documents(["doc00002"])
    writer.add("doc00002", "h1", [ChunkRef("doc00002", 0, 1, 10)], moved)
    writer.checkpoint()
    os.utime(writer.path, ns=(before.st_atime_ns, before.st_mtime_ns))  # a coarse clock: the same timestamp
    assert writer.path.stat().st_size == before.st_size and writer.path.stat().st_mtime_ns == before.st_mtime_ns
    reader.refresh()
    assert reader.search(moved[0], 1)[0].doc_id == "doc00002"
    writer.close()
    reader.close()


def test_reopen_drops_orphans_and_requeues_changed_or_deleted_documents(catalog, tmp_path):
    directory = tmp_path / "vectors"
    index = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=30, chunks_each=1)
    # a crash between saving the index file and committing its rows leaves orphan keys
    put_document(catalog, "crashed")
    index.add("crashed", "h1", [ChunkRef("crashed", 0, 1, 2)], unit(1, seed=7))
    index.index.save(str(index.path))
    index._writer_lock.release()  # the process died: the kernel released its lock
    # meanwhile one document changed and one was deleted
    put_document(catalog, "doc00001", content_hash="h2")
    catalog.remove_document("doc00002")

    reopened = VectorIndex(catalog, directory, MODEL, DIM, writer=True)
    assert len(reopened) == 28
    found = {hit.doc_id for hit in reopened.exact_search(vectors[1], 50)}
    assert {"crashed", "doc00001", "doc00002"}.isdisjoint(found)
    missing = {doc_id for doc_id, _ in reopened.missing_documents()}
    assert missing == {"crashed", "doc00001"}
    reopened.close()


def test_vectors_for_texts_finds_pending_and_committed_vectors_as_stored(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = unit(3, seed=5)
    put_document(catalog, "a")
    index.add("a", "h1", [ChunkRef("a", 0, 1, 1, text_hash=11), ChunkRef("a", 1, 2, 2, text_hash=-22)], vectors[:2])
    pending = index.vectors_for_texts([11, -22, 33])
    assert set(pending) == {11, -22}
    assert float(pending[11] @ vectors[0] / np.linalg.norm(pending[11])) > 0.9999  # stored as 8-bit integers
    index.checkpoint()
    committed = index.vectors_for_texts([11, -22])
    assert np.array_equal(committed[-22], pending[-22])
    put_document(catalog, "b")
    index.add("b", "h1", [ChunkRef("b", 0, 1, 1, text_hash=11)], committed[11][None, :])
    index.checkpoint()
    keys = index._keys_of(["a", "b"])
    stored = np.vstack(index.index.get(np.asarray(sorted(keys), dtype=np.uint64), dtype=np.float32))
    assert np.array_equal(stored[0], stored[2])  # re-adding a stored vector stores it unchanged
    index.remove_documents(["a"])
    assert set(index.vectors_for_texts([11, -22])) == {11}
    index.close()


def test_an_index_from_before_text_hashes_gets_the_column_and_keeps_its_rows(tmp_path):
    import sqlite3

    path = tmp_path / "catalog.sqlite3"
    catalog = Catalog(path)
    with catalog.connect() as db:
        db.execute(
            "CREATE TABLE vector_chunks (model TEXT NOT NULL, key INTEGER NOT NULL, doc_id TEXT NOT NULL, "
            "chunk INTEGER NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL, PRIMARY KEY (model, key))"
        )
        db.execute("INSERT INTO vector_chunks VALUES (?, 1, 'a', 0, 1, 1)", (MODEL,))
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(vector_chunks)")}
    assert "text_hash" in columns
    assert index.vectors_for_texts([1, 2]) == {}
    index.close()
    catalog.close()


def test_best_chunk_for_several_views_takes_each_chunks_best_view(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    fill(catalog, index, documents=30, chunks_each=5)
    views = unit(3, seed=11)
    wanted = ["doc00001", "doc00012", "doc00027"]
    per_view = [index.best_per_document(view, wanted) for view in views]
    combined = index.best_per_document(views, wanted)
    for doc_id in wanted:
        best = max((found[doc_id] for found in per_view), key=lambda hit: hit.score)
        assert combined[doc_id].score == pytest.approx(best.score, abs=1e-5)
        assert combined[doc_id].chunk == best.chunk
    index.close()


def test_search_by_several_views_scores_each_chunk_by_its_best_view(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=100, chunks_each=2)
    views = np.vstack([unit(1, seed=5)[0], vectors[17], vectors[160]])
    hits = index.search(views, 10)
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert {(hits[0].doc_id, hits[0].chunk), (hits[1].doc_id, hits[1].chunk)} == {("doc00008", 1), ("doc00080", 0)}
    assert len({(hit.doc_id, hit.chunk) for hit in hits}) == len(hits) == 10
    for hit in hits:
        row = vectors[int(hit.doc_id[3:]) * 2 + hit.chunk]
        assert hit.score == pytest.approx(float((views @ row).max()), abs=5e-3)  # 8-bit vectors
    exact = index.exact_search(views, 10)
    assert len({(h.doc_id, h.chunk) for h in hits} & {(h.doc_id, h.chunk) for h in exact}) >= 9
    within = index.search(views, 4, ["doc00008", "doc00050"])
    assert {hit.doc_id for hit in within} == {"doc00008", "doc00050"} and within[0].doc_id == "doc00008"
    assert index.search(views[:1], 5) == index.search(views[0], 5)
    index.close()


@pytest.mark.parametrize("slice_size", [64, 3, 1])
def test_documents_added_together_are_what_they_are_added_one_by_one(catalog, tmp_path, monkeypatch, slice_size):
    monkeypatch.setattr("linkly_ls.core.search.vectors.INSERT_SLICE", slice_size)
    vectors = unit(7, seed=5)
    layout = {"a": vectors[:3], "empty": vectors[:0], "b": vectors[3:7]}
    for doc_id in layout:
        put_document(catalog, doc_id)
    refs = {doc_id: [ChunkRef(doc_id, n, n + 1, n + 1, text_hash=n) for n in range(len(rows))] for doc_id, rows in layout.items()}
    together = VectorIndex(catalog, tmp_path / "together", MODEL, DIM, writer=True)
    together.add_documents([(doc_id, "h1", refs[doc_id], rows) for doc_id, rows in layout.items()])
    together.checkpoint()
    found = {doc_id: [(hit.chunk, hit.start_line) for hit, _ in together.chunk_vectors(doc_id)] for doc_id in layout}
    assert found == {"a": [(0, 1), (1, 2), (2, 3)], "empty": [], "b": [(0, 1), (1, 2), (2, 3), (3, 4)]}
    for doc_id, rows in layout.items():
        stored = np.stack([vector for _, vector in together.chunk_vectors(doc_id)]) if len(rows) else rows
        assert np.allclose(stored, rows, atol=1e-2), "each document keeps its own vectors (8-bit in the index)"
    best = together.search(vectors[5], 1)[0]
    assert (best.doc_id, best.chunk) == ("b", 2)
    assert together.documents_with_vectors(list(layout)) >= {"a", "b"}
    with pytest.raises(ValueError, match="2 vectors for 1 chunks"):
        together.add_documents([("a", "h1", refs["a"][:1], vectors[:2])])


def test_adding_no_documents_leaves_the_saved_index_alone(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    fill(catalog, index, documents=2, chunks_each=1)
    saved = index.path.stat().st_ino
    index.add_documents([])
    index.checkpoint()
    assert index.path.stat().st_ino == saved, "nothing new: readers have nothing to reload"


def test_an_index_handed_back_to_reading_forgets_documents_by_their_rows_and_clears_unread(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    fill(catalog, index, documents=20, chunks_each=3)
    index.stop_writing()
    assert not index.writable and len(index) == 60
    # a removal racing the hand-over reaches the read-only map: usearch would crash on it
    assert index.remove_documents(["doc00000", "doc00001"]) == 0
    assert index.rows.document_count() == 18 and len(index) == 60
    index.close()

    reopened = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    assert len(reopened) == 54, "the writable open drops the vectors whose rows are gone"
    reopened.stop_writing()
    reopened.clear()
    assert len(reopened) == 0 and reopened.rows.count() == 0 and reopened.rows.document_count() == 0
    reopened.close()
    assert len(VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM)) == 0


def test_hits_carry_their_keys_and_the_index_gives_back_their_stored_vectors(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=20, chunks_each=2)
    hits = index.search(vectors[7], 5)
    assert hits[0].doc_id == "doc00003" and hits[0].chunk == 1 and hits[0].key >= 0
    keys, stored = index.vectors_of([hits[0].key, 10**12])  # a key the index does not hold is left out
    assert keys == [hits[0].key]
    assert np.allclose(np.linalg.norm(stored, axis=1), 1.0, atol=1e-5) and np.allclose(stored[0], vectors[7], atol=1e-2)
    index.close()


def test_a_new_index_stores_8_bit_vectors_in_half_the_space(catalog, tmp_path):
    index = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    vectors = fill(catalog, index, documents=200, chunks_each=2)
    assert str(index.index.dtype).endswith("I8")
    half = _usearch()(ndim=DIM, metric="cos", dtype="f16", connectivity=16)
    half.add(np.arange(1, 401, dtype=np.uint64), vectors)
    half.save(str(tmp_path / "f16.usearch"))
    assert index.path.stat().st_size < 0.8 * (tmp_path / "f16.usearch").stat().st_size
    for query in unit(10, seed=8):
        assert index.search(query, 1)[0] == index.exact_search(query, 1)[0]
    index.close()


def test_an_index_saved_with_16_bit_vectors_is_still_read_searched_and_extended(catalog, tmp_path, monkeypatch):
    def half_precision(self):
        return _usearch()(ndim=self.dim, metric="cos", dtype="f16", connectivity=16, expansion_add=128, expansion_search=96)

    with monkeypatch.context() as patch:
        patch.setattr(VectorIndex, "_new_index", half_precision)
        old = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
        vectors = fill(catalog, old, documents=30, chunks_each=2)
        old.close()
    writer = VectorIndex(catalog, tmp_path / "vectors", MODEL, DIM, writer=True)
    assert str(writer.index.dtype).endswith("F16")
    hit = writer.search(vectors[11], 1)[0]
    assert (hit.doc_id, hit.chunk) == ("doc00005", 1) and hit.score == pytest.approx(1.0, abs=1e-3)
    _, stored = writer.vectors_of([hit.key])
    assert np.allclose(stored[0], vectors[11], atol=1e-3), "16-bit vectors come back as they are"
    put_document(catalog, "late")
    writer.add("late", "h1", [ChunkRef("late", 0, 1, 1)], unit(1, seed=42))
    writer.checkpoint()
    assert str(writer.index.dtype).endswith("F16") and writer.search(unit(1, seed=42)[0], 1)[0].doc_id == "late"
    writer.close()
