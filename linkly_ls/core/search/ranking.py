"""Rank documents for a query: keyword (BM25) and vector (cosine) rankings, fused.

Both sides rank chunks; a document takes the score of its best chunk. The two
document rankings are fused by a convex combination of normalised scores:

    fused = 0.5 * bm25 / max(bm25) + 0.5 * (cos - min(cos)) / (max(cos) - min(cos))

over the candidates of the query (a side where a document is missing adds 0).
Measured on the IR collections (bench/ir_eval.py --fusion), with this one
weight it beat reciprocal-rank fusion (RRF, k = 60) on all three: nDCG@10 of
1.11 / 1.18 / 1.16 x bm25s on ADI / Cranfield / MEDLINE, against RRF's 0.99 /
1.14 / 1.15 (weights 0.4-0.6 are all within 0.02). RRF throws away how far
ahead the best hits are, which matters when one side is confident and the
other is not. RRF stays available (`fusion="rrf"`) for comparison.

On the vector side a query of several sentences is compared by each of its
views, the whole query and each sentence, a chunk by its best one
(`query_views.py`). `FUSION = "z"` fuses standard scores over a pool of both
sides' best documents instead (`zscore_fusion.py`).

Once fused, the best documents that the vector side found move their scores towards those of
their close neighbours in meaning among them (`smoothing.py`: documents alike tend to be relevant
together), when every document has the model's vectors.

A document that has no vectors yet (embedding still running) counts its keyword
part on the vector side too, so it is neither favoured nor buried while the
library is half embedded: hybrid over what has vectors, keyword over the rest.
While the model refines, every document is placed by its first-pass vector
(`first_pass_side.py`) and the refined ones are reordered among their places by
the model's (`mixed_state.py`).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from linkly_ls.core.embedding.settings import TextEmbedder
from linkly_ls.core.engine import Engine
from linkly_ls.core.search import feedback, first_pass_side, mixed_state, query_views, smoothing, zscore_fusion
from linkly_ls.core.search.first_pass_side import FIRST_PASS, REFINED, FirstPassSide, vector_parts
from linkly_ls.core.search.keyword import ChunkHit
from linkly_ls.core.search.vectors import VectorHit, VectorIndex

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger("linkly_ls.search")
RRF_K = 60
KEYWORD_CANDIDATE_CHUNKS = 400
VECTOR_CANDIDATE_CHUNKS = 300
#: a document's keyword score adds its n-th best further chunk's BM25 times this to the power n (0: best chunk only)
KEYWORD_FURTHER_CHUNKS = 0.0
#: weight of the keyword side in the convex combination
CONVEX_KEYWORD_WEIGHT = 0.5
#: a query of at least LONG_QUERY_SENTENCES sentences (0: no such rule) gives the keyword side
#: LONG_QUERY_KEYWORD_WEIGHT: the small bi-encoder, trained on short queries, reads a paragraph-long
#: request as a blur of its topics even with each sentence as a view, while BM25 counts each term the
#: request repeats. Chosen by leave-one-collection-out over 16 collections of several shapes (README,
#: "Search quality"); LONG_QUERY_WORDS (more than N words) is the same rule by length, not chosen.
LONG_QUERY_SENTENCES = 3
LONG_QUERY_WORDS = 0
LONG_QUERY_KEYWORD_WEIGHT = 0.7
#: score the documents found only by the vector side on the keyword side too (`_complete_keyword_side`)
COMPLETE_KEYWORD_SIDE = True
COMPLETION_CHUNKS_PER_DOCUMENT = 20
#: "convex" (default), "z" (standard scores over a pool, zscore_fusion.py) or "rrf"
FUSION = "convex"
MODES = ("auto", "keyword", "vector", "hybrid")
#: query embeddings kept for repeated queries (an assistant retrying with a filter, an editor asking again)
QUERY_VECTORS_KEPT = 256

_query_vectors: OrderedDict[tuple[str, str, str], np.ndarray] = OrderedDict()
_query_vectors_lock = threading.Lock()


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
    vector_rank: int | None = None
    #: cosine similarity of the query and the document's best chunk
    vector_score: float | None = None
    vector_passage: Passage | None = None
    #: which vectors `vector_score` compares: "refined" (the model's) or "first_pass"
    vector_kind: str = REFINED

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


def keyword_documents(hits: list[ChunkHit]) -> dict[str, RankedDocument]:
    """Documents by keyword score: the best chunk's BM25, plus each further matching chunk's weighted by
    KEYWORD_FURTHER_CHUNKS to the power of its place (a long document cut into many chunks keeps the
    evidence of its other passages); the passage shown is the best chunk's."""
    documents: dict[str, RankedDocument] = {}
    seen: dict[str, int] = {}
    for hit in sorted(hits, key=lambda h: -h.score):
        document = documents.get(hit.doc_id)
        if document is None:
            documents[hit.doc_id] = RankedDocument(
                doc_id=hit.doc_id, keyword_score=hit.score, keyword_passage=Passage(hit.start_line, hit.end_line)
            )
            seen[hit.doc_id] = 1
        elif KEYWORD_FURTHER_CHUNKS:
            document.keyword_score = (document.keyword_score or 0.0) + hit.score * KEYWORD_FURTHER_CHUNKS ** seen[hit.doc_id]
            seen[hit.doc_id] += 1
    ranked = sorted(documents.values(), key=lambda d: -(d.keyword_score or 0.0))
    for rank, document in enumerate(ranked, start=1):
        document.keyword_rank = rank
    return {document.doc_id: document for document in ranked}


