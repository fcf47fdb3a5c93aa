"""Rank documents for a query: keyword (BM25) and vector (cosine) rankings, fused.

Both sides rank chunks; a document takes the score of its best chunk (`ranked.py`), and the two
document rankings are fused (`fusion.py`). On the vector side a query of several sentences is
compared by each of its views, the whole query and each sentence, a chunk by its best one
(`query_views.py`).

Once fused, the best documents that the vector side found move their scores towards those of
their close neighbours in meaning among them (`smoothing.py`: documents alike tend to be relevant
together), when every document has the model's vectors. Before the model has refined every
document, first-pass vectors place the rest (`refining.py`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from linkly_ls.core.embedding.settings import ENGLISH_ONLY_MODELS
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.vector_sync import coverage_text
from linkly_ls.core.search import feedback, first_pass_side, query_views, smoothing, whole_matches
from linkly_ls.core.search.analysis import written_outside_latin
from linkly_ls.core.search.fusion import fused, keyword_weight_for
from linkly_ls.core.search.keyword import ChunkHit
from linkly_ls.core.search.query_terms import folder_path_terms
from linkly_ls.core.search.query_views import embed_query, embed_queries
from linkly_ls.core.search.ranked import (
    Passage,
    Ranking,
    RankedDocument,
    add_vector_side,
    complete_keyword_side,
    complete_vector_side,
    keyword_candidates,
    keyword_documents,
    keyword_only,
)
from linkly_ls.core.search.refining import Refining, add_first_pass_side, first_pass_only, first_pass_query_vector
from linkly_ls.core.search.vector_search import VectorHit
from linkly_ls.core.search.vectors import VectorIndex

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.embedding.settings import TextEmbedder
    from linkly_ls.core.indexing.vector_sync import VectorSync

KEYWORD_CANDIDATE_CHUNKS = 400
VECTOR_CANDIDATE_CHUNKS = 300
#: vector mode reads four times as many chunks while its candidates come from fewer documents than a
#: search shows (one long manual can hold all 300), up to VECTOR_MODE_MAX_CHUNKS
VECTOR_MODE_DOCUMENTS = 50
VECTOR_MODE_MAX_CHUNKS = 4800
MODES = ("auto", "keyword", "vector", "hybrid")


def rank_documents(
    engine: Engine,
    query: str,
    allowed_doc_ids: list[str] | None,
    mode: str = "auto",
    keyword_chunks: int = KEYWORD_CANDIDATE_CHUNKS,
    vector_chunks: int = VECTOR_CANDIDATE_CHUNKS,
    fusion: str | None = None,
) -> Ranking:
    """Documents best first. `mode`: auto (hybrid when vectors exist), keyword, vector or hybrid.

    With feedback on (`feedback.RM3_DOCUMENTS`, `feedback.ROCCHIO_DOCUMENTS`), the first round's best
    documents feed a second round of each side, which is fused again (not while the model refines).
    In a hybrid or keyword ranking the documents with a passage holding every word of the query come
    first (`whole_matches.py`).
    """
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}")
    ranking = _ranked(engine, query, allowed_doc_ids, mode, keyword_chunks, vector_chunks, fusion)
    if ranking.mode in whole_matches.WHOLE_MATCHES_MODES:
        ranking.documents = whole_matches.whole_matches_first(engine.keyword, query, ranking.documents, library_folder_terms(engine))
    return ranking


def library_folder_terms(engine: Engine) -> frozenset[str]:
    """The path terms of the libraries' own folders, in the path of every document below them."""
    return folder_path_terms([folder for library in engine.libraries() for folder in library.paths])


