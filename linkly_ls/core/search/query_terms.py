"""How a query is read into index terms: the analyzers of the keyword index's fields, and each
reading of a query (English, French, German, file paths) without function words.

The keyword index (`keyword.py`) registers these analyzers for its fields and builds its queries
from these readings; relevance, feedback and the miss check read queries the same way.
"""

from __future__ import annotations

import re

import tantivy
from tantivy import Filter, TextAnalyzerBuilder, Tokenizer

from linkly_ls.core.search.analysis import SNOWBALL_ENGLISH_STOPWORDS, cjk_terms, for_keywords

#: a word of this many bytes (UTF-8) or more is left out of the index and of queries (a hash, a run of
#: base64): it can never match
WORD_BYTES_LIMIT = 60


#: the most distinct words a query is searched by (Lucene's `maxClauseCount`): a pasted chapter of 90,000
#: words took 4 s and a gigabyte; a long request or a pasted page stays far below it
MAX_QUERY_WORDS = 1024
_QUERY_WORD = re.compile(r"[^\W_]+")
#: the `'s` of a possessive, which the index reads as a word `s` of its own
_POSSESSIVE = re.compile(r"(?<=[^\W_])['\u2019]s\b")


def bounded_query(text: str, limit: int = MAX_QUERY_WORDS) -> tuple[str, int]:
    """`text` up to where its (`limit` + 1)-th distinct word first appears, and how many distinct words it
    had (the text is whole when that is at most `limit`)."""
    seen: set[str] = set()
    cut = len(text)
    for word in _QUERY_WORD.finditer(text):
        key = word.group().casefold()
        if key not in seen:
            if len(seen) == limit and cut == len(text):
                cut = word.start()
            seen.add(key)
    return text[:cut], len(seen)


def query_term_counts(terms: list[str]) -> dict[str, float]:
    """term -> occurrences in the query, first seen first."""
    counts: dict[str, float] = {}
    for term in terms:
        counts[term] = counts.get(term, 0) + 1
    return counts


def _analyzer(language: str | None, more_stopwords: list[str] | None = None, stem: bool = True) -> tantivy.TextAnalyzer:
    builder = TextAnalyzerBuilder(Tokenizer.simple()).filter(Filter.remove_long(WORD_BYTES_LIMIT)).filter(Filter.lowercase())
    if language:
        builder = builder.filter(Filter.stopword(language))
    if more_stopwords:
        builder = builder.filter(Filter.custom_stopword(more_stopwords))
    builder = builder.filter(Filter.ascii_fold())
    if language and stem:
        builder = builder.filter(Filter.stemmer(language))
    return builder.build()


ANALYZERS = {
    "lk_en": _analyzer("english"),
    "lk_fr": _analyzer("french"),
    "lk_de": _analyzer("german"),
    "lk_plain": _analyzer(None),
}
#: every reading of the index's words: English for every document, French and German for those in it
EVERY_READING = ("lk_en", "lk_fr", "lk_de")
#: a document language's own reading beside the English one (`keyword.LANGUAGE_FIELDS`)
_OWN_READING = {"fr": "lk_fr", "de": "lk_de"}


def readings_for(language: str | None) -> tuple[str, ...]:
    """The readings of a document in `language`: the French stem of "notes" is "not", which an English
    document's "not" must not match."""
    own = _OWN_READING.get(language or "")
    return ("lk_en", own) if own else ("lk_en",)


#: each language's reading of a query without English function words: an English query is read as French
#: and German too, where "and", "the" or "of" are no stop words and matched German documents by "and" alone
_CONTENT_READINGS = {
    "lk_en": _analyzer("english", SNOWBALL_ENGLISH_STOPWORDS),
    "lk_fr": _analyzer("french", SNOWBALL_ENGLISH_STOPWORDS),
    "lk_de": _analyzer("german", SNOWBALL_ENGLISH_STOPWORDS),
}
_PATH_CONTENT = _analyzer("english", SNOWBALL_ENGLISH_STOPWORDS, stem=False)
#: whether a query's English and path readings leave out English stopwords (see `english_query_terms`)
QUERY_WITHOUT_FUNCTION_WORDS = True


