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
from collections.abc import Sequence
from itertools import chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: characters `str.split()` takes for whitespace and BERT's normaliser deletes as control characters
_DELETED = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
_HAS_DELETED = re.compile(f"[{_DELETED}]")
_DELETE = str.maketrans("", "", _DELETED)
#: most token ids kept in the cache, past which it starts again: about 140 bytes a word of 2.3 ids on
#: average (key, ids as bytes, slot), so at most about 18 MB. NFCorpus's passages hold 84,670 distinct words
#: (195,000 ids): at 150,000 the cache started again every few rounds, tokenizing 77,551 words twice
CACHE_IDS = 300_000
#: longer words (hashes, identifiers, URLs) are tokenized with their batch but not kept: they rarely return
CACHED_WORD_CHARS = 24
#: words joined into one text for the tokenizer. The texts of a batch go in one `encode_batch` call, which
#: lets go of the GIL and spreads the texts over the cores (1.75 times faster than a call a text on two
#: cores); a text is its unit of work (all of a batch's new words in one text took up to 190 ms on one core)
WORDS_PER_TEXT = 400


class WordIds:
    """Token ids of passages through a cache of word -> ids. Not thread-safe: one per embedding thread,
    or the caller's lock."""

    def __init__(self, tokenizer, cache_ids: int = CACHE_IDS) -> None:
        """`tokenizer`: a `tokenizers.Tokenizer` without truncation or padding (it is given many words at once)."""
        import numpy as np

        self._tokenizer = tokenizer
        #: a word's ids as the bytes of an array of `_id_type`: a passage's ids are then one `bytes.join`
        #: of its words' (half the time of chaining lists of ints, and half the memory of arrays)
        self._cache: dict[str, bytes] = {}
        self._cached_ids = 0
        self._cache_ids = cache_ids
        #: the bundled model's 30,522 token ids fit in 16 bits
        self._id_type = np.dtype(np.uint16 if tokenizer.get_vocab_size() <= 1 << 16 else np.uint32)

    def ids(self, texts: Sequence[str], max_tokens: int) -> list[np.ndarray]:
        """Each text's ids without special tokens, cut after `max_tokens`."""
        import numpy as np

        split = [(text.translate(_DELETE) if _HAS_DELETED.search(text) else text).split() for text in texts]
        cache = self._cache
        unseen = set(chain.from_iterable(split)).difference(cache)
        fresh = self._tokenize_words(list(unseen)) if unseen else {}
        size = self._id_type.itemsize
        if self._cached_ids + sum(map(len, fresh.values())) // size > self._cache_ids:
            kept = {word: cache[word] for words in split for word in words if word in cache}
            self.forget()
            cache.update(kept)
            self._cached_ids = sum(map(len, kept.values())) // size
        cache.update(fresh)
        try:
            return [np.frombuffer(b"".join(map(cache.__getitem__, words)), dtype=self._id_type)[:max_tokens] for words in split]
        finally:
            for word, ids in fresh.items():
                if len(word) > CACHED_WORD_CHARS:
                    del cache[word]
                else:
                    self._cached_ids += len(ids) // size

    def forget(self) -> None:
        """Empty the cache (at the end of a first pass: queries do not use it)."""
        self._cache.clear()
        self._cached_ids = 0

    def _tokenize_words(self, words: list[str]) -> dict[str, bytes]:
        """Each word's ids, from texts of WORDS_PER_TEXT words joined by spaces: a token belongs to the
        word its first character lies in (one encoding a few hundred words instead of one a word, ten
        times faster)."""
        import numpy as np

        groups = [words[start : start + WORDS_PER_TEXT] for start in range(0, len(words), WORDS_PER_TEXT)]
        encodings = self._tokenizer.encode_batch([" ".join(group) for group in groups], add_special_tokens=False)
        size = self._id_type.itemsize
        result: dict[str, bytes] = {}
        for group, encoding in zip(groups, encodings):
            lengths = np.fromiter(map(len, group), dtype=np.int64, count=len(group))
            starts = np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
            token_starts = np.fromiter((start for start, _ in encoding.offsets), dtype=np.int64, count=len(encoding.ids))
            owners = np.searchsorted(starts, token_starts, side="right") - 1
            bounds = np.searchsorted(owners, np.arange(len(group) + 1)).tolist()
            ids = np.asarray(encoding.ids, dtype=self._id_type).tobytes()
            result.update((word, ids[bounds[i] * size : bounds[i + 1] * size]) for i, word in enumerate(group))
        return result
