"""Find the best few lines of a passage for a query and mark the query terms in them."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from linkly_ls.core.search.analysis import CJK_CHARS, CJK_RUN, STOPWORDS, composed, fold_accents
from linkly_ls.core.search.query_terms import ANALYZERS, EVERY_READING, readings_for

#: a word, or a run of CJK characters: a word of another script written against CJK characters
#: ("使用PostgreSQL数据库") is a word of its own, as the keyword index reads it (`analysis.for_keywords`)
_WORD = re.compile(f"(?:[^\\W{CJK_CHARS}]|['’-])+|[{CJK_CHARS}]+")
_APOSTROPHE = re.compile(r"['’]")
#: a line that ends in a word hyphenated there (`con-`)
_HYPHENATED_END = re.compile(r"[^\W\d_]-\Z")
#: the part before an apostrophe that is a French or Italian elision (l'hôtel, d'écriture, qu'il, dell'arte) ...
_ELISION = re.compile(r"(?i)[a-z]{1,2}|[a-z]*qu|dell|nell|all|sull|dall")
#: ... before the vowel or mute h it elides before (English `it’s`, `we’re` keep their first part)
_ELIDED_START = re.compile(r"(?i)[aeiouyhàâäæéèêëîïôöœùûü]")
SNIPPET_LINES = 3
SNIPPET_CHARS = 320
#: distinct words whose stems are kept between searches (a few MB)
FORMS_CACHE_WORDS = 32_768
_UNSEEN = -1
#: a passage that is only a page marker shows at most this many of the lines that follow it
FOLLOWING_LINES = 3
_SENTENCE_ENDS = (". ", "? ", "! ", "; ", "。", "！", "？")


@lru_cache(maxsize=FORMS_CACHE_WORDS)
def word_forms(word: str, readings: tuple[str, ...] = EVERY_READING) -> frozenset[str]:
    """A word's analysed forms in the given readings. They do not depend on the query, so they are
    cached across searches: analysing each word of every shown passage was most of a search's time."""
    forms: set[str] = set()
    for name in readings:
        forms.update(ANALYZERS[name].analyze(word))
    return frozenset(forms)


@lru_cache(maxsize=FORMS_CACHE_WORDS)
def written_forms(word: str, readings: tuple[str, ...]) -> frozenset[str]:
    """`word_forms` of a word as a passage writes it (`_reading_of`: `l'hôtel` is `hôtel`)."""
    return word_forms(_reading_of(word), readings)


@dataclass
class Snippet:
    text: str
    line: int
    matched_terms: int
    total_terms: int


class QueryMatcher:
    """Decides whether a word of the text matches a query term, across the languages indexed."""

    def __init__(self, query: str, readings: tuple[str, ...] = EVERY_READING) -> None:
        self.query = query = composed(query)
        self.readings = readings
        self._in_language: dict[tuple[str, ...], QueryMatcher] = {readings: self}
        self.groups: list[set[str]] = []
        self.cjk: list[str] = [run for run in CJK_RUN.findall(query)]
        seen: set[frozenset[str]] = set()  # a pasted page repeats its words: a list's `in` was quadratic
        for word in _WORD.findall(query):
            if CJK_RUN.fullmatch(word) or word.lower() in STOPWORDS:
                continue
            forms = frozenset(word_forms(word, readings))
            # the letter an apostrophe leaves (`trustee's`, `d'une`) is no word of its own: it marked the
            # S of U.S.C. and the d of d-i
            forms = frozenset(form for form in forms if len(form) > 1) or forms
            if forms and forms not in seen:
                seen.add(forms)
                self.groups.append(set(forms))
        self._query_forms: set[str] = set().union(*self.groups)
        self._typed = {word.lower() for word in _WORD.findall(query) if word.lower() not in STOPWORDS}
        self._cache: dict[str, int | None] = {}
        #: the same answers by the word as written (one dict lookup per word of a passage)
        self._by_word: dict[str, int | None] = {}

    def in_language(self, language: str | None) -> QueryMatcher:
        """This query's matcher for a document in `language` (`readings_for`)."""
        readings = readings_for(language)
        if readings not in self._in_language:
            self._in_language[readings] = QueryMatcher(self.query, readings)
        return self._in_language[readings]

    @property
    def total_terms(self) -> int:
        return len(self.groups) + len(self.cjk)

    def group_of(self, word: str) -> int | None:
        key = word.lower()
        if key not in self._cache:
            forms = written_forms(word, self.readings)
            if forms.isdisjoint(self._query_forms) and "-" in word.strip("-"):  # `con-ducted` a line break split
                forms = word_forms(word.replace("-", ""), self.readings)
            if forms.isdisjoint(self._query_forms):
                self._cache[key] = None
            else:
                self._cache[key] = next((i for i, group in enumerate(self.groups) if group & forms), None)
        return self._cache[key]

    def mark(self, text: str) -> tuple[str, set[int]]:
        """The text (composed, see `composed`) with matched words in **bold**, and which query terms were seen."""
        text = composed(text)
        seen: set[int] = set()

        def replace(match: re.Match[str]) -> str:
            word = match.group(0)
            group = self.group_of(word)
            if group is None:
                return word
            seen.add(group)
            core = word.strip("'’-")  # the bold stays inside a quote closed by ’ (‘**foo**’, not ‘**foo’**)
            if not core:
                return f"**{word}**"
            start = word.index(core)
            return f"{word[:start]}**{core}**{word[start + len(core):]}"

        marked = self._marked_outside_code(text, replace) if self.groups else text
        for index, run in enumerate(self.cjk):
            if run in marked:
                seen.add(len(self.groups) + index)
                marked = marked.replace(run, f"**{run}**")
        return (marked.replace("****", "") if self.cjk else marked), seen  # `**数据库****管理**` is one bold run

    def _marked_outside_code(self, text: str, replace: Callable[[re.Match[str]], str]) -> str:
        """`text` with `replace` applied to its words, but for a code span, which is bold whole when it holds a
        match (`pymdownx.**blocks**` renders its asterisks), and a link's target, which stays as written
        (`](./plugins/**tab**.md)` is another path)."""
        if "`" not in text and "](" not in text:
            return _WORD.sub(replace, text)
        parts: list[str] = []
        position = 0
        for kept in _KEPT_AS_WRITTEN.finditer(text):
            parts.append(_WORD.sub(replace, text[position : kept.start()]))
            piece = kept.group(0)
            held = _WORD.sub(replace, piece) != piece  # a query word in it (`replace` notes it as seen)
            parts.append(f"**{piece}**" if held and piece.startswith("`") else piece)
            position = kept.end()
        parts.append(_WORD.sub(replace, text[position:]))
        return "".join(parts)

    def terms_in(self, text: str) -> tuple[set[int], int]:
        """Which query terms the text holds (`mark(text)[1]` without building the marked text), and how many
        of its words are a query word as typed, case aside (`apt-get dist-upgrade` itself, where `apt
        full-upgrade` matches the same terms by their stems), when it holds any."""
        words = _WORD.findall(composed(text))
        if self.cjk:
            seen = self.mark(text)[1]
        else:
            seen = set()
            if self.groups:
                by_word = self._by_word
                for word in words:
                    group = by_word.get(word, _UNSEEN)
                    if group is _UNSEEN:
                        group = by_word[word] = self.group_of(word)
                    if group is not None:
                        seen.add(group)
        typed = self._typed
        return seen, (sum(1 for word in words if word.lower() in typed) if seen and typed else 0)


