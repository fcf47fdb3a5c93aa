"""Which ranked documents are one work: copies of a file, or one text saved in two formats.

A library often holds a paper as PDF beside the text or Markdown it was made from, or
slides converted from a chapter. Shown as two results they take two of the few places a
person (or an agent) reads; shown once, with the other files named, every place shows a
different text. Deciding needs only facts the catalog already keeps: the content hash
(copies), and for two formats the title or file name, the key terms and the length.
"""

from __future__ import annotations

import os
import unicodedata
from typing import TYPE_CHECKING

from linkly_ls.core.search.ranked import RankedDocument
from linkly_ls.core.store.records import WorkFacts, name_key, title_key

if TYPE_CHECKING:
    from linkly_ls.core.store.catalog import Catalog

#: a converted text differs in length by its running heads, page numbers and slide marks:
#: maint-guide is 23,576 words as text and 24,605 as PDF; a draft and its 3-slide summary differ by 3x
LENGTH_RATIO = 1.5
#: share of the shorter list of key terms the other must hold (7 of 8 for the same book in two formats;
#: two translations share names only)
SHARED_KEYWORDS = 0.75
#: fewer key terms than this prove nothing
MIN_SHARED_KEYWORDS = 3


def same_work(first: WorkFacts, second: WorkFacts) -> bool:
    """True for copies of one file, and for one text in two formats: the same title or file name, nearly
    the same length and key terms. Two files of one format that differ are versions, not one work."""
    if first.content_hash == second.content_hash:  # empty notes share the hash of nothing: their names tell them apart
        return bool(first.word_count) or title_key(first.title) == title_key(second.title)
    if first.doc_type == second.doc_type:
        return False
    if title_key(first.title) != title_key(second.title) and name_key(first.path) != name_key(second.path):
        return False
    shorter, longer = sorted((first.word_count, second.word_count))
    if shorter == 0 or longer > LENGTH_RATIO * shorter:
        return False
    terms = [{_folded(term) for term in facts.keywords} for facts in (first, second)]
    shared = len(terms[0] & terms[1])
    return shared >= MIN_SHARED_KEYWORDS and shared >= SHARED_KEYWORDS * min(len(terms[0]), len(terms[1]))


class WorkGroups:
    """Ranked documents gathered into works, best first: each work is its best-ranked document and the
    other files of it ranked below, up to `limit` works (files of a work already listed still join it)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.works: list[tuple[WorkFacts, list[WorkFacts]]] = []
        #: each lead's place in `works` by what any file of its work must share with it: its content (a
        #: copy) or its title or file name (another format); a search gathers hundreds of documents
        self._by_key: dict[tuple[str, str], list[int]] = {}

    @property
    def full(self) -> bool:
        return len(self.works) >= self.limit

    def add(self, facts: WorkFacts) -> None:
        keys = _keys(facts)
        places = sorted({place for key in keys for place in self._by_key.get(key, ())})
        for place in places:
            lead, others = self.works[place]
            if same_work(lead, facts):
                others.append(facts)
                return
        if not self.full:
            for key in keys:
                self._by_key.setdefault(key, []).append(len(self.works))
            self.works.append((facts, []))


def _keys(facts: WorkFacts) -> tuple[tuple[str, str], ...]:
    return (("content", facts.content_hash), ("title", title_key(facts.title)), ("name", name_key(facts.path)))


def _folded(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def distinct_works(
    catalog: Catalog, documents: list[RankedDocument], limit: int
) -> list[tuple[RankedDocument, list[WorkFacts]]]:
    """The first `limit` ranked documents that are distinct works (`same_work`), each with the other
    files of its work ranked below it: copies of a file, the same text in another format.

    Only what tells works apart is read (in pages, best first); full records, whose outlines can be
    large, are read for the documents shown.
    """
    groups = WorkGroups(limit)
    by_id: dict[str, RankedDocument] = {}
    page = limit * 4 + 50
    for start in range(0, len(documents), page):
        batch = documents[start : start + page]
        by_id.update((document.doc_id, document) for document in batch)
        facts = catalog.work_facts([document.doc_id for document in batch])
        for document in batch:
            if document.doc_id in facts:
                groups.add(facts[document.doc_id])
        if groups.full:
            break
    return [(by_id[lead.doc_id], others) for lead, others in map(_live_copy_first, groups.works)]


def _live_copy_first(work: tuple[WorkFacts, list[WorkFacts]]) -> tuple[WorkFacts, list[WorkFacts]]:
    """The work shown by a copy still on disk when its best-ranked file is gone (moved away, not yet
    re-indexed): the same text, at a path that opens."""
    lead, others = work
    if not others or os.path.exists(lead.path):
        return work
    live = next((other for other in others if other.content_hash == lead.content_hash and os.path.exists(other.path)), None)
    if live is None:
        return work
    return live, [lead if other is live else other for other in others]
