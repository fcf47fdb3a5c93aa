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
import re

from linkly_ls.core.search.analysis import SNOWBALL_ENGLISH_STOPWORDS, cjk_query_terms, for_keywords, has_cjk, joined_cjk_lines
from linkly_ls.core.search.query_terms import ANALYZERS, EVERY_READING, english_query_terms

COSINE_UNRELATED = 0.15
COSINE_STRONG = 0.65
#: share of a hybrid relevance that comes from the cosine
SEMANTIC_WEIGHT = 0.5


ENGLISH_FUNCTION_WORDS = frozenset(SNOWBALL_ENGLISH_STOPWORDS)


class RelevanceScorer:
    def __init__(self, query: str, document_frequency=None, documents: int = 0) -> None:
        """`document_frequency(field, term)`: in how many chunks the keyword index's `field` holds `term`
        (the rarity weights; without it every term weighs the same). Chinese and Japanese text counts by
        its character pairs, as the keyword index reads it (`cjk`), not by runs of characters: a run of
        the query ("虚拟主机") is found inside a longer run of the passage. The query is read in English,
        French and German, as the keyword side reads it, and a passage is covered by the reading that
        finds most of it (`créerons` finds `créer` in a French passage); each word weighs in every
        reading what its English reading weighs (the field every document has)."""
        self.cjk_terms = list(dict.fromkeys(cjk_query_terms(query)))
        english = [term for term in dict.fromkeys(english_query_terms(query)) if not has_cjk(term)]
        self.terms = english + self.cjk_terms
        weights = {term: 1.0 for term in self.terms}
        if document_frequency is not None and documents:
            for term in self.terms:
                frequency = document_frequency("cjk" if term in self.cjk_terms else "body", term)
                weights[term] = math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5))
        self.readings: dict[str, dict[str, float]] = {"lk_en": weights}
        # English function words are no content in the other readings either ("the" is no French stopword)
        words = [word for word in re.findall(r"\w+", query) if word.lower() not in ENGLISH_FUNCTION_WORDS and not has_cjk(word)]
        for name in ("lk_fr", "lk_de"):
            analyzer = ANALYZERS[name]
            reading: dict[str, float] = {}
            for word in words:
                own, in_english = analyzer.analyze(word), ANALYZERS["lk_en"].analyze(word)
                if own:
                    reading[own[0]] = max(reading.get(own[0], 0.0), weights.get(in_english[0], 1.0) if in_english else 1.0)
            if reading:
                self.readings[name] = reading | {term: weights[term] for term in self.cjk_terms}

    def lexical(self, lines: list[str], title: str, readings: tuple[str, ...] = EVERY_READING) -> float:
        """Rarity-weighted share of the query's content words found in the passage or title, by the one of
        `readings` that finds most: a document's own (`query_terms.readings_for`), as its snippet marks
        them, when its language is known."""
        if not self.terms:
            return 0.0
        text = for_keywords(title + "\n" + "\n".join(lines))  # as the index read it: composed, words rejoined
        joined = joined_cjk_lines(text) if self.cjk_terms else text
        cjk_found = {term for term in self.cjk_terms if term in joined}
        best = 0.0
        for name, weights in self.readings.items():
            if name not in readings:
                continue
            found = set(ANALYZERS[name].analyze(text)) | cjk_found
            total = sum(weights.values()) or 1.0
            best = max(best, sum(weight for term, weight in weights.items() if term in found) / total)
            if best >= 1.0:  # no other reading finds more
                break
        return best

    @staticmethod
    def semantic(cosine: float) -> float:
        return min(1.0, max(0.0, (cosine - COSINE_UNRELATED) / (COSINE_STRONG - COSINE_UNRELATED)))

    @staticmethod
    def combine(lexical: float, semantic: float | None) -> float:
        if semantic is None:
            return lexical
        return (1 - SEMANTIC_WEIGHT) * lexical + SEMANTIC_WEIGHT * semantic
