"""The documents closest in meaning to a document, or to one of its sections.

With vectors, the source's chunk vectors (those of the section when a line is
given) are averaged into one query vector and the nearest chunks of other
documents rank them, each by its best chunk. Documents without vectors, and
every document when the source has none, are ranked by keyword evidence: a
query of the source's key terms (title, headings and frequent words of the
section). Documents the source already links to, and copies of it, are left
out. Each result gives a reason: the key terms both share, else its cosine.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from linkly_ls.core.embedding.settings import ENGLISH_ONLY_MODELS
from linkly_ls.core.links.headings import flatten
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.search.analysis import BARE_MARKER, extract_keywords, mostly_outside_latin
from linkly_ls.core.search.relevance import RelevanceScorer
from linkly_ls.core.search.same_work import WorkGroups, same_work
from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.store.records import WorkFacts

if TYPE_CHECKING:
    from linkly_ls.core.engine import Engine

#: key terms of the source that make the keyword query
QUERY_TERMS = 12
#: nearest chunks read per result wanted (several chunks of one document count once)
CHUNKS_PER_RESULT = 12
#: lines either side of `line` when no section of the outline holds it
AROUND_LINE = 30
#: results the candidates are gathered for whatever `limit` asks below it, so that a smaller limit gives the
#: first results of a larger one (keyword candidates are scored again, and fewer gave another order)
CANDIDATE_RESULTS = 20
#: the most chunks read for candidates on either side, however many the source and its links hold
MAX_CANDIDATE_CHUNKS = 20_000


@dataclass
class RelatedDocument:
    doc_id: str
    score: float
    relevance: float
    start_line: int
    end_line: int
    reason: str
    shared_terms: list[str] = field(default_factory=list)
    cosine: float | None = None
    #: the other files of its work (`same_work`), shown with it rather than as results of their own
    also_as: list[WorkFacts] = field(default_factory=list)


@dataclass
class Related:
    source: DocumentRecord
    start_line: int
    end_line: int
    terms: list[str]
    documents: list[RelatedDocument]
    mode: str
    mode_reason: str
    excluded_links: int


def section_range(record: DocumentRecord, line: int | None) -> tuple[int, int]:
    """The lines `related` reads: the innermost section holding `line`, else lines around it, else all."""
    total = max(record.total_lines, 1)
    if line is None:
        return 1, total
    line = min(max(line, 1), total)
    holding = [node for node in flatten(record.outline) if node.start_line <= line <= node.end_line]
    if holding:
        node = max(holding, key=lambda node: node.start_line)
        return node.start_line, node.end_line
    return max(1, line - AROUND_LINE), min(total, line + AROUND_LINE)


def find_related(
    engine: Engine, record: DocumentRecord, line: int | None, limit: int, allowed: list[str] | None
) -> Related:
    wanted = max(limit, CANDIDATE_RESULTS)
    start, end = section_range(record, line)
    lines = engine.catalog.lines(record.doc_id)
    section = lines[start - 1 : end]
    if record.text_missing_reason or not any(text.strip() and not BARE_MARKER.fullmatch(text) for text in section):
        reason = record.text_missing_reason or "no text"
        return Related(record, start, end, [], [], "none", f"the document has no text to relate ({reason})", 0)
    headings = [node.title for node in flatten(record.outline) if start <= node.start_line <= end]
    terms = extract_keywords(record.title if line is None else "", section, headings, limit=QUERY_TERMS)
    if not terms:
        terms = extract_keywords(record.title, section, headings, limit=QUERY_TERMS)
    linked = LinkResolver(engine.catalog).linked_documents(record) - {record.doc_id}  # its links within itself
    excluded = linked | {record.doc_id} | _copies(engine, record)
    allowed_set = set(allowed) if allowed is not None else None
    scores: dict[str, RelatedDocument] = {}
    mode = "keyword"
    reason = "the model has not computed this document's vectors yet (first-pass ones are not used here); ranked by shared key terms"
    embedder, index, why = engine.vectors.search_index()
    query_vector = None
    if index is not None and embedder is not None and embedder.model_id in ENGLISH_ONLY_MODELS and mostly_outside_latin("\n".join(section)):
        # a Chinese or Russian section read by an English model lands near anything: its key terms decide
        index, why = None, "the section is not in the Latin script and the embedding model reads English only"
    if index is not None:
        import numpy as np  # loaded with the vectors, not with every open index

        chunks = [(hit, vector) for hit, vector in index.chunk_vectors(record.doc_id) if hit.start_line <= end and hit.end_line >= start]
        if chunks:
            query_vector = np.mean(np.vstack([vector for _, vector in chunks]), axis=0)
            query_vector /= float(np.linalg.norm(query_vector)) or 1.0
            mode, reason = "vector", f"closest chunks by meaning (model {embedder.model_id if embedder else '?'})"
    else:
        reason = f"{why}; ranked by shared key terms"
    if query_vector is not None:
        nearest = _read_until(
            lambda count: index.search(query_vector, count, allowed), wanted * CHUNKS_PER_RESULT + len(excluded) * 4 + 20,
            wanted, excluded,
        )
        for hit in nearest:
            if hit.doc_id not in excluded and hit.doc_id not in scores:
                semantic = RelevanceScorer.semantic(hit.score)
                scores[hit.doc_id] = RelatedDocument(
                    hit.doc_id, hit.score, round(semantic, 4), hit.start_line, hit.end_line, "", cosine=round(hit.score, 4)
                )
    query = " ".join(terms)
    keyword_hits = (
        _read_until(lambda count: engine.keyword.search(query, count, allowed), (wanted + len(excluded)) * 8, wanted, excluded)
        if terms else []
    )
    with_vectors = index.documents_with_vectors([hit.doc_id for hit in keyword_hits]) if query_vector is not None else set()
    scorer = RelevanceScorer(" ".join(terms))
    seen_keyword: set[str] = set()
    for hit in keyword_hits:
        doc_id = hit.doc_id
        if doc_id in excluded or doc_id in seen_keyword or (allowed_set is not None and doc_id not in allowed_set):
            continue
        seen_keyword.add(doc_id)
        if doc_id in scores or doc_id in with_vectors:
            continue  # vectors judged it (too far to rank, when it is not in `scores`)
        passage = engine.catalog.line_range(doc_id, hit.start_line, hit.end_line - hit.start_line + 1)
        lexical = scorer.lexical(passage, "")
        scores[doc_id] = RelatedDocument(doc_id, lexical * 0.8, round(lexical * 0.8, 4), hit.start_line, hit.end_line, "")
    ordered = sorted(scores.values(), key=lambda item: (-item.relevance, -item.score))
    ranked = _distinct_works(engine, excluded, ordered, limit)
    _explain(engine, ranked, terms)
    return Related(record, start, end, terms, ranked, mode, reason, len(linked))


def _distinct_works(engine: Engine, excluded: set[str], ordered: list[RelatedDocument], limit: int) -> list[RelatedDocument]:
    """The first `limit` of `ordered` that are distinct works, each with its other files in `also_as`; none
    the work of an `excluded` document (the source's PDF beside its text is the same text, not a related
    one, and the slides of a chapter it links to are that chapter)."""
    facts = engine.catalog.work_facts([item.doc_id for item in ordered])
    left_out = list(engine.catalog.work_facts(sorted(excluded)).values())
    groups = WorkGroups(limit)
    for item in ordered:
        found = facts.get(item.doc_id)
        if found is not None and not any(same_work(other, found) for other in left_out):
            groups.add(found)
    by_id = {item.doc_id: item for item in ordered}
    ranked = []
    for lead, others in groups.works:
        by_id[lead.doc_id].also_as = others
        ranked.append(by_id[lead.doc_id])
    return ranked


def _read_until(search: Callable[[int], list[Any]], count: int, wanted: int, excluded: set[str]) -> list[Any]:
    """`search(count)`'s chunk hits, read four times as many at a time until they come from `wanted` documents
    outside `excluded` (a long source's own chunks are its nearest and match its terms best), every hit is
    read, or `MAX_CANDIDATE_CHUNKS` are."""
    while True:
        hits = search(count)
        if len({hit.doc_id for hit in hits} - excluded) >= wanted or len(hits) < count or count >= MAX_CANDIDATE_CHUNKS:
            return hits
        count = min(count * 4, MAX_CANDIDATE_CHUNKS)


def _copies(engine: Engine, record: DocumentRecord) -> set[str]:
    """Other documents with the same content (a file saved twice is not related to itself)."""
    rows = engine.catalog.documents_with_hash(record.content_hash)
    return {doc_id for doc_id in rows if doc_id != record.doc_id}


def _explain(engine: Engine, ranked: list[RelatedDocument], terms: list[str]) -> None:
    """Each result's reason: the source's key terms found in its best passage or its own key terms."""
    summaries = engine.catalog.summaries([item.doc_id for item in ranked])
    matcher_terms = {term: RelevanceScorer(term) for term in terms}
    for item in ranked:
        summary = summaries.get(item.doc_id)
        passage = engine.catalog.line_range(item.doc_id, item.start_line, item.end_line - item.start_line + 1)
        own = " ".join(summary.keywords) if summary else ""
        title = summary.title if summary else ""
        item.shared_terms = [term for term, scorer in matcher_terms.items() if scorer.lexical(passage + [own], title) > 0][:5]
        if item.shared_terms:
            item.reason = "shared terms: " + ", ".join(item.shared_terms)
        elif item.cosine is not None:
            item.reason = f"close in meaning (cosine {item.cosine:.2f})"
        else:
            item.reason = "keyword match"
