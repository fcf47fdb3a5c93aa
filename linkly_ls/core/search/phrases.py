"""Quoted phrases in a search query: the documents that hold each one word for word.

`"heap allocation" rust` asks for documents holding the two words side by side; the rest of
the query ranks them as any query does. A phrase matches its words in order, whole and
case-insensitive, with only spaces, line breaks or punctuation between them (so `"sources
list"` finds `sources.list`, and a phrase a PDF wrapped across two lines is found); words are
not stemmed (`"running shoes"` does not find "run shoes"). CJK text has no spaces, so a CJK
phrase matches inside longer runs of CJK characters.

The keyword index keeps no word positions, so the candidates are the chunks holding every
indexed term of a phrase (`KeywordIndex.all_terms_query`), best first, whose lines are then
read and matched exactly. A phrase of common words only (`"to be or not to be"`) has no indexed
term: it is searched as plain words, and the answer says so.

A query that is one identifier and nothing else (`is_dir`, `sources.list`, `2.6.32`) is read as if
quoted: its parts alone (`is`, `dir`) would rank every mention of `dir` above it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import TYPE_CHECKING

from linkly_ls.core.search.analysis import composed, fold_accents, has_cjk
from linkly_ls.core.search.snippets import reads_as_contents

if TYPE_CHECKING:
    from linkly_ls.core.search.keyword import ChunkHit, KeywordIndex
    from linkly_ls.core.store.catalog import Catalog

#: opening quote -> its closing quote (straight, English, German, French, CJK corner brackets)
QUOTES = {'"': '"', "\u201c": "\u201d", "\u201e": "\u201c", "\u00ab": "\u00bb", "\u300c": "\u300d", "\u300e": "\u300f"}
#: candidate chunks read per phrase; beyond them the answer says the list may be incomplete
MAX_CANDIDATE_CHUNKS = 5000
#: candidate chunks (spans) of one document beyond which its lines are read at once (one decompression)
WHOLE_DOCUMENT_CHUNKS = 8
_WORDS = re.compile(r"[^\W_]+")
#: a name, number or identifier written with `_`, `.` or `:` inside it (`is_dir`, `sources.list`, `2.6.32`,
#: `std::vec`): the tokenizer cuts it into its parts, each far more common than the whole
_IDENTIFIER = re.compile(r"[^\W_]+(?:(?:_+|\.|::?)[^\W_]+)+")
_BETWEEN_WORDS = r"[\W_]+"
_HYPHENATED = re.compile(r"[^\W_]+(?:-[^\W_]+)+")
#: a nested tag as notes write it (`#work/active`, `#gardening/roses`): one exact thing, not two words
_NESTED_TAG = re.compile(r"#[^\W\d_][\w-]*(?:/[\w-]+)+")


@dataclass(frozen=True)
class QuotedQuery:
    #: each quoted phrase, as written (quotes removed); only phrases with a letter or digit
    phrases: list[str]
    #: the query without its quote marks: what ranks the documents
    text: str


def split_phrases(query: str) -> QuotedQuery:
    """The quoted phrases of `query` and its text without quote marks. A quote left open is text."""
    phrases: list[str] = []
    pieces: list[str] = []
    unclosed: set[str] = set()  # closing quotes absent from the rest of the query: never looked for again
    position = 0
    while position < len(query):
        closing = QUOTES.get(query[position])
        end = query.find(closing, position + 1) if closing and closing not in unclosed else -1
        if end < 0:
            if closing:
                unclosed.add(closing)
            pieces.append(query[position])
            position += 1
            continue
        inner = query[position + 1 : end]
        if _WORDS.search(inner):
            phrases.append(" ".join(inner.split()))
        pieces.append(f" {inner} ")
        position = end + 1
    return QuotedQuery(phrases, " ".join("".join(pieces).split()))


def lone_identifier(text: str) -> bool:
    """Whether `text` is one identifier and nothing else (a nested tag too, `#work/active`): a query of it
    is read as if quoted. A word with
    hyphens is one when a part after the first starts with a digit, or a part holds a capital after
    its first letter (`Sec-WebSocket-Key`, `UTF-8`, `IGF-1`), not when it reads as words (`e-mail`,
    `state-of-the-art`, `African-American`, whose other spellings should be found too)."""
    if _IDENTIFIER.fullmatch(text) is not None or _NESTED_TAG.fullmatch(text) is not None:
        return True
    if _HYPHENATED.fullmatch(text) is None:
        return False
    parts = text.split("-")
    return any(part[:1].isdigit() for part in parts[1:]) or any(char.isupper() for part in parts for char in part[1:])


def words_of(text: str) -> list[str]:
    """The words of `text` as the index's tokenizer cuts them: runs of letters and digits."""
    return _WORDS.findall(text)