def vector_documents(hits: list[VectorHit]) -> dict[str, tuple[int, VectorHit]]:
    documents: dict[str, tuple[int, VectorHit]] = {}
    for hit in sorted(hits, key=lambda h: -h.score):
        if hit.doc_id not in documents:
            documents[hit.doc_id] = (len(documents) + 1, hit)
    return documents


def embed_query(embedder: TextEmbedder, query: str) -> np.ndarray:
    """The query's vector, from a small cache of recent queries (embedding one costs about 10 ms)."""
    return _cached_query_vectors(embedder, [query], lambda texts: [embedder.embed_query(texts[0])])[0]


def embed_queries(embedder: TextEmbedder, texts: list[str]) -> np.ndarray:
    """`embed_query` of several texts: those not in the cache embedded in one model call."""
    import numpy as np  # loaded with the vectors, not with every open index

    return np.vstack(_cached_query_vectors(embedder, texts, embedder.embed_queries))


def _cached_query_vectors(
    embedder: TextEmbedder, texts: list[str], embed_missing: Callable[[list[str]], Sequence[np.ndarray]]
) -> list[np.ndarray]:
    """Each text's vector: from the recent-queries cache (least recently used dropped first), the
    others computed by one `embed_missing` call and kept. Kept per model and per graph of the model
    (`OnnxEmbedder.graph`: the bundled model reads queries with the package's graph until its rewrite
    is written); the graph is read before embedding, as it only ever turns final."""
    import numpy as np  # loaded with the vectors, not with every open index

    graph = getattr(embedder, "graph", "")
    found: dict[str, np.ndarray] = {}
    with _query_vectors_lock:
        for text in texts:
            key = (embedder.model_id, graph, text)
            vector = _query_vectors.get(key)
            if vector is not None:
                _query_vectors.move_to_end(key)
                found[text] = vector
    missing = [text for text in dict.fromkeys(texts) if text not in found]
    if missing:
        vectors = [np.asarray(vector, dtype=np.float32) for vector in embed_missing(missing)]
        with _query_vectors_lock:
            for text, vector in zip(missing, vectors, strict=True):
                vector.flags.writeable = False
                found[text] = _query_vectors[(embedder.model_id, graph, text)] = vector
            while len(_query_vectors) > QUERY_VECTORS_KEPT:
                _query_vectors.popitem(last=False)
    return [found[text] for text in texts]


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
    """
    if mode not in MODES:
        raise ValueError(f"unknown search mode {mode!r}")
    keyword_hits = engine.keyword.search(query, keyword_chunks, allowed_doc_ids)
    documents = keyword_documents(keyword_hits)
    if mode == "keyword":
        return _keyword_only(_keyword_feedback(engine, query, documents, keyword_chunks, allowed_doc_ids), "keyword mode requested")
    sync = engine.vectors
    embedder, index, why = sync.search_index()
    if embedder is None or index is None:
        embedder = index = None
    first = first_pass_side.first_pass_side(sync, index)
    if index is None and first is None:
        documents = _keyword_feedback(engine, query, documents, keyword_chunks, allowed_doc_ids)
        return _keyword_only(documents, why + "; keyword search only", sync.building(None))
    building = sync.building(index)
    query_vector = embed_query(embedder, query) if embedder is not None else None
    views = None
    vector_hits = []
    if index is not None and query_vector is not None:
        views = query_views.view_vectors(query, query_vector, lambda sentences: embed_queries(embedder, sentences))
        vector_hits = index.search(views, vector_chunks, allowed_doc_ids)
    if first is not None and index is not None and query_vector is not None and views is not None:
        refining = _Refining(engine, index, first, views, _first_pass_query_vector(first, query, embedder, query_vector))
        if mode == "vector":
            ranked = refining.vector_only(vector_hits, vector_chunks, allowed_doc_ids)
            reason = f"vector mode requested (model {embedder.model_id}, first-pass vectors where it has not run yet)"
            return Ranking(ranked, "vector", reason, building, query_vector, index)
        ranked = refining.ranked(query, documents, vector_hits, vector_chunks, allowed_doc_ids, fusion)
        reason = f"keyword + vectors (model {embedder.model_id}){_coverage_note(sync.coverage(), True)}"
        return Ranking(ranked, "hybrid", reason, building, query_vector, index)
    if index is None or query_vector is None:
        first_hits = _add_first_pass_side(documents, first, query, vector_chunks, allowed_doc_ids, embedder, query_vector)
        if mode != "vector":
            _complete_keyword_side(engine, query, documents)
        return _first_pass_only(engine, first, documents, mode, building, fusion, keyword_weight_for(query), first_hits)
    _add_vector_side(documents, vector_hits)
    if mode == "vector":
        if feedback.ROCCHIO_DOCUMENTS:
            ranked = sorted((d for d in documents.values() if d.vector_rank), key=lambda d: d.vector_rank or 0)
            vector_hits = _vector_feedback(index, query_vector, ranked, vector_chunks, allowed_doc_ids)
            documents = {}
            _add_vector_side(documents, vector_hits)
        ranked = sorted((d for d in documents.values() if d.vector_rank), key=lambda d: d.vector_rank or 0)
        for document in ranked:
            document.fused_score = document.vector_score or 0.0
        return Ranking(ranked, "vector", f"vector mode requested (model {embedder.model_id})", building, query_vector, index)
    _complete_keyword_side(engine, query, documents)
    ranked = _fused(engine, index, documents, fusion, keyword_weight_for(query), None, views)
    if feedback.RM3_DOCUMENTS or feedback.ROCCHIO_DOCUMENTS:
        if feedback.RM3_DOCUMENTS:
            keyword_hits = _rm3_round(engine, query, ranked, keyword_chunks, allowed_doc_ids)
        if feedback.ROCCHIO_DOCUMENTS:
            vector_hits = _vector_feedback(index, query_vector, ranked, vector_chunks, allowed_doc_ids)
        documents = keyword_documents(keyword_hits)
        _add_vector_side(documents, vector_hits)
        _complete_keyword_side(engine, query, documents)
        ranked = _fused(engine, index, documents, fusion, keyword_weight_for(query), None, views)
    if smoothing.SMOOTHING_DOCUMENTS:
        ranked = smoothing.smoothed(ranked, vector_hits, index)
    reason = f"keyword + vectors (model {embedder.model_id}){_coverage_note(sync.coverage())}"
    return Ranking(ranked, "hybrid", reason, building, query_vector, index)


def _complete_keyword_side(engine: Engine, query: str, documents: dict[str, RankedDocument]) -> None:
    """Give each document that only the vector side's candidates hold its keyword score: its best chunk's
    BM25, from a second keyword search within those documents (`COMPLETE_KEYWORD_SIDE`).

    The fusion scores a side that did not find a document as 0. For the vector side that is the
    lowest candidate's cosine, about what such a document would score; for the keyword side it says
    "no query word", while such a document often holds several and only ranked below the first
    KEYWORD_CANDIDATE_CHUNKS chunks (a request of many words matches most documents). Its rank stays
    unknown (None). A document whose best chunk is not among COMPLETION_CHUNKS_PER_DOCUMENT times as
    many chunks as there are such documents (the others hold that many better chunks) keeps 0.
    """
    if not COMPLETE_KEYWORD_SIDE:
        return
    missing = [doc_id for doc_id, document in documents.items() if document.keyword_score is None]
    if not missing:
        return
    hits = engine.keyword.search(query, COMPLETION_CHUNKS_PER_DOCUMENT * len(missing), missing)
    for doc_id, found in keyword_documents(hits).items():
        document = documents[doc_id]
        document.keyword_score, document.keyword_passage = found.keyword_score, found.keyword_passage


def _add_vector_side(documents: dict[str, RankedDocument], vector_hits: list[VectorHit], kind: str = REFINED) -> None:
    for doc_id, (rank, hit) in vector_documents(vector_hits).items():
        document = documents.setdefault(doc_id, RankedDocument(doc_id=doc_id))
        document.vector_rank = rank
        document.vector_score = hit.score
        document.vector_passage = Passage(hit.start_line, hit.end_line)
        document.vector_kind = kind


def _add_first_pass_side(
    documents: dict[str, RankedDocument],
    first: FirstPassSide | None,
    query: str,
    limit: int,
    allowed: list[str] | None,
    embedder: TextEmbedder | None,
    query_vector: np.ndarray | None,
) -> list[VectorHit]:
    if first is None:
        return []
    hits = first.hits(_first_pass_query_vector(first, query, embedder, query_vector), limit, allowed)
    _add_vector_side(documents, hits, FIRST_PASS)
    return hits


def _first_pass_query_vector(
    first: FirstPassSide, query: str, embedder: TextEmbedder | None, query_vector: np.ndarray | None
) -> np.ndarray:
    """The query as first-pass vectors read it. `embedder`, `query_vector`: the refined side's model and
    its vector of the query (None: nothing is refined yet), reused when that model is the table's source."""
    model_vector = None
    if first.reads_with_model:
        if embedder is first.model and query_vector is not None:
            model_vector = query_vector
        else:
            try:
                model_vector = embed_query(first.model, query)
            except Exception as error:  # noqa: BLE001 - the table's reading alone still ranks
                log.warning("the model could not read the query for first-pass vectors: %s", error)
    return first.query_vector(query, model_vector)


