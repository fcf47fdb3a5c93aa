"""The words a word being typed may become, for search as you type (an editor's workspace symbols).

The keyword index cannot list its terms, and a word typed halfway (`zett`) matches nothing in it, so
a picker stays empty until the word is whole. What a person types there is most often a word of a
document's name: its title, a heading, its file name, one of its keywords. Those words, counted by
the documents that hold them, are kept in sorted order; a prefix of three characters or more that is
no such word itself becomes its most common words that start with it (`zett` -> `zettelkasten`).
The list is built again when the catalog changes (`Catalog.change_stamp`), in a thread of its own
started by the first query after: reading every document's name and outline takes a second or more on
a large index, which a query must not wait for (the first query waits for the first list up to
`FIRST_LIST_WAIT_S`, then searches the word as typed; while a newer list is built, the older one completes).
"""

from __future__ import annotations

import posixpath
import re
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from linkly_ls.core.search.analysis import composed

if TYPE_CHECKING:
    from linkly_ls.core.store.catalog import Catalog

#: the shortest prefix that is completed: fewer letters start too many words to choose from
MIN_PREFIX_CHARS = 3
#: the words a prefix becomes, most common first
COMPLETIONS = 3
#: how long the first query waits for the first list (a few thousand documents' names take 0.1-0.3 s): it
#: was searched as typed, and `zett` found nothing, the session's first impression
FIRST_LIST_WAIT_S = 1.5
_WORD = re.compile(r"[^\W_]{3,}")
#: the word being typed: the query's last word, with nothing after it
_LAST_WORD = re.compile(r"([^\W_]+)$")


class WordCompletions:
    """The words of one catalog's document names, kept current, completing a prefix."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._lock = threading.Lock()
        self._stamp: object = None
        self._words: list[str] = []
        self._counts: Counter[str] = Counter()
        self._building: threading.Thread | None = None

    def completed_query(self, query: str) -> str:
        """`query` with its last word, when it is a prefix and no word of its own, replaced by the words it
        may become; the query as it is otherwise (a space after the word says it is whole)."""
        typed = _LAST_WORD.search(query)
        if typed is None:
            return query
        words = self.complete(typed.group(1))
        return f"{query[: typed.start()]}{' '.join(words)}" if words else query

    def complete(self, prefix: str) -> list[str]:
        """The most common words starting with `prefix` (case aside), or [] when it is short or a word itself."""
        key = composed(prefix).casefold()
        if len(key) < MIN_PREFIX_CHARS:
            return []
        if self._stamp is None:  # no list yet: the session's first query waits a moment for one
            self.wait_until_current(FIRST_LIST_WAIT_S)
        words, counts = self._current()
        if key in counts:
            return []
        start = bisect_left(words, key)
        end = bisect_left(words, key + "\U0010ffff")
        return sorted(words[start:end], key=lambda word: (-counts[word], word))[:COMPLETIONS]

    def wait_until_current(self, timeout: float) -> bool:
        """Build the list for the catalog as it is now, if it is not, and wait for it; whether it is current."""
        self._current()
        building = self._building
        if building is not None:
            building.join(timeout)
        return self._stamp == self.catalog.change_stamp()

    def _current(self) -> tuple[list[str], Counter[str]]:
        """The list built last, starting a new build when the catalog changed since (and none runs)."""
        with self._lock:
            stamp = self.catalog.change_stamp()
            if stamp != self._stamp and self._building is None:
                self._building = threading.Thread(target=self._build, args=(stamp,), name="linkly-word-list", daemon=True)
                self._building.start()
            return self._words, self._counts

    def _build(self, stamp: object) -> None:
        counts: Counter[str] | None = None
        try:
            counts = _vocabulary(self.catalog)
        finally:
            with self._lock:
                if counts is not None:
                    self._counts, self._words, self._stamp = counts, sorted(counts), stamp
                self._building = None


def _vocabulary(catalog: Catalog) -> Counter[str]:
    """Each word of the documents' names -> in how many documents it stands."""
    counts: Counter[str] = Counter()
    for title, path, keywords, outline in catalog.named_words():
        stem = posixpath.splitext(posixpath.basename(path))[0]
        text = " ".join([title, stem, *keywords, *_headings(outline)])
        counts.update({word.casefold() for word in _WORD.findall(composed(text))})
    return counts


def _headings(nodes: Iterable[dict]) -> Iterable[str]:
    for node in nodes:
        yield node.get("title", "")
        yield from _headings(node.get("children", ()))
