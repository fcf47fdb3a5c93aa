"""The catalog's read queries."""

from __future__ import annotations

import pytest

from linkly_ls.core.store.catalog import ErrorRecord, LibraryRecord, make_doc_id

DAY = 86_400 * 10**9
START = 1_700_000_000 * 10**9


@pytest.fixture
def filled(catalog, make_record):
    """Four documents in two libraries, of two types, a day apart."""
    documents = [
        make_record("/notes/a.md", library="notes", mtime_ns=START),
        make_record("/notes/b.pdf", library="notes", doc_type="pdf", mtime_ns=START + DAY, content_hash="h2"),
        make_record("/books/c.md", library="books", mtime_ns=START + 2 * DAY),
        make_record("/books/d.epub", library="books", doc_type="epub", mtime_ns=START + 3 * DAY, content_hash="h4"),
    ]
    catalog.put_documents([(record, ["# Top"]) for record in documents])
    return catalog


def matching_paths(catalog, **filters) -> list[str]:
    return sorted(path for _, path in catalog.documents_matching(**filters))


def test_documents_matching_combines_every_filter(filled):
    assert matching_paths(filled) == ["/books/c.md", "/books/d.epub", "/notes/a.md", "/notes/b.pdf"]
    assert matching_paths(filled, library="notes") == ["/notes/a.md", "/notes/b.pdf"]
    assert matching_paths(filled, doc_types=["md", "epub"]) == ["/books/c.md", "/books/d.epub", "/notes/a.md"]
    assert matching_paths(filled, library="books", doc_types=["md"]) == ["/books/c.md"]
    assert matching_paths(filled, library="nowhere") == []


def test_documents_matching_time_bounds_are_inclusive_seconds(filled):
    start = START / 1e9
    assert matching_paths(filled, modified_after=start + 86_400) == ["/books/c.md", "/books/d.epub", "/notes/b.pdf"]
    assert matching_paths(filled, modified_before=start + 86_400) == ["/notes/a.md", "/notes/b.pdf"]
    assert matching_paths(filled, modified_after=start + 86_400, modified_before=start + 2 * 86_400) == [
        "/books/c.md",
        "/notes/b.pdf",
    ]


def test_documents_matching_returns_ids_with_paths(filled):
    assert dict(filled.documents_matching(library="notes")) == {
        make_doc_id("/notes/a.md"): "/notes/a.md",
        make_doc_id("/notes/b.pdf"): "/notes/b.pdf",
    }


def test_paths_and_ids_of_all_documents_or_one_library(filled):
    assert sorted(filled.paths()) == ["/books/c.md", "/books/d.epub", "/notes/a.md", "/notes/b.pdf"]
    assert sorted(filled.paths("books")) == ["/books/c.md", "/books/d.epub"]
    assert filled.paths("nowhere") == []
    assert sorted(filled.doc_ids()) == sorted(make_doc_id(path) for path in filled.paths())
    assert filled.count() == 4
    assert filled.document_counts() == {"books": 2, "notes": 2}


def test_content_hashes_and_summaries_of_known_ids_only(filled):
    ids = [make_doc_id("/notes/b.pdf"), "000000000000", make_doc_id("/books/c.md")]
    assert filled.content_hashes(ids) == {ids[0]: "h2", ids[2]: "h1"}
    summaries = filled.summaries(ids)
    assert set(summaries) == {ids[0], ids[2]}
    summary = summaries[ids[0]]
    assert (summary.path, summary.doc_type, summary.has_outline, summary.keywords) == (
        "/notes/b.pdf",
        "pdf",
        True,
        ["alpha", "beta"],
    )
    assert summary.modified_at == (START + DAY) / 1e9
    assert filled.summaries([]) == {} and filled.content_hashes([]) == {}


def test_lookups_of_many_ids_are_batched(catalog, make_record):
    records = [make_record(f"/docs/{number:04d}.md", content_hash=f"h{number}") for number in range(1200)]
    catalog.put_documents([(record, ["line"]) for record in records])
    ids = [record.doc_id for record in records]
    assert len(catalog.content_hashes(ids)) == len(catalog.summaries(ids)) == len(catalog.get_many(ids)) == 1200
    assert catalog.content_hashes(ids)[ids[1100]] == "h1100"


def test_records_by_id_and_path_with_or_without_the_outline(filled):
    doc_id = make_doc_id("/notes/a.md")
    record = filled.get(doc_id)
    assert record is not None and record.outline[0].title == "Top"
    assert filled.get(doc_id, with_outline=False).outline == []
    assert filled.by_path("/notes/a.md") == record
    assert filled.get("000000000000") is None and filled.by_path("/nowhere") is None
    assert [r.path for r in filled.all_documents("notes")] == ["/notes/a.md", "/notes/b.pdf"]
    assert filled.file_states("books")["/books/d.epub"] == (make_doc_id("/books/d.epub"), 10, START + 3 * DAY, "h4")


def test_ocr_pending_paths_name_documents_whose_warning_says_so(catalog, make_record):
    catalog.put_documents(
        [
            (make_record("/docs/scan.pdf", warnings=["OCR pending: 3 pages"]), ["x"]),
            (make_record("/docs/text.pdf", warnings=["no OCR needed"]), ["x"]),
        ]
    )
    assert catalog.ocr_pending_paths("lib") == ["/docs/scan.pdf"]
    assert catalog.ocr_pending_paths("other") == []


def test_libraries_and_errors_are_listed_in_order(catalog):
    catalog.upsert_library(LibraryRecord(name="zeta", paths=["/z"]))
    catalog.upsert_library(LibraryRecord(name="alpha", paths=["/a"], include=["*.md"]))
    assert [library.name for library in catalog.libraries()] == ["alpha", "zeta"]
    assert catalog.library("alpha").include == ["*.md"] and catalog.library("nope") is None
    catalog.put_error(ErrorRecord("/z/bad.pdf", "zeta", "broken", 3, 4))
    catalog.put_error(ErrorRecord("/a/bad.pdf", "alpha", "broken", 3, 4))
    assert [error.path for error in catalog.errors()] == ["/a/bad.pdf", "/z/bad.pdf"]
    assert catalog.errors("zeta") == [ErrorRecord("/z/bad.pdf", "zeta", "broken", 3, 4)]
    assert catalog.error_for("/a/bad.pdf").library == "alpha" and catalog.error_for("/nope") is None
