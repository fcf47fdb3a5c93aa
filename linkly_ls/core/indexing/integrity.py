"""Do the catalog and the keyword index agree? A check for crash tests and for doubting users.

After every completed flush, each catalog document has exactly the chunks that
chunking its stored lines gives (none when it has no text), the keyword index
has no chunk of a document the catalog does not know, and no work is left
pending. An interrupted run may leave pending work behind; `Engine.recover()`
finishes it, after which the check must pass again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tantivy import Query

from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.search.chunking import chunk_document
from linkly_ls.core.search.keyword import KeywordIndex


@dataclass
class IntegrityReport:
    documents: int = 0
    chunks: int = 0
    #: catalog documents whose keyword-index entry is still to be written, and deletions still to apply
    pending: list[str] = field(default_factory=list)
    tombstones: list[str] = field(default_factory=list)
    #: doc_id -> (chunks the catalog's lines give, chunks the keyword index holds) where the two lists differ
    mismatched: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: doc_ids that have chunks in the keyword index but no catalog entry
    unknown: list[str] = field(default_factory=list)

    @property
    def consistent(self) -> bool:
        return not (self.pending or self.tombstones or self.mismatched or self.unknown)

    def problems(self) -> list[str]:
        lines = [f"{doc_id}: {expected} chunk(s) expected, {held} in the keyword index (or other line ranges)"
                 for doc_id, (expected, held) in sorted(self.mismatched.items())]
        lines += [f"{doc_id}: in the keyword index but not in the catalog" for doc_id in sorted(self.unknown)]
        if self.pending:
            lines.append(f"{len(self.pending)} document(s) still pending for the keyword index")
        if self.tombstones:
            lines.append(f"{len(self.tombstones)} deletion(s) still pending for the keyword index")
        return lines


def keyword_chunks(keyword: KeywordIndex) -> dict[str, list[tuple[int, int, int]]]:
    """doc_id -> its live chunks in the keyword index as sorted (chunk, start_line, end_line)."""
    keyword.index.reload()
    searcher = keyword.index.searcher()
    chunks: dict[str, list[tuple[int, int, int]]] = {}
    if searcher.num_docs == 0:
        return chunks
    result = searcher.search(Query.all_query(), limit=searcher.num_docs, count=False)
    for _, address in result.hits:
        stored = searcher.doc(address)
        chunks.setdefault(stored.get_first("doc_id"), []).append(
            (stored.get_first("chunk"), stored.get_first("start_line"), stored.get_first("end_line"))
        )
    return {doc_id: sorted(found) for doc_id, found in chunks.items()}


def keyword_chunk_counts(keyword: KeywordIndex) -> Counter[str]:
    """doc_id -> number of live chunks in the keyword index (deleted chunks are not counted)."""
    return Counter({doc_id: len(found) for doc_id, found in keyword_chunks(keyword).items()})


def check_integrity(catalog: Catalog, keyword: KeywordIndex) -> IntegrityReport:
    report = IntegrityReport()
    report.pending, report.tombstones = catalog.pending_keyword_work()
    held = keyword_chunks(keyword)
    report.chunks = sum(len(found) for found in held.values())
    records = catalog.all_documents()
    report.documents = len(records)
    for record in records:
        chunks = chunk_document(catalog.lines(record.doc_id), record.outline, record.page_starts)
        expected = [(chunk.number, chunk.start_line, chunk.end_line) for chunk in chunks]
        if held.get(record.doc_id, []) != expected:
            report.mismatched[record.doc_id] = (len(expected), len(held.get(record.doc_id, [])))
    known = {record.doc_id for record in records}
    report.unknown = sorted(doc_id for doc_id in held if doc_id not in known)
    return report