@dataclass
class _Refining:
    """A search while the model refines: every candidate placed by its first-pass vectors, the refined
    ones reordered among their places by the model's (`mixed_state.py`)."""

    engine: Engine
    index: VectorIndex
    first: FirstPassSide
    views: np.ndarray
    first_vector: np.ndarray

    def ranked(
        self,
        query: str,
        keyword_side: dict[str, RankedDocument],
        vector_hits: list[VectorHit],
        limit: int,
        allowed: list[str] | None,
        fusion: str | None,
    ) -> list[RankedDocument]:
        first_hits = self.first.hits(self.first_vector, limit, allowed)
        candidates = dict(keyword_side)
        for hit in [*vector_hits, *first_hits]:
            candidates.setdefault(hit.doc_id, RankedDocument(doc_id=hit.doc_id))
        _complete_keyword_side(self.engine, query, candidates)
        found = {hit.doc_id for hit in vector_hits}
        refined = found | self.index.documents_with_vectors([doc_id for doc_id in candidates if doc_id not in found])
        first_pass = self.first.documents_with_vectors(list(candidates))
        keyword_top = max((document.keyword_score or 0.0 for document in candidates.values()), default=0.0)
        rank = partial(self._side, candidates, fusion, keyword_weight_for(query), keyword_top)
        if refined & first_pass or not refined:
            # a refined document without first-pass vectors (changed, then refined before the first pass
            # caught up) is placed by its keywords and reordered with the others
            placing = rank(list(candidates), first_hits, FIRST_PASS, first_pass)
            return mixed_state.slotted(placing, rank([d for d in candidates if d in refined], vector_hits, REFINED, refined))
        # no refined candidate has first-pass vectors (a document new to a fully refined library, or one refined
        # by an earlier version): the model's vectors place every document, first-pass ones reorder the rest
        placing = rank(list(candidates), vector_hits, REFINED, refined)
        unrefined = [doc_id for doc_id in candidates if doc_id in first_pass and doc_id not in refined]
        return mixed_state.slotted(placing, rank(unrefined, first_hits, FIRST_PASS, first_pass))

    def vector_only(self, vector_hits: list[VectorHit], limit: int, allowed: list[str] | None) -> list[RankedDocument]:
        """Vector mode: each document by its refined vectors when it has them, else by its first-pass
        ones, each kind min-max scaled among its own candidates (no keywords to place them by)."""
        first_hits = self.first.hits(self.first_vector, limit, allowed)
        refined = self.index.documents_with_vectors(list({hit.doc_id for hit in first_hits}))
        documents: dict[str, RankedDocument] = {}
        _add_vector_side(documents, vector_hits)
        unrefined = [hit for hit in first_hits if hit.doc_id not in refined and hit.doc_id not in documents]
        _add_vector_side(documents, unrefined, FIRST_PASS)
        return _vector_only(documents, "", False, None, None).documents

    def _side(
        self,
        candidates: dict[str, RankedDocument],
        fusion: str | None,
        keyword_weight: float,
        keyword_top: float,
        doc_ids: list[str],
        hits: list[VectorHit],
        kind: str,
        having: set[str],
    ) -> list[RankedDocument]:
        """`doc_ids` ranked by their keywords (over the best of all candidates) and one kind of vector,
        as a library with only that kind ranks them: a document the vector search did not reach scores
        0 there, one without such vectors (not in `having`) counts its keywords instead; smoothed over
        that kind."""
        documents = {doc_id: _keyword_copy(candidates[doc_id], kind) for doc_id in doc_ids}
        _add_vector_side(documents, [hit for hit in hits if hit.doc_id in documents], kind)
        if kind == FIRST_PASS:
            ranked = _fused(self.engine, None, documents, fusion, keyword_weight, self.first, None, keyword_top, having)
            index = self.first.index
        else:
            ranked = _fused(self.engine, self.index, documents, fusion, keyword_weight, None, self.views, keyword_top, having)
            index = self.index
        return smoothing.smoothed(ranked, hits, index) if smoothing.SMOOTHING_DOCUMENTS else ranked