def _ranked(
    engine: Engine,
    query: str,
    allowed_doc_ids: list[str] | None,
    mode: str,
    keyword_chunks: int,
    vector_chunks: int,
    fusion: str | None,
) -> Ranking:
    keyword_hits = keyword_candidates(engine.keyword, query, keyword_chunks, allowed_doc_ids)
    documents = keyword_documents(keyword_hits)
    if mode == "keyword":
        return keyword_only(_keyword_feedback(engine, query, documents, keyword_chunks, allowed_doc_ids), "keyword mode requested")
    sync = engine.vectors
    embedder, index, why = sync.search_index()
    if embedder is None or index is None:
        embedder = index = None
    first = first_pass_side.first_pass_side(sync, index)
    if index is None and first is None:
        documents = _keyword_feedback(engine, query, documents, keyword_chunks, allowed_doc_ids)
        return keyword_only(documents, why + "; keyword search only", sync.building(None))
    if mode == "auto" and written_outside_latin(query) and (embedder is None or embedder.model_id in ENGLISH_ONLY_MODELS):
        documents = _keyword_feedback(engine, query, documents, keyword_chunks, allowed_doc_ids)
        why = "the query is not in the Latin script and the embedding model reads English only; keyword search only"
        return keyword_only(documents, why)  # vectors still to come would not change this answer
    building = sync.building(index)
    query_vector = embed_query(embedder, query) if embedder is not None else None
    views = None
    vector_hits = []
    if index is not None and query_vector is not None:
        views = query_views.view_vectors(query, query_vector, lambda sentences: embed_queries(embedder, sentences))
        vector_hits = index.search(views, vector_chunks, allowed_doc_ids)
        if mode == "vector":
            vector_hits = _widened(index, views, vector_hits, vector_chunks, allowed_doc_ids)
    if first is not None and index is not None and query_vector is not None and views is not None:
        refining = Refining(engine, index, first, views, first_pass_query_vector(first, query, embedder, query_vector))
        if mode == "vector":
            ranked = refining.vector_only(vector_hits, vector_chunks, allowed_doc_ids)
            reason = f"vector mode requested ({_model_named(sync, embedder)}, first-pass vectors where it has not run yet)"
            return Ranking(ranked, "vector", reason, building, query_vector, index)
        ranked = refining.ranked(query, documents, vector_hits, vector_chunks, allowed_doc_ids, fusion)
        reason = f"keyword + vectors ({_model_named(sync, embedder)}){_coverage_note(sync.coverage(), True)}"
        return Ranking(ranked, "hybrid", reason, building, query_vector, index)
    if index is None or query_vector is None:
        first_hits = add_first_pass_side(documents, first, query, vector_chunks, allowed_doc_ids, embedder, query_vector)
        if mode != "vector":
            complete_keyword_side(engine, query, documents)
        return first_pass_only(engine, first, documents, mode, building, fusion, keyword_weight_for(query), first_hits)
    add_vector_side(documents, vector_hits)
    if mode == "vector":
        if feedback.ROCCHIO_DOCUMENTS:
            ranked = sorted((d for d in documents.values() if d.vector_rank), key=lambda d: d.vector_rank or 0)
            vector_hits = _vector_feedback(index, query_vector, ranked, vector_chunks, allowed_doc_ids)
            documents = {}
            add_vector_side(documents, vector_hits)
        ranked = sorted((d for d in documents.values() if d.vector_rank), key=lambda d: d.vector_rank or 0)
        for document in ranked:
            document.fused_score = document.vector_score or 0.0
        return Ranking(ranked, "vector", f"vector mode requested ({_model_named(sync, embedder)})", building, query_vector, index)
    complete_keyword_side(engine, query, documents)
    if views is not None:
        complete_vector_side(index, views, documents)
    ranked = fused(engine, index, documents, fusion, keyword_weight_for(query), None, views)
    if feedback.RM3_DOCUMENTS or feedback.ROCCHIO_DOCUMENTS:
        if feedback.RM3_DOCUMENTS:
            keyword_hits = _rm3_round(engine, query, ranked, keyword_chunks, allowed_doc_ids)
        if feedback.ROCCHIO_DOCUMENTS:
            vector_hits = _vector_feedback(index, query_vector, ranked, vector_chunks, allowed_doc_ids)
        documents = keyword_documents(keyword_hits)
        add_vector_side(documents, vector_hits)
        complete_keyword_side(engine, query, documents)
        ranked = fused(engine, index, documents, fusion, keyword_weight_for(query), None, views)
    if smoothing.SMOOTHING_DOCUMENTS:
        ranked = smoothing.smoothed(ranked, vector_hits, index)
    reason = f"keyword + vectors ({_model_named(sync, embedder)}){_coverage_note(sync.coverage())}"
    return Ranking(ranked, "hybrid", reason, building, query_vector, index)


