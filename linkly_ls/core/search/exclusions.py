"""Words a query excludes: `-hedge` or `NOT hedge` leaves out the documents that hold the word.

A paralegal's `Juniper Court -hedge` was searched as three words, the garden note about a juniper
hedge first, and nothing said the minus sign meant nothing: desktop search tools and web search
engines read it as "without". A word written with a minus sign in front (at the start of the query or
after a space, so `e-mail` and `-5` stay as written) or after `NOT` in capitals in a query that is not
all capitals (a lower-case "not", or NOT in a request typed in capitals, is part of a sentence) is
taken out of the query, and every document holding it in a passage, its title,
headings or its path below the library's folder is left out of the results, as the keyword index
reads the word (stemmed, accents folded).

A minus sign before a command's option is no exclusion: `dpkg -i install deb` left out the 28
documents holding `i`, the dpkg cheat sheet among them, and `grep -r` the grep manual. A word of one or
two Latin letters, or of Latin letters without a vowel (`-rf`, `-la`, `-xzf`), stays in the query as
written; options spelt as words (`find -name`) still read as exclusions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from linkly_ls.core.search.keyword import KeywordIndex
    from linkly_ls.core.search.ranked import RankedDocument

_EXCLUDED = re.compile(r"(?:(?<!\S)-|\bNOT\s+)([^\W\d_][^\s\"“”«»„]*)")
#: a minus sign alone, for a query written in capitals, where NOT is a word of the sentence
_MINUS_EXCLUDED = re.compile(r"(?<!\S)-([^\W\d_][^\s\"“”«»„]*)")


@dataclass
class Exclusions:
    #: the words excluded, as written
    words: list[str]
    #: the query without them
    text: str


def split_exclusions(query: str) -> Exclusions:
    """The words `query` excludes and its text without them. `NOT` counts only in a query that has lower-case
    letters: a request typed in capitals (`IT DOES NOT INCLUDE OBLIGATORY ...`) says it as a word."""
    pattern = _EXCLUDED if any(character.islower() for character in query) else _MINUS_EXCLUDED
    words: list[str] = []

    def excluded(match: re.Match[str]) -> str:
        if match.group(0).startswith("-") and _reads_as_option(match.group(1)):
            return match.group(0)
        words.append(match.group(1))
        return " "

    text = pattern.sub(excluded, query)
    return Exclusions(list(dict.fromkeys(words)), " ".join(text.split()) if words else query)


def _reads_as_option(word: str) -> bool:
    """Whether `-word` is a command's option rather than a word to leave out: one or two Latin letters, or
    Latin letters without a vowel."""
    if not word.isascii() or not word.isalpha():
        return False
    return len(word) <= 2 or not any(vowel in word.lower() for vowel in "aeiouy")


def without_excluded(
    keyword: KeywordIndex, documents: list[RankedDocument], words: list[str], folder_terms: frozenset[str]
) -> tuple[list[RankedDocument], int]:
    """`documents` without those holding any of `words` (`folder_terms`: the path terms of the libraries'
    own folders, which hold no word), and how many were left out."""
    if not words or not documents:
        return documents, 0
    doc_ids = [document.doc_id for document in documents]
    holding: set[str] = set()
    for word in words:
        holding |= set(keyword.passages_with_every_word(word, doc_ids, folder_terms))
    return [document for document in documents if document.doc_id not in holding], len(holding)


def excluded_notes(words: list[str], left_out: int) -> list[str]:
    """What the search says of the words it excluded."""
    if not words:
        return []
    named = ", ".join(f"'{word}'" for word in words)
    return [f"Left out {left_out} document(s) holding {named} (written `-word` or `NOT word`)."]


def all_excluded_guidance(words: list[str], left_out: int) -> str:
    """What a search says when its exclusions left out every document the rest of the query found."""
    return (
        f"Every document the rest of the query matches holds {', '.join(repr(word) for word in words)}: "
        f"the {left_out} found were left out. Search without excluding it to see them."
    )