def _keyword_copy(document: RankedDocument, kind: str) -> RankedDocument:
    """The document's keyword side, to be ranked with `kind` vectors (whose weight it takes even where
    the vector side did not reach it)."""
    return RankedDocument(
        doc_id=document.doc_id,
        keyword_rank=document.keyword_rank,
        keyword_score=document.keyword_score,
        keyword_passage=document.keyword_passage,
        vector_kind=kind,
    )


def _first_pass_only(
    engine: Engine,
    first: FirstPassSide,
    documents: dict[str, RankedDocument],
    mode: str,
    building: bool,
    fusion: str | None,
    keyword_weight: float,
    first_hits: list[VectorHit],
) -> Ranking:
    """Nothing is refined yet: the first-pass vectors are the whole vector side, and the best documents'
    scores are smoothed over them as over refined vectors (`smoothing.py`). While some documents are
    refined and others not, `_Refining` ranks."""
    reason = f"first-pass vectors ({first.embedder.model_id}; the model has not refined any yet)"
    for document in documents.values():
        document.vector_kind = FIRST_PASS
    if mode == "vector":
        return _vector_only(documents, "vector mode requested, " + reason, building, None, None)
    ranked = _fused(engine, None, documents, fusion, keyword_weight, first)
    if smoothing.SMOOTHING_DOCUMENTS:
        ranked = smoothing.smoothed(ranked, first_hits, first.index)
    return Ranking(ranked, "hybrid", "keyword + " + reason, building)


