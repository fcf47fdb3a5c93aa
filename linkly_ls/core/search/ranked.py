"""Ranked documents: what each side of a search found for a document, as the fusion, the feedback
rounds and the tools read it.

Both sides rank chunks, and a document takes the score of its best chunk (`keyword_documents`,
`vector_documents`). The keyword side searches on past documents whose every chunk matches until
it holds enough documents (`keyword_candidates`). A document found by the vector side alone gets its
keyword score from a second keyword search within such documents (`complete_keyword_side`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from linkly_ls.core.search.first_pass_side import REFINED, vector_parts

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.engine import Engine
    from linkly_ls.core.search.keyword import ChunkHit, KeywordIndex
    from linkly_ls.core.search.vector_search import VectorHit
    from linkly_ls.core.search.vectors import VectorIndex

#: a document's keyword score adds its n-th best further chunk's BM25 times this to the power n (0: best chunk only)
KEYWORD_FURTHER_CHUNKS = 0.0
#: the further matching chunks a document keeps as passages to show instead of its best
FURTHER_PASSAGES = 4
#: score the documents found only by the vector side on the keyword side too (`complete_keyword_side`)
COMPLETE_KEYWORD_SIDE = True
#: give the documents the vector side's candidates missed their exact cosine when above the least candidate's
COMPLETE_VECTOR_SIDE = True
#: the keyword side's best documents that may be completed so: reading every chunk vector of fifty
#: documents (long manuals among them) took 100 ms a search at 50k chunks
VECTOR_COMPLETION_DOCUMENTS = 10
COMPLETION_CHUNKS_PER_DOCUMENT = 20
#: documents the keyword side gathers when the index has them: the most a search shows (50), with room
#: for copies of one file and for a side's own ranking. A few long documents that match throughout
#: can fill all the chunks of one round ("debian" in a folder holding the Debian manuals in three
#: formats: 7 documents of the 22 holding the word); each further round leaves the documents found out
KEYWORD_CANDIDATE_DOCUMENTS = 100
KEYWORD_FURTHER_ROUNDS = 3


@dataclass
class Passage:
    start_line: int
    end_line: int


@dataclass
class RankedDocument:
    doc_id: str
    fused_score: float = 0.0
    keyword_rank: int | None = None
    keyword_score: float | None = None
    keyword_passage: Passage | None = None
    #: the document's further matching chunks, best first (up to FURTHER_PASSAGES): another passage to
    #: show when the best reads as a table of contents
    further_keyword_passages: list[Passage] = field(default_factory=list)
    vector_rank: int | None = None
    #: cosine similarity of the query and the document's best chunk
    vector_score: float | None = None
    vector_passage: Passage | None = None
    #: which vectors `vector_score` compares: "refined" (the model's) or "first_pass"
    vector_kind: str = REFINED
    #: whether a passage of it holds every word of the query (`whole_matches.py`); None: not looked up
    holds_every_word: bool | None = None

    @property
    def passage(self) -> Passage:
        """The passage to show: the keyword hit's when there is one (it holds the words), else the vector's."""
        passage = self.keyword_passage or self.vector_passage
        assert passage is not None
        return passage


@dataclass
class Ranking:
    documents: list[RankedDocument]
    #: "hybrid", "keyword" or "vector": what actually ranked
    mode: str
    reason: str
    building: bool = False
    query_vector: np.ndarray | None = None
    vector_index: VectorIndex | None = None


def keyword_candidates(
    keyword: KeywordIndex, query: str, chunks: int, allowed_doc_ids: list[str] | None
) -> list[ChunkHit]:
    """The keyword side's best `chunks` chunks, then while they came from fewer than
    KEYWORD_CANDIDATE_DOCUMENTS documents and a round came back full, the best `chunks` chunks of the
    other documents (at most KEYWORD_FURTHER_ROUNDS times). Every chunk a further round finds scores
    at most the lowest of the rounds before, so the hits stay in one BM25 order."""
    text_query = keyword.build_query(query)
    hits = keyword.search_query(text_query, chunks, allowed_doc_ids)
    found = list(dict.fromkeys(hit.doc_id for hit in hits))
    last = hits
    for _ in range(KEYWORD_FURTHER_ROUNDS):
        if len(last) < chunks or len(found) >= KEYWORD_CANDIDATE_DOCUMENTS:
            break
        last = keyword.search_query(text_query, chunks, allowed_doc_ids, excluded_doc_ids=found)
        hits += last
        found.extend(dict.fromkeys(hit.doc_id for hit in last))
    return hits


def keyword_documents(hits: list[ChunkHit]) -> dict[str, RankedDocument]:
    """Documents by keyword score: the best chunk's BM25, plus each further matching chunk's weighted by
    KEYWORD_FURTHER_CHUNKS to the power of its place (a long document cut into many chunks keeps the
    evidence of its other passages); the passage shown is the best chunk's."""
    documents: dict[str, RankedDocument] = {}
    seen: dict[str, int] = {}
    for hit in sorted(hits, key=lambda h: (-h.score, h.doc_id)):  # ties (copies of a file) in one order every run
        document = documents.get(hit.doc_id)
        if document is None:
            documents[hit.doc_id] = RankedDocument(
                doc_id=hit.doc_id, keyword_score=hit.score, keyword_passage=Passage(hit.start_line, hit.end_line)
            )
            seen[hit.doc_id] = 1
        else:
            if len(document.further_keyword_passages) < FURTHER_PASSAGES:
                document.further_keyword_passages.append(Passage(hit.start_line, hit.end_line))
            if KEYWORD_FURTHER_CHUNKS:
                document.keyword_score = (document.keyword_score or 0.0) + hit.score * KEYWORD_FURTHER_CHUNKS ** seen[hit.doc_id]
                seen[hit.doc_id] += 1
    ranked = sorted(documents.values(), key=lambda d: (-(d.keyword_score or 0.0), d.doc_id))
    for rank, document in enumerate(ranked, start=1):
        document.keyword_rank = rank
    return {document.doc_id: document for document in ranked}


