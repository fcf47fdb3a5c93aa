"""`search`: find the documents that best answer a query, with filters and a snippet each.

Ranking (keyword, vector, fused) is in `ranking.py` and `fusion.py`, the meaning of `relevance`
in `relevance.py`, and `calibration.py` makes it non-increasing down the list (and
weak when no word of the query occurs anywhere). This module applies the filters,
dedupes by content, builds the hits (with their page and section, `provenance.py`)
and decides when a search is a miss.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.extract import doc_type_for
from linkly_ls.core.store.records import name_key, title_key
from linkly_ls.core.tools.common import compile_path_glob, empty_index_notice, iso_utc, on_disk, parse_time, resolve_library
from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.provenance import Place, Provenance, provenance_of
from linkly_ls.core.search.calibration import absent_words, calibrate
from linkly_ls.core.search.ranked import Passage, RankedDocument
from linkly_ls.core.search.ranking import best_cosines, rank_documents
from linkly_ls.core.search.relevance import RelevanceScorer
from linkly_ls.core.tools.schema import validate
from linkly_ls.core.search.snippets import QueryMatcher, Snippet, best_snippet
from linkly_ls.core.store.records import DocumentSummary

#: below this best relevance a search is a miss. Hybrid relevance includes the cosine; measured on the
#: IR collections, 0.30 flags about 5% of on-topic queries and every off-topic one (queries of another
#: collection). Keyword-only relevance is word coverage alone, lower for long questions, hence 0.20.
WEAK_RELEVANCE = {"hybrid": 0.30, "vector": 0.30, "keyword": 0.20}
#: most characters of the query the markdown answer's heading repeats
QUERY_SHOWN_CHARS = 200
KNOWN_TYPES = ("md", "mdx", "txt", "html", "pdf", "docx", "epub", "pptx", "image")
TYPE_ALIASES = {"markdown": "md", "htm": "html", "text": "txt", "png": "image", "jpg": "image", "jpeg": "image"}


@dataclass
class SearchHit:
    doc_id: str
    title: str
    path: str
    relevance: float
    word_count: int
    total_lines: int
    has_outline: bool
    modified_at: str
    keywords: list[str]
    snippet: str
    doc_type: str
    library: str
    line: int
    start_line: int
    end_line: int
    #: "changed" or "deleted" when the file on disk is not what was indexed (`common.on_disk`)
    on_disk: str | None = None
    text_missing_reason: str | None = None
    explain: dict[str, Any] | None = None
    #: what copies share: copies on several servers show once when their answers are merged
    content_hash: str | None = None
    #: the server that answered ("local" or a remote's name), set when several servers were searched
    server: str | None = None
    place: Place = field(default_factory=Place)

    @classmethod
    def from_summary(
        cls, record: DocumentSummary, relevance: float, snippet: Snippet, start_line: int, end_line: int, **extra: Any
    ) -> SearchHit:
        """A local document's hit: its catalog facts, the shown passage and snippet, and `extra` fields."""
        return cls(
            doc_id=record.doc_id,
            title=record.title,
            path=record.path,
            relevance=relevance,
            word_count=record.word_count,
            total_lines=record.total_lines,
            has_outline=record.has_outline,
            modified_at=iso_utc(record.modified_at),
            keywords=record.keywords,
            snippet=snippet.text,
            doc_type=record.doc_type,
            library=record.library,
            line=snippet.line,
            start_line=start_line,
            end_line=end_line,
            on_disk=on_disk(record),
            text_missing_reason=record.text_missing_reason,
            content_hash=record.content_hash,
            **extra,
        )

    @property
    def page(self) -> int | None:
        return self.place.page

    @property
    def section(self) -> str | None:
        return self.place.section

    def to_json(self) -> dict[str, Any]:
        data = {
            "doc_id": self.doc_id,
            "title": self.title,
            "path": self.path,
            "relevance": self.relevance,
            "word_count": self.word_count,
            "total_lines": self.total_lines,
            "has_outline": self.has_outline,
            "modified_at": self.modified_at,
            "keywords": self.keywords,
            "snippet": self.snippet,
            "doc_type": self.doc_type,
            "library": self.library,
            "line": self.line,
            "passage": {"start_line": self.start_line, "end_line": self.end_line},
            "stale": self.on_disk is not None,
        }
        if self.on_disk:
            data["on_disk"] = self.on_disk
        self.place.add_to(data)
        if self.text_missing_reason:
            data["text_missing_reason"] = self.text_missing_reason
        if self.explain is not None:
            data["explain"] = self.explain
        if self.content_hash:
            data["content_hash"] = self.content_hash
        if self.server is not None:
            data["server"] = self.server
        return data


