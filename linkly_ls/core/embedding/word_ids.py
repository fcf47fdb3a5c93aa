"""WordPiece ids of many passages, each distinct word tokenized once.

The first pass's cost is mostly tokenization: the tokenizer normalises, splits
and builds an encoding (offsets, type ids, masks) for every word of every
passage, about 1.7 microseconds a token. Natural text repeats its words, and the
bundled model's BERT normaliser and pre-tokenizer act within whitespace-separated
words (case, accents, Chinese characters and punctuation are split or folded
there; whitespace always ends a word), so a passage's ids are its words' ids in
order. `WordIds` keeps each word's ids and asks the tokenizer only for words it
has not seen, all of them in one call. The ids are exactly the tokenizer's: the
few characters that Python splits words on and the normaliser deletes (vertical
tab, form feed, the information separators, next line) are deleted first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain, islice

#: characters `str.split()` takes for whitespace and BERT's normaliser deletes as control characters
_DELETED = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
_HAS_DELETED = re.compile(f"[{_DELETED}]")
_DELETE = str.maketrans("", "", _DELETED)
#: words kept; past it the cache starts again (about 100 bytes a word)
CACHE_WORDS = 100_000


class WordIds:
    """Token ids of passages through a cache of word -> ids. Not thread-safe: one per embedding thread,
    or the caller's lock."""

    def __init__(self, tokenizer, cache_words: int = CACHE_WORDS) -> None:
        """`tokenizer`: a `tokenizers.Tokenizer` without truncation or padding (it is given many words at once)."""
        self._tokenizer = tokenizer
        self._cache: dict[str, tuple[int, ...]] = {}
        self._cache_words = cache_words

    def ids(self, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
        """Each text's ids without special tokens, cut after `max_tokens`."""
        split = [(text.translate(_DELETE) if _HAS_DELETED.search(text) else text).split() for text in texts]
        cache = self._cache
        unseen = {word for words in split for word in words if word not in cache}
        if len(cache) + len(unseen) > self._cache_words:
            cache.clear()
            unseen = {word for words in split for word in words}
        if unseen:
            cache.update(self._tokenize_words(list(unseen)))
        return [list(islice(chain.from_iterable(map(cache.__getitem__, words)), max_tokens)) for words in split]

    def _tokenize_words(self, words: list[str]) -> dict[str, tuple[int, ...]]:
        """Each word's ids, from one encoding of the words joined by spaces: a token belongs to the word
        its first character lies in (one call instead of an encoding object a word, ten times faster)."""
        import numpy as np

        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
        encoding = self._tokenizer.encode(" ".join(words), add_special_tokens=False)
        token_starts = np.fromiter((start for start, _ in encoding.offsets), dtype=np.int64, count=len(encoding.ids))
        owners = np.searchsorted(starts, token_starts, side="right") - 1
        bounds = np.searchsorted(owners, np.arange(len(words) + 1)).tolist()
        ids = encoding.ids
        return {word: tuple(ids[bounds[i] : bounds[i + 1]]) for i, word in enumerate(words)}