def _vector_only(
    documents: dict[str, RankedDocument], reason: str, building: bool, query_vector: np.ndarray | None, index: VectorIndex | None
) -> Ranking:
    ranked = [d for d in documents.values() if d.vector_score is not None]
    parts = vector_parts(ranked)
    for document in ranked:
        document.fused_score = parts[document.doc_id]
    ranked.sort(key=lambda d: -d.fused_score)
    return Ranking(ranked, "vector", reason, building, query_vector, index)


def keyword_weight_for(query: str) -> float:
    """The keyword side's weight in the convex fusion for this query."""
    if LONG_QUERY_WORDS and len(query.split()) > LONG_QUERY_WORDS:
        return LONG_QUERY_KEYWORD_WEIGHT
    if LONG_QUERY_SENTENCES and len(query_views.sentences(query)) >= LONG_QUERY_SENTENCES:
        return LONG_QUERY_KEYWORD_WEIGHT
    return CONVEX_KEYWORD_WEIGHT


def _fused(
    engine: Engine,
    index: VectorIndex | None,
    documents: dict[str, RankedDocument],
    fusion: str | None,
    keyword_weight: float,
    first: FirstPassSide | None = None,
    views: np.ndarray | None = None,
    keyword_top: float | None = None,
    having_vectors: set[str] | None = None,
) -> list[RankedDocument]:
    """`documents` fused, best first. `having_vectors`: which of them have vectors of the kind ranked, when
    the caller knows (else looked up)."""
    unreached = [doc_id for doc_id, document in documents.items() if document.vector_rank is None]
    if having_vectors is None:
        without_vectors = _without_vectors(engine, index, unreached, first)
    else:
        without_vectors = set(unreached) - having_vectors
    if (fusion or FUSION) == "rrf":
        _fuse_rrf(documents.values(), without_vectors)
    elif (fusion or FUSION) == "z" and index is not None and views is not None and first is None:
        _fuse_z(index, views, documents, without_vectors, keyword_weight, keyword_top)
    else:
        _fuse_convex(documents.values(), without_vectors, keyword_weight, keyword_top)
    return sorted(documents.values(), key=lambda d: -d.fused_score)


