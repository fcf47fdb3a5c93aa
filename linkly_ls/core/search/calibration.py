"""The last step of a search: relevance that reads the way the list reads.

`relevance.py` scores each hit from the evidence of its best passage (the query's
words found there, the cosine of its closest chunk), independently of its rank, so
that a number means the same thing for every query. The ranking, though, fuses
other signals (BM25 over every chunk, vector ranks), and the two can disagree: a
list in rank order could read 0.72, 1.00, 1.00. A person or an agent reads a
higher number further down as a bug. Two rules, applied after ranking whatever
the fusion, make the numbers agree with the order:

1. Monotone by construction. The first hit shows the best evidence of the list:
   whether the list holds a match at all, which is what `miss` reads (the first,
   hence best, relevance below the mode's threshold), so a list's miss is what it
   was before calibration. Below it, the evidence of the other hits, in rank
   order, is replaced by its isotonic (non-increasing) least-squares fit, capped
   by the first: pool-adjacent-violators merges each run of hits that rises down
   the list into its mean. A list that already falls is unchanged; 0.72, 1.00,
   1.00 reads 1.00, 1.00, 1.00 and 0.53, 0.59, 0.43 reads 0.59, 0.59, 0.43; a
   pooled run keeps the mean of its evidence. Measured on ADI (keyword mode, top
   10 of every query, relevant = labelled relevant): hits shown >= 0.6 are
   relevant 54 % of the time (46 % with the raw evidence), 0.3-0.6 39 % (38 %),
   below 0.3 12 % (14 %): the bands keep their meaning, a little sharper.
2. Absent words. When no word of the query occurs in any indexed document (a
   typo, an identifier that is not there, a word too long for the index to
   hold), the keyword index's document frequencies say so for certain, and
   nothing the vectors find is a match: a random token sits close to short
   notes in embedding space. The evidence of
   every hit is then scaled into the weak band (at most ABSENT_WORDS_CEILING,
   below every mode's miss threshold), keeping the order, and the search is a miss.
   So is a search for a quoted phrase (or a lone identifier) that no document
   holds: its hits hold the words apart, which is not what was asked for.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from linkly_ls.core.search.analysis import cjk_query_terms
from linkly_ls.core.search.keyword import QUERY_READINGS
from linkly_ls.core.search.query_terms import WORD_BYTES_LIMIT, is_function_word, path_query_terms, reading_terms

#: the highest relevance of a hit when no word of the query occurs in any document
ABSENT_WORDS_CEILING = 0.15


class DocumentFrequencies(Protocol):
    def doc_freq(self, field: str, term: str) -> int: ...


def monotone(evidence: Sequence[float]) -> list[float]:
    """The non-increasing sequence closest to `evidence` in least squares (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [sum, count] of each pooled run
    for value in evidence:
        blocks.append([float(value), 1.0])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] < blocks[-1][0] / blocks[-1][1]:
            total, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += count
    fitted: list[float] = []
    for total, count in blocks:
        fitted.extend([total / count] * int(count))
    return fitted


def query_words(query: str) -> list[tuple[str, str]]:
    """(field, term) for every reading of the query the keyword index searches: English, French and
    German stems in their fields, the plain words in paths, CJK bigrams."""
    pairs: list[tuple[str, str]] = []
    for analyzer_name, fields in QUERY_READINGS.items():
        terms = dict.fromkeys(reading_terms(query, analyzer_name))
        pairs += [(field, term) for field in fields for term in terms]
    pairs += [("path", term) for term in dict.fromkeys(path_query_terms(query))]
    pairs += [("cjk", term) for term in dict.fromkeys(cjk_query_terms(query))]
    return pairs


def absent_words(index: DocumentFrequencies, query: str) -> list[str] | None:
    """The query's words when not one of them occurs in any indexed document, else None.

    A query whose only words are too long for the index (`query_terms.WORD_BYTES_LIMIT`: a hash, a run of
    base64) names those words. A query with no searchable word at all (only punctuation) is not
    judged: None.
    """
    pairs = query_words(query)
    if not pairs:
        too_long = [word for word in _WORD.findall(query) if len(word.encode()) >= WORD_BYTES_LIMIT]
        return list(dict.fromkeys(too_long)) or None
    if any(index.doc_freq(field, term) > 0 for field, term in pairs):
        return None
    words = list(dict.fromkeys(query.split()))
    return [word for word in words if not is_function_word(word)] or words


#: a word as the index's tokenizer cuts it (Tantivy's simple tokenizer: runs of letters and digits)
_WORD = re.compile(r"[^\W_]+")


def words_nowhere(index: DocumentFrequencies, query: str) -> list[str]:
    """The query's words (not its function words, not CJK) that occur in no indexed document, when others
    do: `borowing` of "rust ownership borowing", a misspelling the other words' matches would hide."""
    words = [word for word in dict.fromkeys(_WORD.findall(query)) if not is_function_word(word) and not cjk_query_terms(word)]
    if len(words) < 2:
        return []
    return [word for word in words if absent_words(index, word) is not None]


def calibrate(evidence: Sequence[float], no_match: bool, depth: int | None = None) -> list[float]:
    """Relevance of the hits in rank order, from their evidence: non-increasing down the list.

    With `depth`, the first `depth` hits are calibrated among themselves alone, and the later ones
    below them without moving them: a hit reads the same number whether the list asked for stops
    at `depth` or goes on (pooling with a later hit that rose would change it)."""
    scaled = [value * ABSENT_WORDS_CEILING for value in evidence] if no_match else list(evidence)
    if not scaled:
        return []
    head, tail = (scaled, []) if depth is None else (scaled[:depth], scaled[depth:])
    best = max(head)
    fitted = [best] + [min(best, value) for value in monotone(head[1:])]
    fitted += [min(fitted[-1], value) for value in monotone(tail)]
    return [min(1.0, max(0.0, value)) for value in fitted]
