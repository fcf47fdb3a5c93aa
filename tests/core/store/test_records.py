"""Records to rows and back."""

from __future__ import annotations

from linkly_ls.core.store.records import (
    DOC_COLUMNS,
    SUMMARY_COLUMNS,
    DocumentSummary,
    LibraryRecord,
    document_from_row,
    document_row,
    library_from_row,
    library_row,
    make_doc_id,
    summary_from_row,
)
from linkly_ls.core.store.line_blocks import decode_text


def test_doc_ids_are_stable_and_short():
    assert make_doc_id("/docs/a.md") == make_doc_id("/docs/a.md") != make_doc_id("/docs/b.md")
    assert len(make_doc_id("/docs/a.md")) == 12
    assert make_doc_id("/docs/\udcff.md")  # an undecodable file name still has an id


def test_a_document_row_round_trips(make_record):
    record = make_record("/docs/a.md", keywords=["été"], warnings=["OCR pending"], page_starts=[1, 40])
    row = document_row(record, ["# Top", "text"])
    assert len(row) == len(DOC_COLUMNS.split(",")) + 1
    assert decode_text(row[-1]) == ("# Top\ntext", 2)
    assert "été" in row[12]  # JSON keeps non-ASCII text readable
    assert document_from_row(row[:-1]) == record


def test_a_library_row_round_trips():
    library = LibraryRecord(name="lib", paths=["/a", "/b"], description="d", include=["*.md"], exclude=["x/"])
    row = library_row(library, 5.0)
    assert row[-1] == 5.0
    assert library_from_row(row[:-1]) == library


def test_a_summary_has_its_columns_in_field_order(make_record):
    record = make_record("/docs/a.md")
    values = {name.strip(): getattr(record, name.strip()) for name in SUMMARY_COLUMNS.split(",")}
    values["has_outline"] = 1
    values["keywords"] = '["alpha", "beta"]'
    summary = summary_from_row(tuple(values.values()))
    assert summary == DocumentSummary(
        doc_id=record.doc_id, library="lib", path="/docs/a.md", doc_type="md", title="a", size=10,
        mtime_ns=record.mtime_ns, content_hash="h1", word_count=5, total_lines=1, has_outline=True,
        keywords=["alpha", "beta"], text_missing_reason=None, language=record.language,
    )
    assert summary.modified_at == record.modified_at