@dataclass
class SearchResult:
    query: str
    results: list[SearchHit]
    mode: str = "keyword"
    mode_reason: str = "no embedding model is configured; keyword search only"
    #: vectors are still being computed (or the model downloaded): results may improve
    indexing: bool = False
    miss: bool = False
    guidance: list[str] = field(default_factory=list)
    #: why nothing can match at all (an empty index), said instead of "No strong match."
    notice: str | None = None
    #: the query's words, when not one of them occurs in any indexed document
    absent_words: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "results": [hit.to_json() for hit in self.results],
            "total": len(self.results),
            "mode": self.mode,
            "mode_reason": self.mode_reason,
            "indexing": self.indexing,
            "miss": self.miss,
        }
        if self.guidance:
            data["guidance"] = self.guidance
        if self.notice:
            data["notice"] = self.notice
        return data

    def to_markdown(self) -> str:
        shown = " ".join(self.query.split())
        if len(shown) > QUERY_SHOWN_CHARS:  # a pasted page of text is searched whole, not echoed whole
            shown = shown[: QUERY_SHOWN_CHARS - 1] + f"… ({len(self.query):,} characters)"
        out = [f"## Search: {shown}", f"_{len(self.results)} result(s) · mode: {self.mode} ({self.mode_reason})_"]
        if self.indexing:
            out.append("_The index is still building (vectors are being computed); results may improve._")
        out.append("")
        for rank, hit in enumerate(self.results, start=1):
            flags = {"changed": " · **stale** (changed on disk since indexed)", "deleted": " · **stale** (deleted from disk)"}.get(
                hit.on_disk or "", ""
            )
            out.append(f"### {rank}. {hit.title}")
            out.append(
                f"- doc_id: `{hit.doc_id}` · {hit.doc_type} · relevance {hit.relevance:.2f} · "
                f"{hit.word_count} words · {hit.total_lines} lines · outline: {'yes' if hit.has_outline else 'no'}{flags}"
            )
            out.append(f"- path: {hit.path}")
            where = hit.place.label(hit.doc_type)
            out.append(
                f"- modified: {hit.modified_at} · best passage: lines {hit.start_line}-{hit.end_line}"
                + (f" ({where})" if where else "")
            )
            if hit.keywords:
                out.append(f"- keywords: {', '.join(hit.keywords)}")
            if hit.text_missing_reason:
                out.append(f"- text missing: {hit.text_missing_reason}")
            if hit.snippet:
                out.append(f"> {hit.snippet}")
            if hit.explain:
                out.append("- explain: " + " · ".join(f"{key} {'—' if value is None else value}" for key, value in hit.explain.items()))
            out.append("")
        if self.miss:
            if self.notice:
                head = f"**{self.notice}**"
            elif self.absent_words:
                head = "**No document contains these words.**"
            else:
                head = "**No strong match.**"
            out.append(head + " " + " ".join(self.guidance))
        return "\n".join(out).rstrip()


def allowed_documents(engine: Engine, params: dict[str, Any]) -> list[str] | None:
    """Doc ids that pass the filters, or None when no filter is set."""
    library = resolve_library(engine.catalog, params.get("library"))
    doc_types = [TYPE_ALIASES.get(t.lower().lstrip("."), t.lower().lstrip(".")) for t in params.get("doc_types") or []]
    for doc_type in doc_types:
        if doc_type not in KNOWN_TYPES:
            raise ArgumentError(f"`doc_types` has unknown type {doc_type!r}; known: {', '.join(KNOWN_TYPES)}")
    after = parse_time(params.get("modified_after"), "modified_after")
    before = parse_time(params.get("modified_before"), "modified_before", end_of_day=True)
    if after is not None and before is not None and after > before:
        raise ArgumentError("`modified_after` is later than `modified_before`; no document can match")
    if "md" in doc_types and "mdx" not in doc_types:
        doc_types.append("mdx")  # the contract's Markdown is `.md` and `.mdx`
    glob = compile_path_glob(params["path_glob"]) if params.get("path_glob") else None
    if library is None and not doc_types and after is None and before is None and glob is None:
        return None
    rows = engine.catalog.documents_matching(library.name if library else None, doc_types, after, before)
    # a name may be stored composed (é) or decomposed (e + ´, as macOS writes names): both read alike
    return [doc_id for doc_id, path in rows if glob is None or glob.search(unicodedata.normalize("NFC", path))]