def _fuse_z(
    index: VectorIndex,
    views: np.ndarray,
    documents: dict[str, RankedDocument],
    without_vectors: set[str],
    keyword_weight: float,
    keyword_top: float | None = None,
) -> None:
    """Standard scores over the pool (zscore_fusion.py); the rest keep their convex order, below it."""
    _fuse_convex(documents.values(), without_vectors, keyword_weight, keyword_top)

    def exact(doc_ids: list[str]) -> dict[str, float]:
        return {doc_id: hit.score for doc_id, hit in index.best_per_document(views, doc_ids).items()}

    pool = zscore_fusion.fuse(documents.values(), without_vectors, exact)
    floor = min((documents[doc_id].fused_score for doc_id in pool), default=0.0) - 2.0
    for doc_id, document in documents.items():
        if doc_id not in pool:
            document.fused_score += floor


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


def _keyword_only(documents: dict[str, RankedDocument], reason: str, building: bool = False) -> Ranking:
    for document in documents.values():
        document.fused_score = document.keyword_score or 0.0
    return Ranking(list(documents.values()), "keyword", reason, building)


def _without_vectors(engine: Engine, index: VectorIndex | None, doc_ids: list[str], first: FirstPassSide | None = None) -> set[str]:
    """Those of `doc_ids` that have no current vectors of either kind (not embedded yet)."""
    if not doc_ids:
        return set()
    missing = set(doc_ids) - (index.documents_with_vectors(doc_ids) if index is not None else set())
    if first is not None and missing:
        missing -= first.documents_with_vectors(list(missing))
    return missing


