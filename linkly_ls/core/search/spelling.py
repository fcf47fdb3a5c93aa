"""A spelling the index knows for a query word it does not: `borowing` -> `borrowing`.

The candidates are every word one edit away (a letter left out, added, changed, or two side by side
swapped: the slips of typing), as Norvig's corrector makes them; the index's own document frequencies
judge them, and the most frequent known one is offered. Only asked for words no document holds, so a
search that finds its words never pays for it.

A candidate is judged as the English text and title fields and the path field hold it: every
document's text is in the English text field, a French or German one's too, and its headings are
lines of that text. Its French and German stems are not asked: they made fixes of collisions
(`hernia` -> `dernia`, whose German stem a German text holds), and reading some 550 neighbours of a
ten-letter word in every language took 8-16 ms a word, where one call now reads them all (2 ms).

A stem is not a word: `byrowing` reads as `byrow` and `pathli` as `path`, so a neighbour no document
writes could tie with the word meant, or beat it (`pathli` -> `path` is held 628 times, `pathlib` 32).
So the most frequent neighbours are looked for in a few passages holding their term, and the first one
a document writes is offered, as written there when only its accents differ (`bibliothque` ->
`bibliothèque`); none, when no document writes any.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator
from typing import Protocol

from tantivy import Filter, TextAnalyzerBuilder, Tokenizer

from linkly_ls.core.search.analysis import CJK_RUN, fold_accents
from linkly_ls.core.search.calibration import DocumentFrequencies, query_words
from linkly_ls.core.search.query_terms import ANALYZERS, WORD_BYTES_LIMIT

#: words shorter than this have too many neighbours one edit away to guess from
MIN_WORD_CHARS = 4
#: words longer than this are names, hashes or compounds, not slips
MAX_WORD_CHARS = 24
#: the passages read for a neighbour (a common stem, `respons`, is written by other words in most of
#: its passages), and for all of a word's neighbours together, the most frequent first
CHECKED_PASSAGES = 8
READ_PASSAGES = 24
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
_LETTERS = re.compile(r"[^\W\d_]+")
#: (doc_id, first line, last line) -> that passage's text with its document's title and path
PassageText = Callable[[str, int, int], str]


class HeldTerms(DocumentFrequencies, Protocol):
    def passages_holding(self, field: str, term: str, limit: int) -> list[tuple[str, int, int]]: ...


def suggestion(index: HeldTerms, word: str, text_of: PassageText) -> str | None:
    """The word one edit from `word` that the most passages hold, of those a document writes, if any."""
    lowered = word.lower()
    if not MIN_WORD_CHARS <= len(lowered) <= MAX_WORD_CHARS or not lowered.isalpha():
        return None
    held = sorted((item for item in _frequencies(index, _one_edit(lowered)) if item[1]), key=lambda item: -item[1])
    budget = READ_PASSAGES
    for candidate, _, field, term in held:
        for doc_id, first, last in index.passages_holding(field, term, min(CHECKED_PASSAGES, budget)):
            budget -= 1
            written = written_form(candidate, text_of(doc_id, first, last))
            if written is not None:
                return written
        if budget <= 0:
            break
    return None


def written_form(candidate: str, text: str) -> str | None:
    """`candidate` as `text` writes it (in lower case): the same letters, or, for a candidate without
    accents, the same letters with accents; a plural in -s whose singular it writes (`websockets`, where
    the text says `WebSocket`) is taken as written."""
    words = {found.lower() for found in _LETTERS.findall(text)}
    if candidate in words or (candidate.endswith("s") and candidate[:-1] in words):
        return candidate
    if candidate.isascii():
        return next((found for found in sorted(words) if fold_accents(found) == candidate), None)
    return None


def _frequencies(index: DocumentFrequencies, candidates: list[str]) -> Iterator[tuple[str, int, str, str]]:
    """Each candidate with the most passages a field of `_ENGLISH_FIELDS` or the path field holds it in, and
    that field and term; read one by one when the reading of them all does not give one term each (CJK)."""
    joined = " ".join(candidates)
    stems, plain = _ENGLISH_STEMS.analyze(joined), ANALYZERS["lk_plain"].analyze(joined)
    if CJK_RUN.search(joined) or not len(stems) == len(plain) == len(candidates):
        for candidate in candidates:
            yield _most_held(index, candidate, query_words(candidate))
        return
    for candidate, stem, word in zip(candidates, stems, plain):
        yield _most_held(index, candidate, [("path", word), *((field, stem) for field in _ENGLISH_FIELDS)])


def _most_held(index: DocumentFrequencies, candidate: str, readings: list[tuple[str, str]]) -> tuple[str, int, str, str]:
    frequency, field, term = max(((index.doc_freq(field, term), field, term) for field, term in readings), default=(0, "", ""))
    return candidate, frequency, field, term


def _one_edit(word: str) -> list[str]:
    letters = string.ascii_lowercase + "".join(sorted({char for char in word if char not in string.ascii_lowercase}))
    splits = [(word[:cut], word[cut:]) for cut in range(len(word) + 1)]
    deletes = [left + right[1:] for left, right in splits if right]
    swaps = [left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1]
    changes = [left + letter + right[1:] for left, right in splits if right for letter in letters if letter != right[0]]
    inserts = [left + letter + right for left, right in splits for letter in letters]
    return list(dict.fromkeys(candidate for candidate in deletes + swaps + changes + inserts if candidate != word))
