"""`search`: find the documents that best answer a query, with filters and a snippet each.

Ranking (keyword, vector, fused) is in `ranking.py` and `fusion.py`, the meaning of `relevance`
in `relevance.py`, and `calibration.py` makes it non-increasing down the list (and
weak when no word of the query occurs anywhere). This module dedupes by content and
builds the hits (with their page and section, `provenance.py`); the filters are applied
by `search_filters.py`, and `search_guidance.py` decides when a search is a miss and what
to try instead.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import cache, partial
from pathlib import Path
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.extract import doc_type_for
from linkly_ls.core.store.records import name_key, title_key
from linkly_ls.core.provenance import Provenance, provenance_of
from linkly_ls.core.search.calibration import absent_words, calibrate, query_words
from linkly_ls.core.search.exclusions import all_excluded_guidance, excluded_notes, split_exclusions, without_excluded
from linkly_ls.core.search.query_terms import MAX_QUERY_WORDS, bounded_query, common_words_only, readings_for
from linkly_ls.core.search.ranked import Passage, RankedDocument
from linkly_ls.core.search.phrases import (
    MAX_CANDIDATE_CHUNKS,
    PhraseMatches,
    PhraseSpan,
    documents_holding,
    lone_identifier,
    phrase_pattern,
    split_phrases,
)
from linkly_ls.core.search.ranking import best_cosines, library_folder_terms, rank_documents
from linkly_ls.core.search.relevance import RelevanceScorer
from linkly_ls.core.tools.schema import RANKED_MAX_OFFSET
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.search.snippets import QueryMatcher, best_snippet, reads_as_contents
from linkly_ls.core.search.same_work import distinct_works
from linkly_ls.core.store.records import DocumentSummary
from linkly_ls.core.tools.search_filters import allowed_documents, blame_the_filters
from linkly_ls.core.tools.search_guidance import (
    OTHER_WORDS, WEAK_RELEVANCE, add_guidance, empty_index_result, lead_guidance, say_ocr_pending,
)
from linkly_ls.core.tools.search_listing import listing, lists_everything
from linkly_ls.core.tools.search_spelling import misspelt_exclusions, misspelt_notes
from linkly_ls.core.tools.search_results import OtherFile, SearchHit, SearchResult

__all__ = ["OTHER_WORDS", "WEAK_RELEVANCE", "SearchHit", "SearchResult", "allowed_documents", "search"]

#: hits whose relevance is calibrated together (`calibration.py`) whatever `limit` asks below it, so that a
#: hit reads the same relevance, and a search the same `miss`, at `limit` 1 as at the default 20
CALIBRATION_DEPTH = 20
#: the candidates `time_sort` puts in date order: its newest (oldest) strong match among the best ones by
#: relevance, not among the `limit` best alone, where equally good but newer documents were left out
TIME_SORT_POOL = 200
#: most words of a query read as a file name written with spaces (`RFC 2616` for `rfc2616.txt`)
NAME_WORDS = 4


def search(engine: Engine, **arguments: Any) -> SearchResult:
    """The `search` tool. `mode` ranks by keywords, vectors or both; `auto` follows `engine.search_mode`
    (itself "auto": hybrid when vectors exist)."""
    params = validate("search", arguments)
    query: str = unicodedata.normalize("NFC", params["query"].strip())  # an accent typed as a combining mark too
    limit: int = params["limit"]
    offset: int = params["offset"]
    mode: str = params["mode"] if params["mode"] != "auto" else engine.search_mode
    if engine.catalog.count() == 0:
        return empty_index_result(engine, query)
    allowed = allowed_documents(engine, params)
    if lists_everything(query):
        listed = listing(engine, allowed, limit, params["time_sort"], offset)
        if allowed == []:
            listed.miss = True
            blame_the_filters(engine, listed, params)
        return listed
    if offset > RANKED_MAX_OFFSET:
        raise ArgumentError(
            f"`offset` must be an integer from 0 to {RANKED_MAX_OFFSET} for a ranked search, got {offset} (only the `*` "
            "listing pages further)"
        )
    excluded = split_exclusions(query)
    if excluded.words and not query_words(excluded.text):
        raise ArgumentError(
            f"The query excludes {', '.join(repr(word) for word in excluded.words)} but has no word to search by: add one, "
            "or list documents with `*` and filters."
        )
    quoted = split_phrases(excluded.text)
    words, distinct_words = bounded_query(quoted.text or excluded.text)
    named = _named(engine, words)
    if allowed is not None:
        named &= set(allowed)
    exact = quoted.phrases or ([words] if lone_identifier(words) else [])
    phrases = documents_holding(engine.catalog, engine.keyword, exact, allowed)
    focus = [phrase_pattern(phrase) for phrase in exact]  # a long line's snippet shows the phrase itself
    # a lone identifier that names a file (`sources.list`) keeps that file too
    holding = sorted(set(phrases.passages) | (set() if quoted.phrases or not phrases.passages else named))
    ranking = rank_documents(engine, words, holding or allowed, mode=mode)
    left_out = 0
    if excluded.words:
        folders = library_folder_terms(engine)
        ranking.documents, left_out = without_excluded(engine.keyword, ranking.documents, excluded.words, folders)
    by_date = params["time_sort"] != "default"
    paged = by_date or offset > 0  # relevance is calibrated over the whole pool, then the page is cut from it
    pool = max(offset + limit, TIME_SORT_POOL if by_date else CALIBRATION_DEPTH)
    works = distinct_works(engine.catalog, _named_first(named, ranking.documents), pool)
    distinct = [document for document, _ in works]
    records = engine.catalog.summaries([document.doc_id for document in distinct])
    picked = [(document, records[document.doc_id]) for document in distinct if document.doc_id in records]
    cosines = best_cosines(ranking, [document.doc_id for document, _ in picked])
    searcher = engine.keyword.index.searcher()
    scorer = RelevanceScorer(words, searcher.doc_freq, searcher.num_docs)
    live = engine.keyword.live_frequencies(searcher)
    missing_words = absent_words(live, words)
    no_word = missing_words is None and not query_words(words)  # symbols, emoji or punctuation alone
    # a phrase (or lone identifier) no document holds: the hits hold its words apart, no match
    unheld = exact if phrases.searched and not holding and not (named and not quoted.phrases) else []
    no_match = missing_words is not None or no_word or bool(unheld)
    evidence = [  # the shown hits' own is read again with their snippets; the others' passages alone are read
        _evidence(
            partial(_passage_lines, engine, record.doc_id), document, record, cosines.get(document.doc_id), scorer,
            phrases.passages.get(document.doc_id),
        )[3]
        for document, record in (picked if paged else picked[limit:])
    ]
    relevance: dict[str, float] = {}
    if paged:
        relevance = dict(zip((record.doc_id for _, record in picked), calibrate(evidence, no_match, CALIBRATION_DEPTH)))
    if by_date:  # the newest (oldest) of every strong match among the pool, not of the `limit` best
        picked = _by_date(picked, relevance, params["time_sort"] == "newest", WEAK_RELEVANCE[ranking.mode])
    more = len(picked) > offset + limit or (len(works) >= pool and len(ranking.documents) > pool)
    ranked = len(picked)
    picked = picked[offset:]
    matcher = QueryMatcher(words)
    places = provenance_of(engine.catalog, [document.doc_id for document, _ in picked[:limit]])
    results = [
        _make_hit(
            engine, document, record, cosines.get(document.doc_id), scorer, matcher, params["explain"],
            places[document.doc_id], phrases.passages.get(document.doc_id), focus,
        )
        for document, record in picked[:limit]
    ]
    other_files = {document.doc_id: others for document, others in works}
    for hit in results:
        hit.also_as = [OtherFile(other.doc_id, other.path, other.doc_type, other.library) for other in other_files[hit.doc_id]]
    if paged:
        _set_relevance(results, relevance)
    else:
        _calibrate_relevance(results, no_match, evidence)
    result = SearchResult(
        query=query, results=results, mode=ranking.mode, mode_reason=ranking.reason, indexing=ranking.building,
        absent_words=missing_words,
        notes=_phrase_notes(phrases) + misspelt_notes(engine, live, words, missing_words) + _cut_notes(distinct_words)
        + excluded_notes(excluded.words, left_out) + misspelt_exclusions(engine, live, excluded.words),
    )
    if more:
        result.next_offset = offset + limit
    if offset and not results:
        result.notes.append(
            f"The ranking ends at {ranked} result(s), before offset {offset}: this page is past its end "
            "(`offset` 0 starts it again)."
        )
    add_guidance(result, params, unheld, quoted=bool(quoted.phrases), best=max(relevance.values(), default=0.0) if paged else None)
    if left_out and not ranking.documents:
        lead_guidance(result, all_excluded_guidance(excluded.words, left_out), instead_of_other_words=True)
    if ranking.mode == "vector" and not ranking.documents:  # nearest neighbours exist wherever vectors do
        lead_guidance(
            result,
            "No document searched has a vector yet, so `mode=vector` finds nothing: `linkly index --wait` (or a "
            "running `linkly serve` or `watch`) computes them; meanwhile search with `mode=auto` or `keyword`.",
            instead_of_other_words=True,
        )
    if no_word and not exact:
        result.miss = True
        nearby = "the results are only near in meaning" if results else "nothing is near it in meaning either"
        lead_guidance(
            result,
            f"The query {query!r} holds no word the index can search (only symbols, emoji or punctuation): "
            f"{nearby}. Describe it in words, or `grep` a document for the characters.",
        )
    if result.miss and not exact and (common := common_words_only(words)):
        lead_guidance(result, f"The query holds only common words ({', '.join(common)}), which most documents hold: add the words of its subject.")
    if allowed == []:
        blame_the_filters(engine, result, params)
    say_ocr_pending(engine, result, params)
    return result


def _cut_notes(distinct_words: int) -> list[str]:
    if distinct_words <= MAX_QUERY_WORDS:
        return []
    return [
        f"The query holds {distinct_words:,} different words: it was searched by its first {MAX_QUERY_WORDS:,} "
        "(the text up to the next new word); search by a passage's key words, or `grep` a document for a phrase."
    ]


def _phrase_notes(phrases: PhraseMatches) -> list[str]:
    """What the answer must say about quoted phrases it could not search exactly."""
    notes = [
        f'"{phrase}" has only common words, which the index leaves out: it was searched as plain words.'
        for phrase in phrases.unsearchable
    ]
    notes += [
        f'The words of "{phrase}" are in more than {MAX_CANDIDATE_CHUNKS:,} passages; the documents of the '
        f"{MAX_CANDIDATE_CHUNKS:,} best by keywords were read, so a document holding it may be missing."
        for phrase in phrases.truncated
    ]
    return notes


def _by_date(
    picked: list[tuple[RankedDocument, DocumentSummary]], relevance: dict[str, float], newest: bool, weak: float
) -> list[tuple[RankedDocument, DocumentSummary]]:
    """The candidates newest or oldest first (in rank order where their times are equal); weak ones are left
    out when any matches well: the earliest *matching* document is meant, not a passage near in meaning
    that happens to be old."""
    strong = [pair for pair in picked if relevance[pair[1].doc_id] >= weak]
    return sorted(strong or picked, key=lambda pair: pair[1].modified_at, reverse=newest)


def _named(engine: Engine, query: str) -> set[str]:
    """The documents whose title or file name the query is (`rfc2616`, `notes.pdf`); a name of a few words
    may be typed with spaces where the file has none, a hyphen or an underscore (`RFC 2616`, `lunch and
    learn`)."""
    keys = {title_key(query)}
    if doc_type_for(Path(query)) is not None:
        keys.add(name_key(query))
    words = title_key(query).split()
    if 1 < len(words) <= NAME_WORDS:
        keys |= {joint.join(words) for joint in ("", "-", "_")}
    return {row[0] for key in keys if key for row in engine.catalog.documents_named(key)}


def _named_first(named: set[str], documents: list[RankedDocument]) -> list[RankedDocument]:
    """The candidates the query names first (`_named`). A person who types a name means that document,
    whose words may be rarer in it than in those citing it."""
    if not named:
        return documents
    return [document for document in documents if document.doc_id in named] + [
        document for document in documents if document.doc_id not in named
    ]


def _make_hit(
    engine: Engine,
    document: RankedDocument,
    record: DocumentSummary,
    cosine: tuple[float, Passage] | None,
    scorer: RelevanceScorer,
    matcher: QueryMatcher,
    explain: bool,
    provenance: Provenance,
    phrase: PhraseSpan | None,
    focus: list[re.Pattern[str]],
) -> SearchHit:
    lines = engine.catalog.lines(record.doc_id)
    passage, lexical, semantic, relevance = _evidence(
        lambda start, end: lines[start - 1 : end], document, record, cosine, scorer, phrase
    )
    shown = (phrase.first_match_line, phrase.last_match_line) if phrase else (passage.start_line, passage.end_line)
    snippet = best_snippet(
        matcher.in_language(record.language), lines, *shown, provenance.marker_lines(lines), focus if phrase else ()
    )
    details = None
    if explain:
        details = {
            "keyword_rank": document.keyword_rank,
            "keyword_score": _rounded(document.keyword_score),
            "vector_rank": document.vector_rank,
            "vector_score": _rounded(cosine[0] if cosine else document.vector_score),
            "fused_score": _rounded(document.fused_score, 6),
            "holds_every_word": document.holds_every_word,
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


def _evidence(
    read: Callable[[int, int], list[str]],
    document: RankedDocument,
    record: DocumentSummary,
    cosine: tuple[float, Passage] | None,
    scorer: RelevanceScorer,
    phrase: PhraseSpan | None,
) -> tuple[Passage, float, float | None, float]:
    """(passage shown, its share of the query's words, the closeness in meaning, relevance before calibration)
    of a hit; `read(first, last)` gives the document's lines."""
    read = cache(read)  # the best keyword passage is read to tell a table of contents, then scored
    # the file's name is evidence as its title is, and so is its folder's (a Zotero item key, `storage/ZC8E3NQA/`,
    # found its paper at relevance 0.00, a miss)
    title = f"{record.title}\n{Path(record.path).name}\n{Path(record.path).parent.name}"
    lexical_of = partial(scorer.lexical, title=title, readings=readings_for(record.language))  # as its snippet reads it
    keyword_passage = None if phrase is not None else _past_the_contents(read, document, lexical_of)
    if phrase is not None:
        passage = Passage(phrase.start_line, phrase.end_line)
    else:
        passage = _shown_passage(document, cosine[1] if cosine else None, keyword_passage)
    lexical = lexical_of(read(passage.start_line, passage.end_line))
    if keyword_passage is not None and passage is not keyword_passage and phrase is None:
        # the closest chunk in meaning, unless the keyword hit holds more of the query's words (a list
        # whose snippets miss the words the keyword side found them by reads as noise), or unless it is
        # a table of contents and the keyword hit the section itself
        keyword_lines = read(keyword_passage.start_line, keyword_passage.end_line)
        found = lexical_of(keyword_lines)
        contents = reads_as_contents(read(passage.start_line, passage.end_line)) and not reads_as_contents(keyword_lines)
        if found > lexical or contents:
            passage, lexical = keyword_passage, found
    semantic = scorer.semantic(cosine[0]) if cosine else None
    return passage, lexical, semantic, scorer.combine(lexical, semantic)


def _past_the_contents(
    read: Callable[[int, int], list[str]], document: RankedDocument, lexical_of: Callable[[list[str]], float]
) -> Passage | None:
    """The document's best keyword passage, or, when that is a table of contents (the section titles the
    query names, gathered on one page), its next passage that is not one and holds as many of the query's
    words: the section itself, which the agent would otherwise look up once more."""
    best = document.keyword_passage
    if best is None or not document.further_keyword_passages:
        return best
    lines = read(best.start_line, best.end_line)
    if not reads_as_contents(lines):
        return best
    wanted = lexical_of(lines)
    for further in document.further_keyword_passages:
        lines = read(further.start_line, further.end_line)
        if not reads_as_contents(lines) and lexical_of(lines) >= wanted:
            return further
    return best


def _passage_lines(engine: Engine, doc_id: str, first: int, last: int) -> list[str]:
    return engine.catalog.line_range(doc_id, first, last - first + 1)


def _calibrate_relevance(hits: list[SearchHit], no_match: bool, beyond: list[float]) -> None:
    """Replace each hit's evidence by its calibrated relevance, in rank order (see calibration.py), calibrated
    together with the evidence of the hits `beyond` the list, over the first CALIBRATION_DEPTH of them: a
    hit reads the same at any `limit`."""
    evidence = [hit.relevance for hit in hits] + beyond
    for hit, relevance in zip(hits, calibrate(evidence, no_match, CALIBRATION_DEPTH)):
        if hit.explain is not None:
            hit.explain["evidence"] = hit.relevance
        hit.relevance = round(relevance, 4)


def _set_relevance(hits: list[SearchHit], relevance: dict[str, float]) -> None:
    """Each hit's calibrated relevance, calibrated in rank order before the hits were put in date order."""
    for hit in hits:
        if hit.explain is not None:
            hit.explain["evidence"] = hit.relevance
        hit.relevance = round(relevance[hit.doc_id], 4)


def _shown_passage(
    document: RankedDocument, best_vector_passage: Passage | None, keyword_passage: Passage | None
) -> Passage:
    """The keyword hit's passage when keywords ranked the document at least as well, else the closest chunk."""
    vector_passage = best_vector_passage or document.vector_passage
    keyword_first = document.keyword_rank is not None and (
        document.vector_rank is None or document.keyword_rank <= document.vector_rank
    )
    if keyword_passage is not None and (keyword_first or vector_passage is None):
        return keyword_passage
    return vector_passage or document.passage


def _rounded(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)