def _model_named(sync: VectorSync, embedder: TextEmbedder) -> str:
    """`model X`, and why it stands in for the configured model when it does (a name fastembed does
    not know, a download under way or failed): a reader of `mode_reason` learns the setting is not in force."""
    stand_in = sync.provider.stand_in_note(embedder)
    return f"model {embedder.model_id}" + (f"; {stand_in}" if stand_in else "")


def _rm3_round(
    engine: Engine, query: str, ranked: list[RankedDocument], limit: int, allowed_doc_ids: list[str] | None
) -> list[ChunkHit]:
    """The keyword side again, its query expanded by RM3 from the best documents of the first round."""
    passages = []
    for document in ranked[: feedback.RM3_DOCUMENTS]:
        passage = document.passage
        count = min(passage.end_line - passage.start_line + 1, feedback.FEEDBACK_LINES)
        text = "\n".join(engine.catalog.line_range(document.doc_id, passage.start_line, count))
        passages.append((text, document.fused_score or 0.0))
    expansion = feedback.rm3_terms(query, passages)
    return engine.keyword.search_query(engine.keyword.build_query(query, expansion), limit, allowed_doc_ids)


def _keyword_feedback(
    engine: Engine, query: str, documents: dict[str, RankedDocument], limit: int, allowed_doc_ids: list[str] | None
) -> dict[str, RankedDocument]:
    if not feedback.RM3_DOCUMENTS or not documents:
        return documents
    for document in documents.values():
        document.fused_score = document.keyword_score or 0.0
    return keyword_documents(_rm3_round(engine, query, list(documents.values()), limit, allowed_doc_ids))


def _vector_feedback(
    index: VectorIndex, query_vector: np.ndarray, ranked: list[RankedDocument], limit: int, allowed_doc_ids: list[str] | None
) -> list[VectorHit]:
    """The vector side again, the query vector moved towards the first round's best documents (Rocchio)."""
    top = [document.doc_id for document in ranked[: feedback.ROCCHIO_DOCUMENTS]]
    chunks = index.best_chunks(query_vector, top)
    moved = feedback.rocchio_vector(query_vector, [vector for _, vector in chunks.values()])
    return index.search(moved, limit, allowed_doc_ids)


def _widened(index: VectorIndex, views: np.ndarray, hits: list[VectorHit], chunks: int, allowed: list[str] | None) -> list[VectorHit]:
    """Vector mode's candidates, read again four times as wide while they came back full from fewer than
    VECTOR_MODE_DOCUMENTS documents: "Earth Sciences Division" found 4 documents in 300 chunks of a
    library where one manual holds 16,000 of 20,000 (hybrid has the keyword side's documents)."""
    while len({hit.doc_id for hit in hits}) < VECTOR_MODE_DOCUMENTS and len(hits) >= chunks and chunks * 4 <= VECTOR_MODE_MAX_CHUNKS:
        chunks *= 4
        hits = index.search(views, chunks, allowed)
    return hits


def _coverage_note(coverage: dict[str, float], first_pass: bool = False) -> str:
    if not coverage:
        return ""
    share = min(coverage.values())
    if share >= 1.0:
        return ""
    if first_pass:
        return f"; the model has not refined every document yet (least covered library: {coverage_text(share)}), first-pass vectors place them"
    return f"; some documents have no vectors yet (least covered library: {coverage_text(share)}), those are ranked by keywords"


def best_cosines(ranking: Ranking, doc_ids: list[str]) -> dict[str, tuple[float, Passage]]:
    """The best chunk cosine of each document (exact), for relevance and explain."""
    if ranking.vector_index is None or ranking.query_vector is None or not doc_ids:
        return {}
    best = ranking.vector_index.best_per_document(ranking.query_vector, doc_ids)
    return {doc_id: (hit.score, Passage(hit.start_line, hit.end_line)) for doc_id, hit in best.items()}
