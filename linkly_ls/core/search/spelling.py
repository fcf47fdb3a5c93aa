"""A spelling the index knows for a query word it does not: `borowing` -> `borrowing`.

The candidates are every word one edit away (a letter left out, added, changed, or two side by side
swapped: the slips of typing), as Norvig's corrector makes them; the index's own document frequencies
judge them, and the most frequent known one is offered. Only asked for words no document holds, so a
search that finds its words never pays for it.
"""

from __future__ import annotations

import string

from linkly_ls.core.search.calibration import DocumentFrequencies, query_words

#: words shorter than this have too many neighbours one edit away to guess from
MIN_WORD_CHARS = 4
#: words longer than this are names, hashes or compounds, not slips
MAX_WORD_CHARS = 24


def suggestion(index: DocumentFrequencies, word: str) -> str | None:
    """The known word one edit from `word` that the most documents hold, if any."""
    lowered = word.lower()
    if not MIN_WORD_CHARS <= len(lowered) <= MAX_WORD_CHARS or not lowered.isalpha():
        return None
    best: tuple[int, str] | None = None
    for candidate in _one_edit(lowered):
        frequency = max((index.doc_freq(field, term) for field, term in query_words(candidate)), default=0)
        if frequency and (best is None or frequency > best[0]):
            best = (frequency, candidate)
    return best[1] if best else None


def _one_edit(word: str) -> list[str]:
    letters = string.ascii_lowercase + "".join(sorted({char for char in word if char not in string.ascii_lowercase}))
    splits = [(word[:cut], word[cut:]) for cut in range(len(word) + 1)]
    deletes = [left + right[1:] for left, right in splits if right]
    swaps = [left + right[1] + right[0] + right[2:] for left, right in splits if len(right) > 1]
    changes = [left + letter + right[1:] for left, right in splits if right for letter in letters if letter != right[0]]
    inserts = [left + letter + right for left, right in splits for letter in letters]
    return list(dict.fromkeys(candidate for candidate in deletes + swaps + changes + inserts if candidate != word))
