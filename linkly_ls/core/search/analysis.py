"""Text statistics shared by indexing and search: words, language, keywords, CJK terms."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from tantivy import Filter, TextAnalyzerBuilder, Tokenizer


_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
)
CJK_RUN = re.compile(f"[{_CJK}]+")
#: the characters of `CJK_RUN`, for a character class of another pattern
CJK_CHARS = _CJK
#: written without backtracking (a letter, word characters, then runs of ' ’ - each followed by word
#: characters): the same words as "a letter, then [\w'’-]* ending in \w", 12 % faster
_WORD = re.compile(rf"[^\W\d_]\w*(?:['’-]+\w+)*|[{_CJK}]", re.UNICODE)
_KEYWORD_TOKEN = re.compile(r"[^\W\d_][\w-]*[^\W_]", re.UNICODE)
_STEMMER = TextAnalyzerBuilder(Tokenizer.raw()).filter(Filter.lowercase()).filter(Filter.stemmer("english")).build()
#: most words `extract_keywords` keeps the terms of (`_WORD_TERMS`)
_WORD_TERMS_CAP = 200_000
#: characters of a document's text that its keywords are counted in (`keyword_text`)
KEYWORD_TEXT_BUDGET = 400_000
#: the longest word taken for a keyword: longer "words" are runs of minified code, base64 or filler
#: (a 4,000-character keyword filled search answers), while long German compounds stay
MAX_KEYWORD_CHARS = 48
#: the marker an extractor writes where a page or slide starts (`--- page 29 ---`): a line of the document,
#: so that `read` shows page breaks, but no word of it. An EPUB chapter's marker counts its title alone
#: (`CHAPTER_MARKER`): "chapter" was a word of every EPUB, the top keyword of a shelf of books
BARE_MARKER = re.compile(r"--- (?:page|slide) \d+ ---")
CHAPTER_MARKER = re.compile(r"--- chapter \d+: (.*) ---")

STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each either else etc even ever
    every few for from further get gets got had has have having he her here hers herself him himself
    his how however i if in into is it its itself just let like may me might more most much must my
    myself neither no nor not now of off often on once one only or other our ours ourselves out over
    own per rather same see seen shall she should since so some such than that the their theirs them
    themselves then there these they this those though through thus to too two under until up upon us
    use used uses using very via was we were what when where whether which while who whom whose why
    will with within without would yet you your yours yourself yourselves new first also example
    le la les un une des du de d l et en est pour que qui dans sur par pas plus au aux avec ce ces
    cet cette il elle ils elles nous vous on se sa son ses leur leurs y ne ou mais donc comme être
    avoir fait faire peut sont été être vos votre notre nos tout tous toutes aussi si
    der die das den dem des ein eine einer eines einem einen und oder aber ist sind war waren wird
    werden mit von zu zum zur im in auf für an am als auch bei aus nach nicht es sie er wir ihr ich
    du man sich so wie wenn dass kann können noch nur schon über unter vor durch um bis hier
    """.split()
)


#: Snowball's English stop list (snowballstem.org, algorithms/english/stop.txt) without its
#: contractions, which the word tokenizer splits ("don't": "don", "t") before a list is consulted.
#: The index reads English with Lucene's 33 stopwords; a query is also read without these
#: (`query_terms.english_query_terms`, `query_terms.path_query_terms`)
SNOWBALL_ENGLISH_STOPWORDS = (
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself "
    "it its itself they them their theirs themselves what which who whom this that these those am is are was were be "
    "been being have has had having do does did doing would should could ought a an the and but if or because as "
    "until while of at by for with about against between into through during before after above below to from up "
    "down in out on off over under again further then once here there when where why how all any both each few more "
    "most other some such no nor not only own same so than too very cannot"
).split()


def count_words(lines: list[str]) -> int:
    """Words, counting each CJK character as one word (as word processors do)."""
    return len(_WORD.findall("\n".join(lines)))  # one pass over the text: no word spans a newline


#: characters of text, taken evenly across a document, that language detection looks at
LANGUAGE_SAMPLE_CHARS = 3000
#: what CLD2 refuses as invalid UTF-8: control characters (but tab, newline, return), lone
#: surrogates and the noncharacters; replaced by spaces before detection
_NOT_FOR_CLD2 = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff]")
#: CLD2's older codes for languages whose ISO 639-1 code changed
_RENAMED_LANGUAGES = {"iw": "he", "jw": "jv", "in": "id"}