def vector_documents(hits: list[VectorHit]) -> dict[str, tuple[int, VectorHit]]:
    documents: dict[str, tuple[int, VectorHit]] = {}
    for hit in sorted(hits, key=lambda h: (-h.score, h.doc_id)):
        if hit.doc_id not in documents:
            documents[hit.doc_id] = (len(documents) + 1, hit)
    return documents


def complete_keyword_side(engine: Engine, query: str, documents: dict[str, RankedDocument]) -> None:
    """Give each document that only the vector side's candidates hold its keyword score: its best chunk's
    BM25, from a second keyword search within those documents (`COMPLETE_KEYWORD_SIDE`).

    The fusion scores a side that did not find a document as 0. For the vector side that is the
    lowest candidate's cosine, about what such a document would score; for the keyword side it says
    "no query word", while such a document often holds several and only ranked below the first
    KEYWORD_CANDIDATE_CHUNKS chunks (a request of many words matches most documents). Its rank stays
    unknown (None). Each search reads COMPLETION_CHUNKS_PER_DOCUMENT chunks per document still
    missing; documents crowded out by others' better chunks are searched again among themselves, so
    each gets its own best chunk whatever the others are (the places of a search while the model
    refines must not depend on which documents its refined side adds), and one with no query word
    keeps 0.
    """
    if not COMPLETE_KEYWORD_SIDE:
        return
    missing = [doc_id for doc_id, document in documents.items() if document.keyword_score is None]
    while missing:
        hits = engine.keyword.search(query, COMPLETION_CHUNKS_PER_DOCUMENT * len(missing), missing)
        for doc_id, found in keyword_documents(hits).items():
            document = documents[doc_id]
            document.keyword_score, document.keyword_passage = found.keyword_score, found.keyword_passage
            document.further_keyword_passages = found.further_keyword_passages
        if len(hits) < COMPLETION_CHUNKS_PER_DOCUMENT * len(missing):
            return  # every matching chunk was read: the documents left hold no query word
        missing = [doc_id for doc_id in missing if documents[doc_id].keyword_score is None]


def complete_vector_side(index: VectorIndex, views: np.ndarray, documents: dict[str, RankedDocument]) -> None:
    """Give each document the vector side's candidates missed, and whose best chunk is closer to the query
    than the least of theirs, that chunk's cosine (`VectorIndex.best_per_document`, exact).

    The candidates are the VECTOR_CANDIDATE_CHUNKS closest chunks: one long manual can hold most of
    them, and the approximate search can miss a chunk, so a document the keyword side found first,
    closer in meaning than the manual, counted 0 on the vector side ("Earth Sciences Division": a
    slide deck of that name ranked below a 2,400-page R manual that does not hold it). A document
    farther than every candidate keeps 0, as before: the side's scale starts at its least candidate.
    """
    if not COMPLETE_VECTOR_SIDE:
        return
    reached = [document.vector_score for document in documents.values() if document.vector_score is not None]
    unreached = [
        doc_id
        for doc_id, document in documents.items()
        if document.vector_score is None and document.keyword_rank is not None and document.keyword_rank <= VECTOR_COMPLETION_DOCUMENTS
    ]
    if not reached or not unreached:
        return
    least = min(reached)
    for doc_id, hit in index.best_per_document(views, unreached).items():
        if hit.score > least:
            document = documents[doc_id]
            document.vector_score = hit.score
            document.vector_passage = Passage(hit.start_line, hit.end_line)
            document.vector_kind = REFINED


def add_vector_side(documents: dict[str, RankedDocument], vector_hits: list[VectorHit], kind: str = REFINED) -> None:
    for doc_id, (rank, hit) in vector_documents(vector_hits).items():
        document = documents.setdefault(doc_id, RankedDocument(doc_id=doc_id))
        document.vector_rank = rank
        document.vector_score = hit.score
        document.vector_passage = Passage(hit.start_line, hit.end_line)
        document.vector_kind = kind


def keyword_copy(document: RankedDocument, kind: str) -> RankedDocument:
    """The document's keyword side, to be ranked with `kind` vectors (whose weight it takes even where
    the vector side did not reach it)."""
    return RankedDocument(
        doc_id=document.doc_id,
        keyword_rank=document.keyword_rank,
        keyword_score=document.keyword_score,
        keyword_passage=document.keyword_passage,
        further_keyword_passages=document.further_keyword_passages,
        vector_kind=kind,
    )


def keyword_only(documents: dict[str, RankedDocument], reason: str, building: bool = False) -> Ranking:
    for document in documents.values():
        document.fused_score = document.keyword_score or 0.0
    return Ranking(list(documents.values()), "keyword", reason, building)


def vector_only(
    documents: dict[str, RankedDocument], reason: str, building: bool, query_vector: np.ndarray | None, index: VectorIndex | None
) -> Ranking:
    ranked = [d for d in documents.values() if d.vector_score is not None]
    parts = vector_parts(ranked)
    for document in ranked:
        document.fused_score = parts[document.doc_id]
    ranked.sort(key=lambda d: (-d.fused_score, d.doc_id))
    return Ranking(ranked, "vector", reason, building, query_vector, index)
