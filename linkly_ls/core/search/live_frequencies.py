"""What search says of words, from the keyword index with its deleted chunks left out."""

from __future__ import annotations

import tantivy
from tantivy import Query


class LiveFrequencies:
    """Document frequencies that count no deleted chunk. Tantivy's own count a deleted chunk's terms
    until its segment is merged, which in a folder nobody edits may be never: a deleted or redacted
    document's words were offered back as spellings ("Did you mean 'vellacourt'?"), and "no document
    contains X" told a word once indexed from one never seen. A term Tantivy counts is looked up."""

    def __init__(self, searcher: tantivy.Searcher, schema: tantivy.Schema) -> None:
        self._searcher = searcher
        self._schema = schema

    def doc_freq(self, field: str, term: str) -> int:
        counted = self._searcher.doc_freq(field, term)
        if not counted:
            return 0
        live = self._searcher.search(Query.term_query(self._schema, field, term), 1, count=True).count
        return counted if live else 0

    def passages_holding(self, field: str, term: str, limit: int) -> list[tuple[str, int, int]]:
        """(doc_id, start_line, end_line) of up to `limit` live chunks whose `field` holds `term`."""
        found = self._searcher.search(Query.term_query(self._schema, field, term), limit)
        passages = []
        for _, address in found.hits:
            stored = self._searcher.doc(address)
            passages.append((stored.get_first("doc_id"), stored.get_first("start_line"), stored.get_first("end_line")))
        return passages