def search(engine: Engine, **arguments: Any) -> SearchResult:
    """The `search` tool. `mode` ranks by keywords, vectors or both; `auto` follows `engine.search_mode`
    (itself "auto": hybrid when vectors exist)."""
    params = validate("search", arguments)
    query: str = params["query"].strip()
    limit: int = params["limit"]
    mode: str = params["mode"] if params["mode"] != "auto" else engine.search_mode
    if engine.catalog.count() == 0:
        return empty_index_result(engine, query)
    allowed = allowed_documents(engine, params)
    ranking = rank_documents(engine, query, allowed, mode=mode)
    distinct = _distinct_documents(engine, _named_first(engine, query, ranking.documents), limit)
    records = engine.catalog.summaries([document.doc_id for document in distinct])
    picked = [(document, records[document.doc_id]) for document in distinct if document.doc_id in records]
    cosines = best_cosines(ranking, [document.doc_id for document, _ in picked])
    searcher = engine.keyword.index.searcher()
    scorer = RelevanceScorer(query, searcher.doc_freq, searcher.num_docs)
    matcher = QueryMatcher(query)
    places = provenance_of(engine.catalog, [document.doc_id for document, _ in picked])
    results = [
        _make_hit(
            engine, document, record, cosines.get(document.doc_id), scorer, matcher, params["explain"],
            places[document.doc_id],
        )
        for document, record in picked
    ]
    missing_words = absent_words(searcher, query)
    _calibrate_relevance(results, missing_words is not None)
    if params["time_sort"] != "default":
        results.sort(key=lambda h: h.modified_at, reverse=params["time_sort"] == "newest")
    result = SearchResult(
        query=query, results=results, mode=ranking.mode, mode_reason=ranking.reason, indexing=ranking.building,
        absent_words=missing_words,
    )
    _add_guidance(result, params)
    return result


def _named_first(engine: Engine, query: str, documents: list[RankedDocument]) -> list[RankedDocument]:
    """The candidates the query names first: whose title or file name it is (`rfc2616`, `notes.pdf`). A
    person who types a name means that document, whose words may be rarer in it than in those citing it."""
    keys = {title_key(query)}
    if doc_type_for(Path(query)) is not None:
        keys.add(name_key(query))
    named = {doc_id for key in keys if key for doc_id, _, _ in engine.catalog.documents_named(key)}
    if not named:
        return documents
    return [document for document in documents if document.doc_id in named] + [
        document for document in documents if document.doc_id not in named
    ]


def _distinct_documents(engine: Engine, documents: list[RankedDocument], limit: int) -> list[RankedDocument]:
    """The first `limit` ranked documents with distinct content: copies of a file show once.

    Only ids and content hashes are read to decide (in pages, best first); full
    records, whose outlines can be large, are read for the documents shown.
    """
    picked: list[RankedDocument] = []
    seen_content: set[str] = set()
    page = limit * 4 + 50
    for start in range(0, len(documents), page):
        batch = documents[start : start + page]
        hashes = engine.catalog.content_hashes([document.doc_id for document in batch])
        for document in batch:
            content_hash = hashes.get(document.doc_id)
            if content_hash is None or content_hash in seen_content:
                continue
            seen_content.add(content_hash)
            picked.append(document)
            if len(picked) >= limit:
                return picked
    return picked


