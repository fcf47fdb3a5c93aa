"""A spelling the index knows for a query word it does not: `borowing` -> `borrowing`.

The candidates are every word one edit away (a letter left out, added, changed, or two side by side
swapped: the slips of typing), as Norvig's corrector makes them; the index's own document frequencies
judge them, and the most frequent known one is offered. Only asked for words no document holds, so a
search that finds its words never pays for it.

A candidate is judged as the English text and title fields and the path field hold it: every
document's text is in the English text field, a French or German one's too, and its headings are
lines of that text. Its French and German stems
are not asked: they made fixes of collisions (`hernia` -> `dernia`, whose German stem a German text
holds), and reading some 550 neighbours of a ten-letter word in every language took 8-16 ms a word,
where one call now reads them all (3 ms).
"""

from __future__ import annotations

import string
from collections.abc import Iterator

from tantivy import Filter, TextAnalyzerBuilder, Tokenizer

from linkly_ls.core.search.analysis import CJK_RUN
from linkly_ls.core.search.calibration import DocumentFrequencies, query_words
from linkly_ls.core.search.query_terms import ANALYZERS, WORD_BYTES_LIMIT

#: words shorter than this have too many neighbours one edit away to guess from
MIN_WORD_CHARS = 4
#: words longer than this are names, hashes or compounds, not slips
MAX_WORD_CHARS = 24
#: the English reading without its stop words, so that each neighbour of a word gives exactly one term
_ENGLISH_STEMS = (
    TextAnalyzerBuilder(Tokenizer.simple())
    .filter(Filter.remove_long(WORD_BYTES_LIMIT))
    .filter(Filter.lowercase())
    .filter(Filter.ascii_fold())
    .filter(Filter.stemmer("english"))
    .build()
)
_ENGLISH_FIELDS = ("body", "title")


def suggestion(index: DocumentFrequencies, word: str) -> str | None:
    """The known word one edit from `word` that the most documents hold, if any."""
    lowered = word.lower()
    if not MIN_WORD_CHARS <= len(lowered) <= MAX_WORD_CHARS or not lowered.isalpha():
        return None
    best: tuple[int, str] | None = None
    for candidate, frequency in _frequencies(index, _one_edit(lowered)):
        if frequency and (best is None or frequency > best[0]):
            best = (frequency, candidate)
    return best[1] if best else None


def _frequencies(index: DocumentFrequencies, candidates: list[str]) -> Iterator[tuple[str, int]]:
    """Each candidate with the most documents a field of `_ENGLISH_FIELDS` or the path field holds it in; read one by
    one when the reading of them all does not give one term each (CJK characters)."""
    joined = " ".join(candidates)
    stems, plain = _ENGLISH_STEMS.analyze(joined), ANALYZERS["lk_plain"].analyze(joined)
    if CJK_RUN.search(joined) or not len(stems) == len(plain) == len(candidates):
        for candidate in candidates:
            yield candidate, max((index.doc_freq(field, term) for field, term in query_words(candidate)), default=0)
        return
    for candidate, stem, word in zip(candidates, stems, plain):
        yield candidate, max(index.doc_freq("path", word), *(index.doc_freq(field, stem) for field in _ENGLISH_FIELDS))


def _one_edit(word: str) -> list[str]:
    letters = string.ascii_lowercase + "".join(sorted({char for char in word if char not in string.ascii_lowercase}))
    splits = [(word[:cut], word[cut:]) for cut in range(len(word) + 1)]
    deletes = [left + right[1:] for left, right in splits if right]
    swaps = [left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1]
    changes = [left + letter + right[1:] for left, right in splits if right for letter in letters if letter != right[0]]
    inserts = [left + letter + right for left, right in splits for letter in letters]
    return list(dict.fromkeys(candidate for candidate in deletes + swaps + changes + inserts if candidate != word))