#: what a snippet keeps as written: a code span, a Markdown link's target (`<…>` around one with spaces too)
_KEPT_AS_WRITTEN = re.compile(r"`[^`\n]+`|\]\(<[^>\n]*>[^)\n]*\)|\]\([^)\s]*\)")


def _reading_of(word: str) -> str:
    """The part of a word with an apostrophe that carries its meaning: after an elision (`l'hôtel` is
    `hôtel`) or a name's one-letter prefix (`O'Brien` is `Brien`, as the index reads it: `o` is too short
    to mark), else before (a contraction or a possessive: `that’s` is no match for a query's `s`)."""
    parts = _APOSTROPHE.split(word.strip("'’"), 1)
    if len(parts) == 2 and _ELISION.fullmatch(parts[0]) and _ELIDED_START.match(parts[1]):
        return parts[1]
    if len(parts) == 2 and len(parts[0]) == 1 and parts[0].isupper() and parts[1][:1].isupper():
        return parts[1]
    return parts[0] or word


def cut(text: str, limit: int) -> str:
    """`text` cut to about `limit` characters with ` …`, at a space when one falls in its last third
    (text without spaces, Chinese or a run of emoji, is cut where the limit falls)."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    space = head.rfind(" ")
    return (head[:space] if space > limit * 2 // 3 else head).rstrip() + " …"


def best_snippet(
    matcher: QueryMatcher,
    lines: list[str],
    start_line: int,
    end_line: int,
    skip_lines: frozenset[int] = frozenset(),
    focus: Sequence[re.Pattern[str]] = (),
) -> Snippet:
    """The window of up to three lines in [start_line, end_line] that covers the most query terms.

    `skip_lines` (page markers) are never part of a snippet. A window longer than a snippet
    starts at the sentence that holds the first query term, so the terms are shown, or the first
    match of a `focus` pattern (a quoted phrase) when there is one.
    """
    first = max(start_line, 1)
    last = min(end_line, len(lines))
    scored: list[tuple[int, set[int], int]] = []
    for number in range(first, last + 1):
        if number not in skip_lines:
            scored.append((number, *matcher.terms_in(lines[number - 1])))
    best_line, best_seen, best_score = (scored[0][0] if scored else first), set(), (-1, -1, -1, -1, -1)
    for index, (number, _, _) in enumerate(scored):
        window = scored[index : index + SNIPPET_LINES]
        covered = set().union(*(seen for _, seen, _ in window))
        hits = sum(len(seen) for _, seen, _ in window)
        exact = sum(typed for _, _, typed in window)
        first_exact = next((typed for _, seen, typed in window if seen), 0)  # the line the snippet points at
        leading = next((len(seen) for _, seen, _ in window if seen), 0)
        # most terms; then most of them on the line pointed at, which the snippet starts with (a Word
        # paragraph is one long line: a window opening on the paragraph before, holding one common query
        # word, was cut before the line holding them all); then the words as typed; then most matches
        score = (len(covered), leading, exact, first_exact, hits)
        if score > best_score:
            best_score = score
            best_line, best_seen = number, covered
    shown = [number for number, _, _ in scored if number >= best_line][:SNIPPET_LINES]
    text = _joined([stripped for stripped in (lines[n - 1].strip() for n in shown) if stripped])
    if not text:  # a passage of nothing but a page marker: the start of its page, else its title
        text = _page_opening(lines, last, skip_lines) or " ".join(
            _marker_title(lines[n - 1]) for n in sorted(skip_lines) if first <= n <= last
        )
    text = _around_first_term(matcher, composed(text).replace("**", ""), focus)  # bold marks the query's words alone
    marked, seen = matcher.mark(cut(text, SNIPPET_CHARS))
    focus = next((number for number, seen_here, _ in scored if seen_here and number >= best_line), None)
    if focus is None:  # no query word in the passage: its first line of text, never a blank one
        focus = next((number for number in shown if lines[number - 1].strip()), best_line)
    return Snippet(text=marked, line=focus, matched_terms=len(seen | best_seen), total_terms=matcher.total_terms)


def _joined(lines: list[str]) -> str:
    """Lines as one text: a space between them, none where CJK text goes on (`管理` / `系统` is one word) or a
    word hyphenated at the line's end goes on in lower case (`con-` / `ducted` is `con-ducted`, which
    marks as `conducted`)."""
    text = lines[0] if lines else ""
    for line in lines[1:]:
        goes_on = (CJK_RUN.match(line) and CJK_RUN.match(text[-1])) or (_HYPHENATED_END.search(text) and line[:1].islower())
        text += line if goes_on else " " + line
    return text


def _page_opening(lines: list[str], marker: int, skip_lines: frozenset[int]) -> str:
    """The first few lines after a marker, up to the next one."""
    opening: list[str] = []
    for number in range(marker + 1, min(marker + FOLLOWING_LINES, len(lines)) + 1):
        if number in skip_lines:
            break
        if lines[number - 1].strip():
            opening.append(lines[number - 1].strip())
    return " ".join(opening)


def _marker_title(marker: str) -> str:
    """`--- chapter 2: Winter Sports ---` -> `Winter Sports`; a marker without a title gives ""."""
    inner = marker.strip().strip("-").strip()
    return inner.split(": ", 1)[1] if ": " in inner else ""


def _around_first_term(matcher: QueryMatcher, text: str, focus: Sequence[re.Pattern[str]] = ()) -> str:
    """`text` from the start of the sentence holding the first match of a `focus` pattern, else of the
    first query term, when that would otherwise fall past the end of the snippet."""
    if len(text) <= SNIPPET_CHARS:
        return text
    folded = fold_accents(text) if focus else text  # a phrase pattern reads the text so (`phrases.phrase_text`)
    position = min((found.start() for pattern in focus if (found := pattern.search(folded))), default=None)
    if position is None:
        position = next((m.start() for m in _WORD.finditer(text) if matcher.group_of(m.group(0)) is not None), None)
    if position is None:
        position = min((text.find(run) for run in matcher.cjk if run in text), default=None)
    if position is None or position < SNIPPET_CHARS // 2:
        return text
    ends = [text.rfind(end, 0, position) + len(end) for end in _SENTENCE_ENDS if text.rfind(end, 0, position) >= 0]
    sentence = max(ends, default=-1)
    start = sentence if sentence >= 0 and position - sentence < SNIPPET_CHARS * 3 // 4 else position
    return "… " + text[start:].lstrip()


def excerpt(marked: str, limit: int) -> str:
    """A marked snippet cut to `limit` characters, from the sentence of its first marked term when
    that term would fall in the second half (a short label, such as an editor's list entry)."""
    text = " ".join(marked.split())
    position = text.find("**")
    if len(text) > limit and position > limit // 2:
        ends = [text.rfind(end, 0, position) + len(end) for end in _SENTENCE_ENDS if text.rfind(end, 0, position) >= 0]
        start = max(ends, default=-1)
        text = "… " + text[start if 0 <= start and position - start < limit // 2 else position :]
    return cut(text, limit)


#: an entry of a table of contents: a title, then dot leaders (`. . . .` or `....`) or a wide gap, then its page
_CONTENTS_ENTRY = re.compile(r"(?:(?:\.\s?){4,}|\s{4,})\s*(?:\d{1,4}|[ivxlc]{1,6})\b")


def reads_as_contents(lines: list[str]) -> bool:
    """Whether these lines are a table of contents (or an index): most of them hold an entry of one. Such a
    passage names every section title and page the query's words occur in, so it scores high; it is not
    where the answer is."""
    filled = [line for line in lines if line.strip()]
    entries = sum(1 for line in filled if _CONTENTS_ENTRY.search(line))
    return len(filled) >= 2 and entries * 2 >= len(filled)