def _make_hit(
    engine: Engine,
    document: RankedDocument,
    record: DocumentSummary,
    cosine: tuple[float, Passage] | None,
    scorer: RelevanceScorer,
    matcher: QueryMatcher,
    explain: bool,
    provenance: Provenance,
) -> SearchHit:
    lines = engine.catalog.lines(record.doc_id)
    title = f"{record.title}\n{Path(record.path).name}"  # the file's name is evidence as its title is
    passage = _shown_passage(document, cosine[1] if cosine else None)
    lexical = scorer.lexical(lines[passage.start_line - 1 : passage.end_line], title)
    keyword_passage = document.keyword_passage
    if keyword_passage is not None and passage is not keyword_passage:
        # the closest chunk in meaning, unless the keyword hit holds more of the query's words: a list
        # whose snippets miss the words the keyword side found them by reads as noise
        found = scorer.lexical(lines[keyword_passage.start_line - 1 : keyword_passage.end_line], title)
        if found > lexical:
            passage, lexical = keyword_passage, found
    snippet = best_snippet(matcher, lines, passage.start_line, passage.end_line, provenance.marker_lines(lines))
    semantic = scorer.semantic(cosine[0]) if cosine else None
    relevance = scorer.combine(lexical, semantic)
    details = None
    if explain:
        details = {
            "keyword_rank": document.keyword_rank,
            "keyword_score": _rounded(document.keyword_score),
            "vector_rank": document.vector_rank,
            "vector_score": _rounded(cosine[0] if cosine else document.vector_score),
            "fused_score": _rounded(document.fused_score, 6),
            "lexical_coverage": round(lexical, 4),
            "semantic": _rounded(semantic),
        }
    return SearchHit.from_summary(
        record,
        round(relevance, 4),
        snippet,
        passage.start_line,
        passage.end_line,
        explain=details,
        place=provenance.place(snippet.line),
    )


def _calibrate_relevance(hits: list[SearchHit], words_absent: bool) -> None:
    """Replace each hit's evidence by its calibrated relevance, in rank order (see calibration.py)."""
    for hit, relevance in zip(hits, calibrate([hit.relevance for hit in hits], words_absent)):
        if hit.explain is not None:
            hit.explain["evidence"] = hit.relevance
        hit.relevance = round(relevance, 4)


def _shown_passage(document: RankedDocument, best_vector_passage: Passage | None) -> Passage:
    """The keyword hit's passage when keywords ranked the document at least as well, else the closest chunk."""
    vector_passage = best_vector_passage or document.vector_passage
    keyword_first = document.keyword_rank is not None and (
        document.vector_rank is None or document.keyword_rank <= document.vector_rank
    )
    if document.keyword_passage is not None and (keyword_first or vector_passage is None):
        return document.keyword_passage
    return vector_passage or document.passage


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def empty_index_result(engine: Engine, query: str) -> SearchResult:
    """A search of an index without documents: say why, and how to add some, rather than "no strong match"."""
    result = SearchResult(query=query, results=[], mode="keyword", mode_reason="the index holds no documents", miss=True)
    result.notice, advice = empty_index_notice([library.name for library in engine.libraries()], "search")
    result.guidance = [advice]
    return result


def _add_guidance(result: SearchResult, params: dict[str, Any]) -> None:
    strong = result.results and max(hit.relevance for hit in result.results) >= WEAK_RELEVANCE[result.mode]
    if strong and not result.absent_words:
        return
    result.miss = True
    advice = ["Try other words or synonyms (e.g. 'auth login sign-in'), or fewer words."]
    if result.absent_words:
        words = ", ".join(f"'{word}'" for word in result.absent_words)
        nearby = "; the results are only near in meaning" if result.results else ""
        advice.insert(0, f"No indexed document contains {words}{nearby}. Check the spelling: the name may not be indexed.")
    if params.get("path_glob") or params.get("library"):
        advice.append("Widen or drop `path_glob` / `library`; call `find_paths` to discover the real folder names.")
    else:
        advice.append("If the user named a folder or app, call `find_paths` to locate it, then pass its `path_glob`.")
    if params.get("modified_after") or params.get("modified_before"):
        advice.append("Widen the date window (`modified_after` / `modified_before`).")
    if params.get("doc_types"):
        advice.append("Drop the `doc_types` filter.")
    advice.append("For an exact name, number or phrase inside a known document, use `grep` on its doc_id.")
    result.guidance = advice