def _fuse_rrf(documents, without_vectors: set[str]) -> None:
    for document in documents:
        score = 0.0
        if document.keyword_rank is not None:
            score += 1.0 / (RRF_K + document.keyword_rank)
            if document.doc_id in without_vectors:
                score += 1.0 / (RRF_K + document.keyword_rank)
        if document.vector_rank is not None:
            score += 1.0 / (RRF_K + document.vector_rank)
        document.fused_score = score


def _fuse_convex(documents, without_vectors: set[str], keyword_weight: float, keyword_top: float | None = None) -> None:
    """alpha * BM25 / max BM25 + (1 - alpha) * min-max-scaled cosine, alpha = `keyword_weight` for a document
    ranked by its refined vector, `first_pass_keyword_weight` for one ranked by its first-pass vector."""
    documents = list(documents)
    keyword_top = keyword_top or max((d.keyword_score or 0.0 for d in documents), default=0.0) or 1.0
    scaled = vector_parts(documents)
    first_pass_weight = first_pass_keyword_weight(keyword_weight)
    for document in documents:
        keyword_part = (document.keyword_score or 0.0) / keyword_top
        if document.vector_score is not None:
            vector_part = scaled[document.doc_id]
        else:
            vector_part = keyword_part if document.doc_id in without_vectors else 0.0
        weight = first_pass_weight if document.vector_kind == FIRST_PASS else keyword_weight
        document.fused_score = weight * keyword_part + (1 - weight) * vector_part


def first_pass_keyword_weight(keyword_weight: float) -> float:
    """The keyword side's weight for a document ranked by its first-pass vector, for a query whose
    refined documents give it `keyword_weight`: first-pass vectors keep the same fraction of the vector
    side's share, so a paragraph-long request, which leans on its keywords (LONG_QUERY_KEYWORD_WEIGHT),
    leans on them more where only first-pass vectors answer it too."""
    kept = (1 - first_pass_side.FIRST_PASS_KEYWORD_WEIGHT) / (1 - CONVEX_KEYWORD_WEIGHT)
    return 1 - kept * (1 - keyword_weight)


def _coverage_note(coverage: dict[str, float], first_pass: bool = False) -> str:
    if not coverage:
        return ""
    share = min(coverage.values())
    if share >= 1.0:
        return ""
    if first_pass:
        return f"; the model has not refined every document yet (least covered library: {share:.0%}), first-pass vectors place them"
    return f"; some documents have no vectors yet (least covered library: {share:.0%}), those are ranked by keywords"


def best_cosines(ranking: Ranking, doc_ids: list[str]) -> dict[str, tuple[float, Passage]]:
    """The best chunk cosine of each document (exact), for relevance and explain."""
    if ranking.vector_index is None or ranking.query_vector is None or not doc_ids:
        return {}
    best = ranking.vector_index.best_per_document(ranking.query_vector, doc_ids)
    return {doc_id: (hit.score, Passage(hit.start_line, hit.end_line)) for doc_id, hit in best.items()}