def words_pattern(words: Sequence[str], separator: str, cjk: bool) -> re.Pattern[str]:
    """`words` in order with `separator` between them, case-insensitive and whole: no letter or digit
    just before or after, except in CJK text, which has no spaces between words."""
    body = separator.join(re.escape(word) for word in words)
    return re.compile(body if cjk else rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """The exact pattern of a phrase, to search in `phrase_text`: its words in order, anything but letters
    and digits between, accents aside (`"resume"` finds `résumé`, `"strasse"` finds `Straße`). The layout
    of a page may break a word: a word hyphenated at a line break (`compo-` / `nents`) and a CJK word a
    line break split are found too."""
    words = words_of(fold_accents(composed(phrase)))
    body = _word_across_breaks(words[0]) if words else ""
    for before, word in zip(words, words[1:]):
        # Chinese or Japanese beside another word needs nothing between (`Linux系统` for "linux 系统")
        between = "[\\W_]*" if has_cjk(before[-1] + word[0]) else _BETWEEN_WORDS
        body += between + _word_across_breaks(word)
    return re.compile(body if has_cjk(phrase) else rf"(?<![^\W_]){body}(?![^\W_])", re.IGNORECASE)


def phrase_text(text: str) -> str:
    """What a phrase pattern is searched in: the text composed and its accents folded (its lines unchanged)."""
    return fold_accents(composed(text))


#: what may fall inside a word of a phrase where the page broke it: a hyphen and a line break ...
_HYPHEN_BREAK = r"(?:-[ \t]*\n[ \t]*)?"
#: ... or, between two CJK characters, a line break alone
_CJK_BREAK = r"(?:[ \t]*\n[ \t]*)?"


def _word_across_breaks(word: str) -> str:
    pieces: list[str] = []
    index = 0
    while index < len(word):
        if index:  # a line break at a script change (`API` / `服务器`) needs no hyphen either
            pieces.append(_CJK_BREAK if has_cjk(word[index - 1] + word[index]) else _HYPHEN_BREAK)
        if word[index : index + 2].lower() == "ss":  # `Straße` is `strasse` to the index, and back
            pieces.append(f"(?:{re.escape(word[index])}{_HYPHEN_BREAK}{re.escape(word[index + 1])}|ß)")
            index += 2
            continue
        pieces.append("(?:ß|ss)" if word[index] == "ß" else re.escape(word[index]))
        index += 1
    return "".join(pieces)


@dataclass(frozen=True)
class PhraseSpan:
    """Where a document holds a phrase: the chunk (its passage), and the lines of the match in it."""

    start_line: int
    end_line: int
    first_match_line: int
    last_match_line: int


@dataclass
class PhraseMatches:
    #: doc_id -> where it holds the first searchable phrase, for each document holding every one
    passages: dict[str, PhraseSpan] = field(default_factory=dict)
    #: whether any phrase had an indexed word; if none had, no document was ruled out
    searched: bool = False
    #: phrases with no indexed word (common words only): searched as plain words
    unsearchable: list[str] = field(default_factory=list)
    #: phrases found in more candidate chunks than were read: documents may be missing
    truncated: list[str] = field(default_factory=list)


def documents_holding(
    catalog: Catalog, keyword: KeywordIndex, phrases: list[str], allowed_doc_ids: list[str] | None
) -> PhraseMatches:
    """The documents within `allowed_doc_ids` (None: all) holding every phrase that has an indexed word."""
    matches = PhraseMatches()
    allowed = allowed_doc_ids
    for phrase in phrases:
        query = keyword.all_terms_query(phrase)
        if query is None:
            matches.unsearchable.append(phrase)
            continue
        hits = keyword.search_query(query, MAX_CANDIDATE_CHUNKS, allowed) if allowed != [] else []
        if len(hits) >= MAX_CANDIDATE_CHUNKS:
            matches.truncated.append(phrase)
        found = _confirmed(catalog, hits, phrase_pattern(phrase))
        matches.passages = found if not matches.searched else {d: matches.passages[d] for d in found}
        matches.searched = True
        allowed = sorted(found)
    return matches


def span_lines(catalog: Catalog, doc_id: str, spans: list[tuple[int, int]]) -> list[list[str]]:
    """The lines of each (first, last) span of a document, in the spans' order; a document with many
    spans is read at once (one decompression, kept by the line cache), not span by span."""
    if len(spans) > WHOLE_DOCUMENT_CHUNKS:
        every = catalog.lines(doc_id)
        return [every[first - 1 : last] for first, last in spans]
    return [catalog.line_range(doc_id, first, last - first + 1) for first, last in spans]


def _confirmed(catalog: Catalog, hits: list[ChunkHit], pattern: re.Pattern[str]) -> dict[str, PhraseSpan]:
    """doc_id -> the first candidate chunk (best keyword score first) whose lines hold `pattern`, and that is
    no table of contents or index when another is not (the section, not the page that lists it)."""
    by_document: dict[str, list[ChunkHit]] = {}
    for hit in hits:
        by_document.setdefault(hit.doc_id, []).append(hit)
    found: dict[str, PhraseSpan] = {}
    for doc_id, chunks in by_document.items():
        spans = [(chunk.start_line, chunk.end_line) for chunk in chunks]
        for (first, last), lines in zip(spans, span_lines(catalog, doc_id, spans)):
            text = phrase_text("\n".join(lines))
            match = pattern.search(text)
            if match is None:
                continue
            line = first + text.count("\n", 0, match.start())
            span = PhraseSpan(first, last, line, line + match.group().count("\n"))
            found.setdefault(doc_id, span)
            if not reads_as_contents(lines):
                found[doc_id] = span
                break
    return found
