"""`relevance`: one number in 0-1 that means the same thing for every query.

Rank-fusion scores only order documents within one query; an assistant needs to
know whether the best hit is any good at all. So relevance is computed from
evidence about the document's best passage, never from its rank:

- lexical coverage: the share of the query's content words (stemmed, stopwords
  removed), weighted by rarity, that occur in the passage or the title;
- semantic similarity: the cosine of the query and the best chunk's vector,
  mapped linearly from COSINE_UNRELATED (0) to COSINE_STRONG (1). For the bundled
  MiniLM, unrelated text scores about 0-0.15 and a passage that answers the
  question 0.5-0.8.

Hybrid mode averages the two; keyword mode has only coverage. Reading (hybrid):
>= 0.6 the passage clearly matches; 0.3-0.6 related; < 0.3 weak, and search then
sets `miss` and gives guidance (keyword mode: < 0.2, see search.WEAK_RELEVANCE).
On the IR collections, top hits of on-topic queries score 0.4-0.8 and top hits
of another collection's queries 0.02-0.15.

The cosine bounds are calibrated for the bundled MiniLM. Other models spread
their cosines differently (some score unrelated text at 0.6 or more), so with a
configured model relevance keeps its order but its thresholds are less exact.
"""

from __future__ import annotations

import math

from linkly_ls.core.search.analysis import cjk_query_terms, has_cjk
from linkly_ls.core.search.keyword import ANALYZERS, english_query_terms

COSINE_UNRELATED = 0.15
COSINE_STRONG = 0.65
#: share of a hybrid relevance that comes from the cosine
SEMANTIC_WEIGHT = 0.5


class RelevanceScorer:
    def __init__(self, query: str, document_frequency=None, documents: int = 0) -> None:
        """`document_frequency(field, term)`: in how many chunks the keyword index's `field` holds `term`
        (the rarity weights; without it every term weighs the same). Chinese and Japanese text counts by
        its character pairs, as the keyword index reads it (`cjk`), not by runs of characters: a run of
        the query ("虚拟主机") is found inside a longer run of the passage."""
        analyzer = ANALYZERS["lk_en"]
        words = [term for term in dict.fromkeys(english_query_terms(query)) if not has_cjk(term)]
        self.cjk_terms = list(dict.fromkeys(cjk_query_terms(query)))
        self.terms = words + self.cjk_terms
        self.weights = {term: 1.0 for term in self.terms}
        if document_frequency is not None and documents:
            for term in self.terms:
                frequency = document_frequency("cjk" if term in self.cjk_terms else "body", term)
                self.weights[term] = math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))
        self._analyzer = analyzer

    def lexical(self, lines: list[str], title: str) -> float:
        """Rarity-weighted share of the query's content words found in the passage or title."""
        if not self.terms:
            return 0.0
        text = title + "\n" + "\n".join(lines)
        found = set(self._analyzer.analyze(text))
        found.update(term for term in self.cjk_terms if term in text)
        total = sum(self.weights.values()) or 1.0
        return sum(weight for term, weight in self.weights.items() if term in found) / total

    @staticmethod
    def semantic(cosine: float) -> float:
        return min(1.0, max(0.0, (cosine - COSINE_UNRELATED) / (COSINE_STRONG - COSINE_UNRELATED)))

    @staticmethod
    def combine(lexical: float, semantic: float | None) -> float:
        if semantic is None:
            return lexical
        return (1 - SEMANTIC_WEIGHT) * lexical + SEMANTIC_WEIGHT * semantic