def detect_language(lines: list[str]) -> str | None:
    """ISO 639-1 code of the main language (639-2 where there is none), from a sample of the text; None if unsure.

    CJK text is told apart by its scripts; other text by CLD2 (compiled-in tables: no start-up
    cost, about 0.2 ms a document).
    """
    sample: list[str] = []
    size = 0
    step = max(1, len(lines) // 400)
    for line in lines[::step]:
        if line.strip():
            sample.append(line)
            size += len(line)
            if size > LANGUAGE_SAMPLE_CHARS:
                break
    text = " ".join(sample)
    if len(text) < 20:
        return None
    cjk_chars = sum(len(run) for run in CJK_RUN.findall(text))
    if cjk_chars > len(text) * 0.15:
        if re.search("[\u3040-\u30ff]", text):
            return "ja"
        if re.search("[\uac00-\ud7af]", text):
            return "ko"
        return "zh"
    import pycld2  # indexing needs it, searching does not

    try:
        _, _, details = pycld2.detect(_NOT_FOR_CLD2.sub(" ", text), isPlainText=True)
    except (pycld2.error, UnicodeError):  # a character CLD2 still refuses: no language rather than no document
        return None
    code = details[0][1].split("-")[0].lower()
    if code in ("un", "xx", "xxx", ""):
        return None
    return _RENAMED_LANGUAGES.get(code, code)


#: the start of a line that goes on a word its previous line hyphenated: a letter in lower case, so
#: "Smith-\nJones" and a list's "- item" stay as they are
_WORD_GOES_ON = re.compile(r"[^\W\d_A-Z]\w*")
_WORD_AT_END = re.compile(r"\w+\Z")
#: where a run of CJK characters meets a letter or digit of another script ("如fluxbox", "Kubernetes部署")
_SCRIPT_CHANGE = re.compile(f"(?<=[{_CJK}])(?=[^\\W_{_CJK}])|(?<=[^\\W_{_CJK}])(?=[{_CJK}])")


def for_keywords(text: str) -> str:
    """What the keyword index reads of a text, in NFC (a letter and its combining accent, as macOS writes
    them, were two words: "re" and "sultats"): a word hyphenated at a line break also whole
    ("ho-\nmoscedastic" adds "homoscedastic"), and a word of another script written against CJK
    characters apart from them (Chinese and Japanese leave no space there; the word tokenizer took
    "如fluxbox" for one word, so "fluxbox" was not found). Each step looks first whether it has anything
    to do: regular expressions over every chunk cost the indexing process a tenth of a second a MB."""
    if "-\n" in text:
        text = _join_broken_words(text)
    if not text.isascii():
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        if CJK_RUN.search(text):
            text = _SCRIPT_CHANGE.sub(" ", text)
    return text


def _join_broken_words(text: str) -> str:
    """`text` with each word a line break hyphenated also written whole after its second part."""
    pieces = text.split("-\n")
    out = [pieces[0]]
    for piece in pieces[1:]:
        second = _WORD_GOES_ON.match(piece)
        first = _WORD_AT_END.search(out[-1][-100:]) if second else None
        if second and first:
            word = second.group(0)
            out.append(f"-\n{word} {first.group(0)}{word}{piece[second.end():]}")
        else:
            out.append("-\n" + piece)
    return "".join(out)


def without_bare_markers(text: str) -> str:
    """A chunk's text as the keyword index reads it: without its page and slide marker lines
    (`BARE_MARKER`), a chapter marker read as its title (`CHAPTER_MARKER`)."""
    if "--- " not in text:
        return text
    return "\n".join(words for line in text.split("\n") if (words := marker_words(line)) is not None)


def marker_words(line: str) -> str | None:
    """What of `line` counts as words: None for a page or slide marker, a chapter marker's title, else the line."""
    if not line.startswith("--- "):
        return line
    if BARE_MARKER.fullmatch(line):
        return None
    chapter = CHAPTER_MARKER.fullmatch(line)
    return chapter.group(1) if chapter else line


def word_lines(lines: list[str], page_starts: list[int]) -> list[str]:
    """A document's lines without the page and slide markers at its page starts (1-based line numbers), a
    chapter's marker read as its title: the lines its words and keywords are counted in."""
    markers = {start - 1 for start in page_starts if 0 < start <= len(lines) and lines[start - 1].startswith("--- ")}
    if not markers:
        return lines
    return [words for number, line in enumerate(lines) if (words := line if number not in markers else marker_words(line)) is not None]


#: a line break (and the blanks around it) between two CJK characters: where a PDF broke a line of CJK text,
#: which has no spaces, it most often broke a word
_CJK_LINE_BREAK = re.compile(f"(?<=[{_CJK}])[ \t]*\n[ \t]*(?=[{_CJK}])")


def joined_cjk_lines(text: str) -> str:
    """`text` with the line breaks between two CJK characters taken out (a blank line stays a break)."""
    return _CJK_LINE_BREAK.sub("", text) if "\n" in text else text


def cjk_terms(text: str, across_lines: bool = False) -> list[str]:
    """Index terms for CJK text: every character bigram of each CJK run, or the lone character; with
    `across_lines` (a passage's text) a run goes on across a line break (`joined_cjk_lines`), so a word a
    PDF broke at the end of a line is found.

    Bigrams make any two-character word findable without a dictionary, which is
    the failure of tokenizers that keep a whole CJK sentence as one token.
    """
    if text.isascii():
        return []
    terms: list[str] = []
    for run in CJK_RUN.findall(joined_cjk_lines(text) if across_lines else text):
        if len(run) == 1:
            terms.append(run)
        else:
            terms.extend(run[i : i + 2] for i in range(len(run) - 1))
    return terms


def cjk_query_terms(text: str) -> list[str]:
    """Query terms for CJK text; a single character is also looked up as bigram prefixes elsewhere."""
    return cjk_terms(text)


#: letters of the Latin script: Basic Latin, Latin-1, Latin Extended A and B, Latin Extended Additional
_LATIN_LETTER = re.compile(r"[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def written_outside_latin(text: str) -> bool:
    """Whether the text has letters and none of them Latin (a query in Chinese, Russian, Greek, ...)."""
    return _LATIN_LETTER.search(text) is None and _LETTER.search(text) is not None


def mostly_outside_latin(text: str, sample_chars: int = 20_000) -> bool:
    """Whether most letters of the text (of its first `sample_chars`) are not Latin: a Chinese document
    that names PostgreSQL now and then."""
    sample = text[:sample_chars]
    letters = len(_LETTER.findall(sample))
    return letters > 0 and len(_LATIN_LETTER.findall(sample)) * 2 < letters


def has_cjk(text: str) -> bool:
    return CJK_RUN.search(text) is not None


def _accent_folds() -> dict[int, str]:
    """Each accented Latin letter (Latin-1 and Latin Extended-A/B) -> its letter without the accent, where
    that is one ASCII letter: the keyword index folds them alike (Tantivy's ASCII folding)."""
    folds = {ord(char): base for char, base in (("ø", "o"), ("Ø", "O"), ("ł", "l"), ("Ł", "L"), ("đ", "d"), ("Đ", "D"))}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFD", chr(code))[0]
        if base != chr(code) and base.isascii() and base.isalpha():
            folds[code] = base
    return folds


ACCENT_FOLDS = _accent_folds()


def composed(text: str) -> str:
    """`text` in Unicode's composed form (NFC), as the index reads it: a letter and its combining
    accent (`c` and U+0327, as macOS and some PDFs write `ç`) are one character of one word."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def fold_accents(text: str) -> str:
    """`text` (composed, NFC) with its accented Latin letters as plain ones, one character for one: a match's
    offsets in the folded text are its offsets in `text` (`"resume"` finds `résumé` at the same place)."""
    return text if text.isascii() else text.translate(ACCENT_FOLDS)


def extract_keywords(title: str, lines: list[str], headings: list[str], limit: int = 8) -> list[str]:
    """The words that best name what a document is about.

    Frequency of non-stopword terms, with words from the title and headings
    counted extra; CJK text contributes its most frequent bigrams. The spelling
    shown for a term is its most frequent one (the first seen of equals), found
    in a second look at the distinct words once the terms are ranked.
    """
    text = keyword_text(lines)
    return _ranked_keywords(title, headings, text, Counter(_WORD.findall(text)), limit)


def words_and_keywords(title: str, lines: list[str], headings: list[str], limit: int = 8) -> tuple[int, list[str]]:
    """`count_words(lines)` and `extract_keywords(title, lines, headings, limit)` from one reading of the text.

    Indexing needs both for every document, and finding the words is most of either's cost. A keyword
    token is a word's letters, digits, underscores and hyphens: the word itself, or for a word holding an
    apostrophe or ending in "_" (or of one letter) the pieces `_KEYWORD_TOKEN` finds in it
    (`_word_terms`), so the keywords are those of the text's own keyword tokens.
    """
    taken = _keyword_line_count(lines)
    text = "\n".join(lines[:taken])
    words = _WORD.findall(text)
    count = len(words)
    if taken < len(lines):
        count += len(_WORD.findall("\n".join(lines[taken:])))
    return count, _ranked_keywords(title, headings, text, Counter(words), limit)


def _ranked_keywords(title: str, headings: list[str], text: str, text_words: Counter[str], limit: int) -> list[str]:
    """`extract_keywords` of a document whose body `text` holds `text_words` (`_WORD`'s matches)."""
    if len(_WORD_TERMS) >= _WORD_TERMS_CAP:
        _WORD_TERMS.clear()
    counts: Counter[str] = Counter()
    parts: list[tuple[Counter[str], Counter[str], int]] = []  # each text's words and CJK bigrams, its weight

    def add(part: str, weight: int, words: Counter[str] | None = None) -> None:
        words = Counter(_WORD.findall(part)) if words is None else words
        bigrams = Counter(term for term in cjk_terms(part) if len(term) == 2)
        parts.append((words, bigrams, weight))
        for word, occurrences in words.items():
            terms = _WORD_TERMS.get(word)
            if terms is None:
                terms = _WORD_TERMS[word] = _word_terms(word)
            for term in terms:
                counts[term[0]] += weight * occurrences
        for bigram, occurrences in bigrams.items():
            counts[bigram] += weight * occurrences

    add(title, 5)
    add("\n".join(headings), 3)  # as each on its own: no word and no CJK run spans a line break
    add(text, 1, text_words)
    ranked = [word for word, count in counts.most_common(limit * 3) if count > 1 or len(counts) < limit]
    shown = set(ranked[:limit])
    forms: dict[str, dict[str, int]] = {}  # term -> spelling -> weighted occurrences, first seen first
    for words, bigrams, weight in parts:
        for word, occurrences in words.items():
            terms = _WORD_TERMS.get(word)
            if terms is None:  # emptied meanwhile by another thread's call
                terms = _word_terms(word)
            for term in terms:
                if term[0] in shown:
                    spellings = forms.setdefault(term[0], {})
                    spellings[term[1]] = spellings.get(term[1], 0) + weight * occurrences
        for bigram in bigrams:
            if bigram in shown:
                forms.setdefault(bigram, {bigram: 0})
    return [max(forms[key], key=forms[key].__getitem__) for key in ranked[:limit]]


def keyword_text(lines: list[str], budget: int = KEYWORD_TEXT_BUDGET) -> str:
    """The text keywords are counted in: the lines up to and including the one that spends `budget` characters."""
    return "\n".join(lines[: _keyword_line_count(lines, budget)])


def _keyword_line_count(lines: list[str], budget: int = KEYWORD_TEXT_BUDGET) -> int:
    taken = 0
    for line in lines:
        taken += 1
        budget -= len(line)
        if budget < 0:
            break
    return taken


#: word (`_WORD`) -> the (stemmed term, spelling shown) of each of its keyword tokens that is a keyword;
#: kept across the documents a process reads, emptied when it grows past the cap
_WORD_TERMS: dict[str, tuple[tuple[str, str], ...]] = {}


def _word_terms(word: str) -> tuple[tuple[str, str], ...]:
    """The keyword terms of a word: of the word itself when it is one keyword token (two characters or
    more, no apostrophe, not ending in "_": then `_KEYWORD_TOKEN` matches exactly it), else of the
    tokens `_KEYWORD_TOKEN` finds in it ("don't": "don"; "l’homme": "homme")."""
    if len(word) > 1 and word[-1] != "_" and "'" not in word and "’" not in word:
        term = _token_term(word)
        return (term,) if term else ()
    return tuple(term for token in _KEYWORD_TOKEN.findall(word) if (term := _token_term(token)))


def _token_term(token: str) -> tuple[str, str] | tuple[()]:
    lower = token.lower()
    if len(lower) < 3 or len(lower) > MAX_KEYWORD_CHARS or lower in STOPWORDS or (not lower.isascii() and has_cjk(lower)):
        return ()
    folded = fold_accents(lower)  # `López` and `Lopez` are one keyword, as search reads them
    term = (_STEMMER.analyze(folded) or [folded])[0]
    return term, lower if token.isupper() and len(token) > 5 else token
