"""Documents with a passage that holds every word of the query, first in a hybrid or keyword ranking.

The fusion weighs the two sides by scores scaled within each query's candidates: the vector side's
best candidate gets a part near 1 however far it is from the query in absolute terms. For a query of
names or a rare phrase (`Larkspur Lane`, `José Ñúñez`) the bi-encoder has nothing to go on, and
documents near the query's other sense (a garden note on larkspur, a walk down a lane) came above
the one chat that held the address word for word, which the keyword side ranked first. BM25 alone
has the same weakness in a milder form: a passage repeating one of the words can outscore the one
holding them all. What a person types as a name or a phrase is what a keyword match is sure of.

So a document with a passage (with its title, headings and file path below its library's folder)
that holds every word of the query, in any of its readings (`KeywordIndex.passages_with_every_word`),
is moved above the documents that do not (`WHOLE_MATCHES_ABOVE`), and shown by that passage:

- "all": above every one of them; the documents moved and the others each keep their order;
- "weaker": past each of them right above it that scores lower on keywords (lifted by the vector side);
- "none": above the documents that hold no word of the query at all.

A request of many words rarely has a passage holding them all and is ranked as fused. No weight is
chosen; the setting and the modes were chosen by leave-one-collection-out over the labelled
collections and the shapes derived from them (README, *Search quality*).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from linkly_ls.core.search.ranked import Passage

if TYPE_CHECKING:
    from linkly_ls.core.search.keyword import ChunkHit, KeywordIndex
    from linkly_ls.core.search.ranked import RankedDocument

#: move documents holding every query word up in hybrid ranking
WHOLE_MATCHES_FIRST = True
#: above which documents: "all" that do not hold every word, the "weaker" on keywords, or those holding "none"
WHOLE_MATCHES_ABOVE = "all"
PLACES = ("all", "weaker", "none")
#: the rankings it applies to: "hybrid" (also while the model refines) and "keyword" (BM25 favours a
#: passage repeating one word over one holding them all); never "vector", which asks for meaning alone
WHOLE_MATCHES_MODES = ("hybrid", "keyword")


def whole_matches_first(
    keyword: KeywordIndex, query: str, ranked: list[RankedDocument], folder_terms: frozenset[str]
) -> list[RankedDocument]:
    """`ranked` (best first) with the documents holding every word of `query` in one passage moved up as
    `WHOLE_MATCHES_ABOVE` says. `folder_terms`, the path terms of the libraries' own folders (`claire` of
    `/home/claire/Legal`), are in every path below them and make no document hold a word."""
    if not WHOLE_MATCHES_FIRST:
        return ranked
    if WHOLE_MATCHES_ABOVE not in PLACES:
        raise ValueError(f"whole_matches.WHOLE_MATCHES_ABOVE is {WHOLE_MATCHES_ABOVE!r}, not one of {PLACES}")
    start = 0
    if WHOLE_MATCHES_ABOVE == "none":
        start = next((place for place, document in enumerate(ranked) if not document.keyword_score), len(ranked))
    candidates = [document.doc_id for document in ranked[start:] if document.keyword_score]
    holding = keyword.passages_with_every_word(query, candidates, folder_terms) if candidates else {}
    for document in ranked[start:]:
        document.holds_every_word = document.doc_id in holding
        if document.doc_id in holding:
            _show_whole_match(document, holding[document.doc_id])
    if not holding:
        return ranked
    if WHOLE_MATCHES_ABOVE == "weaker":
        return _above_weaker(ranked, holding)
    moved = [document for document in ranked[start:] if document.doc_id in holding]
    rest = [document for document in ranked[start:] if document.doc_id not in holding]
    return ranked[:start] + moved + rest


def _show_whole_match(document: RankedDocument, hit: ChunkHit) -> None:
    """The passage holding every word becomes the one the document is shown by (its best keyword passage
    before it: a title page holding one word, a preamble holding another, outscored the clause holding
    both), the former best kept as a further one."""
    passage = Passage(hit.start_line, hit.end_line)
    former = document.keyword_passage
    if former == passage:
        return
    others = [kept for kept in document.further_keyword_passages if kept != passage]
    document.keyword_passage = passage
    document.further_keyword_passages = ([former] if former is not None else []) + others


def _above_weaker(ranked: list[RankedDocument], holding: dict[str, ChunkHit]) -> list[RankedDocument]:
    """Each document of `holding`, best first, moved up past the documents right above it that do not
    hold every word and score lower on keywords; it stops below the first that does or scores higher."""
    result = list(ranked)
    for place, document in enumerate(result):
        if document.doc_id not in holding:
            continue
        score = document.keyword_score or 0.0
        while place > 0 and result[place - 1].doc_id not in holding and (result[place - 1].keyword_score or 0.0) < score:
            result[place - 1], result[place] = result[place], result[place - 1]
            place -= 1
    return result
