"""WordPiece ids of many passages, each distinct word tokenized once.

The first pass's cost is mostly tokenization: the tokenizer normalises, splits
and builds an encoding (offsets, type ids, masks) for every word of every
passage, about 1.7 microseconds a token. Natural text repeats its words, and the
bundled model's BERT normaliser and pre-tokenizer act within whitespace-separated
words (case, accents, Chinese characters and punctuation are split or folded
there; whitespace always ends a word), so a passage's ids are its words' ids in
order. `WordIds` keeps each word's ids and asks the tokenizer only for words it
has not seen, a few hundred words to a text. The ids are exactly the
tokenizer's: the few characters that Python splits words on and the normaliser
deletes (vertical tab, form feed, the information separators, next line) are
deleted first.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Sequence
from itertools import chain, islice

#: characters `str.split()` takes for whitespace and BERT's normaliser deletes as control characters
_DELETED = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
_HAS_DELETED = re.compile(f"[{_DELETED}]")
_DELETE = str.maketrans("", "", _DELETED)
#: most token ids kept in the cache, past which it starts again: about 340 bytes a word of 2.3 ids on average
#: (LISA's 36,645 distinct words: 12 MB), so at most about 20 MB
CACHE_IDS = 150_000
#: longer words (hashes, identifiers, URLs) are tokenized with their batch but not kept: they rarely return
CACHED_WORD_CHARS = 24
#: words joined into one text for the tokenizer, one call each: a call holds the GIL, about a millisecond for
#: 400 words (all of a batch's new words in one text held it up to 190 ms, keeping searches waiting)
WORDS_PER_TEXT = 400


class WordIds:
    """Token ids of passages through a cache of word -> ids. Not thread-safe: one per embedding thread,
    or the caller's lock."""

    def __init__(self, tokenizer, cache_ids: int = CACHE_IDS) -> None:
        """`tokenizer`: a `tokenizers.Tokenizer` without truncation or padding (it is given many words at once)."""
        self._tokenizer = tokenizer
        self._cache: dict[str, array] = {}
        self._cached_ids = 0
        self._cache_ids = cache_ids
        #: the bundled model's 30,522 token ids fit in 16 bits
        self._id_type = "H" if tokenizer.get_vocab_size() <= 1 << 16 else "I"

    def ids(self, texts: Sequence[str], max_tokens: int) -> list[list[int]]:
        """Each text's ids without special tokens, cut after `max_tokens`."""
        split = [(text.translate(_DELETE) if _HAS_DELETED.search(text) else text).split() for text in texts]
        cache = self._cache
        unseen = {word for words in split for word in words if word not in cache}
        fresh = self._tokenize_words(list(unseen)) if unseen else {}
        if self._cached_ids + sum(map(len, fresh.values())) > self._cache_ids:
            kept = {word: cache[word] for words in split for word in words if word in cache}
            self.forget()
            cache.update(kept)
            self._cached_ids = sum(map(len, kept.values()))
        cache.update(fresh)
        try:
            return [list(islice(chain.from_iterable(map(cache.__getitem__, words)), max_tokens)) for words in split]
        finally:
            for word, ids in fresh.items():
                if len(word) > CACHED_WORD_CHARS:
                    del cache[word]
                else:
                    self._cached_ids += len(ids)

    def forget(self) -> None:
        """Empty the cache (at the end of a first pass: queries do not use it)."""
        self._cache.clear()
        self._cached_ids = 0

    def _tokenize_words(self, words: list[str]) -> dict[str, array]:
        """Each word's ids, from texts of WORDS_PER_TEXT words joined by spaces, one tokenizer call each: a
        token belongs to the word its first character lies in (one encoding a few hundred words instead
        of one a word, ten times faster)."""
        import numpy as np

        groups = [words[start : start + WORDS_PER_TEXT] for start in range(0, len(words), WORDS_PER_TEXT)]
        encodings = [self._tokenizer.encode(" ".join(group), add_special_tokens=False) for group in groups]
        result: dict[str, array] = {}
        for group, encoding in zip(groups, encodings):
            lengths = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
            starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
            token_starts = np.fromiter((start for start, _ in encoding.offsets), dtype=np.int64, count=len(encoding.ids))
            owners = np.searchsorted(starts, token_starts, side="right") - 1
            bounds = np.searchsorted(owners, np.arange(len(group) + 1)).tolist()
            ids = array(self._id_type, encoding.ids)
            result.update((word, ids[bounds[i] : bounds[i + 1]]) for i, word in enumerate(group))
        return result