def english_query_terms(query: str) -> list[str]:
    """The English stems a query is searched by, in order, repeated as often as the query repeats them:
    its words without Snowball's English stopwords (pronouns, auxiliaries, modals, prepositions).

    Tantivy reads French and German with Snowball's lists, English with Lucene's 33 words. A request
    worded as a person writes it ("I would like any papers about ...") is then searched by its
    subject, not by "I", "would" and "about", which BM25 counts as often as the request repeats them
    and which match passages about anything. The index keeps these words: a query with no other word
    ("the who") is searched by all of them. They are dropped before stemming ("does" goes, "Doe"
    stays).
    """
    return reading_terms(query, "lk_en")


def is_function_word(word: str) -> bool:
    """Whether `word` is an English function word ("the", "and", "of"), which no reading searches by
    while the query has other words."""
    return not _CONTENT_READINGS["lk_en"].analyze(word) and bool(ANALYZERS["lk_plain"].analyze(word))


def reading_terms(query: str, analyzer_name: str) -> list[str]:
    """One reading's terms of a query (English, French or German: an analyzer of `QUERY_READINGS`): its
    words without the language's stop words and English function words, while other words remain."""
    return _content_terms(query, _CONTENT_READINGS[analyzer_name], analyzer_name)


def common_words_only(query: str) -> list[str]:
    """The query's words when every one is an English function word (`the of and`), else []."""
    words = re.findall(r"[^\W\d_]+", query)
    return list(dict.fromkeys(word.lower() for word in words)) if words and all(map(is_function_word, words)) else []


def path_query_terms(query: str) -> list[str]:
    """The words a query is matched against file paths by: as written (folded to lower case, not
    stemmed), without English stopwords while others remain, so "notes on the war" does not favour
    every file with "the" or "on" in its name."""
    return _content_terms(query, _PATH_CONTENT, FIELD_ANALYZERS["path"])


def _content_terms(query: str, without_stopwords: tantivy.TextAnalyzer, every_word: str) -> list[str]:
    """The query read by `without_stopwords`, or by the analyzer `every_word` names when that leaves nothing."""
    query = for_keywords(query)  # a word written against CJK characters is a word of its own, as indexed
    content = without_stopwords.analyze(query) if QUERY_WITHOUT_FUNCTION_WORDS else []
    return content or ANALYZERS[every_word].analyze(query)


def word_readings(query: str) -> list[list[dict[str, list[str]]]]:
    """The words of the query as each reading holds them, for finding passages that hold every word: one
    list per reading (English, then French and German), each word as field -> its terms there (every term
    of a field for the word to be there: a CJK word's bigrams).

    The English reading is the query's words without English function words (while other words remain)
    in any field: text, title, headings, path, CJK pairs. The French and German readings are the words
    their own reading searches by (without the language's stop words too: `du`, `der`) in the text of
    documents in that language only, so that "préavis du bail" is held by a French clause without `du`,
    and "war crimes" is not held by an English text holding "crimes" (`war` is a German stop word)."""
    words = list(dict.fromkeys(_QUERY_WORD.findall(_POSSESSIVE.sub("", for_keywords(query)))))
    content = [word for word in words if not is_function_word(word)] if QUERY_WITHOUT_FUNCTION_WORDS else words
    english: list[dict[str, list[str]]] = []
    for word in content or words:
        bigrams = cjk_terms(word)
        if bigrams:  # in the text by its character pairs, in a path as written (`李华.docx`)
            fields = {"cjk": bigrams, "path": ANALYZERS[FIELD_ANALYZERS["path"]].analyze(word)}
        else:
            fields = {field: ANALYZERS[name].analyze(word) for field, name in FIELD_ANALYZERS.items()}
        fields = {field: terms for field, terms in fields.items() if terms}
        if fields:
            english.append(fields)
    readings = [english]
    for field, name in (("body_fr", "lk_fr"), ("body_de", "lk_de")):
        own = [{field: terms} for word in words if not cjk_terms(word) and (terms := _CONTENT_READINGS[name].analyze(word))]
        if own:
            readings.append(own)
    return readings


def folder_path_terms(folders: list[str]) -> frozenset[str]:
    """The path terms of folders (as the index reads a path): those of a library's own folders are in the
    path of every document below them."""
    analyzer = ANALYZERS[FIELD_ANALYZERS["path"]]
    return frozenset(term for folder in folders for term in analyzer.analyze(folder))


FIELD_ANALYZERS = {
    "title": "lk_en",
    "headings": "lk_en",
    "body": "lk_en",
    "body_fr": "lk_fr",
    "body_de": "lk_de",
    "path": "lk_plain",
}
