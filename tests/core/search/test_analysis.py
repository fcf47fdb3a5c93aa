"""Text statistics: the language of a document, its word count."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from linkly_ls.core.search import analysis
from linkly_ls.core.extract import extract_file

LANGUAGES = [
    ("books/epub/live-manual.en.epub", "en"),
    ("books/epub/live-manual.fr.epub", "fr"),
    ("books/epub/ubuntu-packaging-guide.de.epub", "de"),
    ("books/GeoTopo-komprimiert.pdf", "de"),
    ("papers/debian/diagrams/package-lifecycle.nb.pdf", "no"),
    ("web/debian-handbook/fr-FR/sect.monitoring.html", "fr"),
    ("reference/debian/debian-reference.zh-cn.txt", "zh"),
    ("documents/work/Web 服务器配置笔记.docx", "zh"),
    ("papers/latex/multicolumn.pdf", "la"),  # lorem ipsum
    ("books/R/R-intro.pdf", "en"),
]


@pytest.mark.parametrize(("relative", "expected"), LANGUAGES)
def test_the_language_of_real_documents(relative: str, expected: str, corpus):
    document = extract_file(corpus / relative)
    assert analysis.detect_language(document.lines) == expected


def test_short_or_empty_text_has_no_language():
    assert analysis.detect_language([]) is None
    assert analysis.detect_language(["ok", "", "  "]) is None


def test_characters_the_detector_refuses_do_not_lose_the_language():
    french = "Le rapport annuel présente les résultats de la société et les perspectives pour l'année prochaine."
    hostile = ["\x00\x07 control \x1b[0m", "\x85\x9f C1 \x7f", "lone \ud800 surrogate \udfff", "\ufffe\uffff", french]
    assert analysis.detect_language(hostile) == "fr"
    assert analysis.detect_language(["\ud800" * 40]) is None


def test_word_count_pattern_matches_the_plain_definition():
    # `_WORD` is written without backtracking; it must find the same words as the plain form.
    plain = re.compile(rf"[^\W\d_](?:[\w'’-]*\w)?|[{analysis._CJK}]")
    alphabet = "ab É9_'’- \n.,zß中文かな"
    generator = random.Random(7)
    for _ in range(3000):
        text = "".join(generator.choice(alphabet) for _ in range(generator.randint(0, 40)))
        assert analysis._WORD.findall(text) == plain.findall(text), repr(text)
    assert analysis.count_words(["It's a well-known fact: 3 cats’ toys", "and words"]) == 8


def _keywords_by_definition(title: str, lines: list[str], headings: list[str], limit: int = 8) -> list[str]:
    """`extract_keywords` spelled out: every term counted with its weight, every spelling of it tallied."""
    from collections import Counter

    counts: Counter[str] = Counter()
    forms: dict[str, dict[str, int]] = {}

    def add(text: str, weight: int) -> None:
        for word, occurrences in Counter(analysis._KEYWORD_TOKEN.findall(text)).items():
            lower = word.lower()
            if not 3 <= len(lower) <= analysis.MAX_KEYWORD_CHARS or lower in analysis.STOPWORDS or analysis.has_cjk(lower):
                continue
            key = (analysis._STEMMER.analyze(analysis.fold_accents(lower)) or [analysis.fold_accents(lower)])[0]  # López is Lopez
            counts[key] += weight * occurrences
            spelling = lower if word.isupper() and len(word) > 5 else word
            forms.setdefault(key, {}).setdefault(spelling, 0)
            forms[key][spelling] += weight * occurrences
        for term, occurrences in Counter(analysis.cjk_terms(text)).items():
            if len(term) == 2:
                counts[term] += weight * occurrences
                forms.setdefault(term, {}).setdefault(term, 0)
                forms[term][term] += weight * occurrences

    add(title, 5)
    for heading in headings:
        add(heading, 3)
    add(analysis.keyword_text(lines), 1)
    ranked = [word for word, count in counts.most_common(limit * 3) if count > 1 or len(counts) < limit]
    return [max(forms[key], key=forms[key].__getitem__) for key in ranked[:limit]]


def test_keywords_weigh_title_and_headings_and_show_the_most_frequent_spelling():
    lines = ["Tuning the vacuum daemon.", "Vacuum runs nightly; VACUUM FULL locks tables.", "vacuuming again"]
    keywords = analysis.extract_keywords("Autovacuum notes", lines, ["Vacuum settings"])
    # "vacuum" counts 3 (heading) + 4 (body: "vacuum", "Vacuum", "VACUUM", "vacuuming" share the stem), shown
    # as its most frequent spelling; the title's and the heading's words count 5 and 3 times, so they are
    # keywords where a body word seen once ("tables", "nightly") is not; "the" is a stopword
    assert keywords == ["Vacuum", "Autovacuum", "notes", "settings"]


def test_keywords_are_counted_in_the_lines_up_to_the_one_that_spends_the_budget():
    assert analysis.keyword_text(["abc", "defg", "hi"], budget=5) == "abc\ndefg"
    assert analysis.keyword_text(["abc", "de"], budget=5) == "abc\nde"


def test_keywords_of_cjk_text_are_its_frequent_bigrams():
    keywords = analysis.extract_keywords("服务器配置", ["服务器配置笔记", "配置服务器", "server config"], [])
    assert "服务" in keywords and "配置" in keywords


def test_keywords_of_real_documents_follow_the_definition():
    from linkly_ls.core.indexing.preparation import _outline_titles

    fixtures = Path(__file__).parents[3] / "fixtures"
    documents = [path for path in sorted(fixtures.rglob("*")) if path.suffix in {".md", ".pdf", ".html", ".txt", ".docx"}]
    assert len(documents) >= 10
    for path in documents:
        document = extract_file(path)
        headings = _outline_titles(document.outline)
        expected = _keywords_by_definition(document.title, document.lines, headings)
        assert analysis.extract_keywords(document.title, document.lines, headings) == expected, path.name


def test_words_and_keywords_read_once_give_the_word_count_and_the_keywords_by_definition():
    # the keywords come from the words (`_WORD`) instead of a second reading with `_KEYWORD_TOKEN`: a word
    # with an apostrophe, ending in "_" or of one letter is where the two tokenizations part
    pieces = ["don't", "l’homme", "rock'n'roll", "state-of-the-art", "foo_", "_bar", "x-", "a_b", "x2y", "3D",
              "Vacuum", "vacuum", "VACUUMING", "中文配置", "・", "É", "ab", "-", "'", " ", " ", "\n", "."]
    generator = random.Random(11)
    for _ in range(2000):
        text = "".join(generator.choice(pieces) for _ in range(generator.randint(0, 30)))
        title = "".join(generator.choice(pieces) for _ in range(generator.randint(0, 6)))
        lines = text.split("\n")
        headings = [title[:4], text[:9], title[2:]]
        expected = (analysis.count_words(lines), _keywords_by_definition(title, lines, headings, limit=3))
        assert analysis.words_and_keywords(title, lines, headings, limit=3) == expected, (text, title)


def test_words_and_keywords_count_every_word_past_the_keyword_budget():
    lines = [f"line {number} holds the keyword alpha" for number in range(20_000)]
    count, keywords = analysis.words_and_keywords("Budget", lines, [])
    assert count == analysis.count_words(lines) == 100_000
    assert keywords == _keywords_by_definition("Budget", lines, [])
    assert len(analysis.keyword_text(lines)) < len("\n".join(lines))


def test_words_and_keywords_of_real_documents_follow_the_definitions():
    from linkly_ls.core.indexing.preparation import _outline_titles

    fixtures = Path(__file__).parents[3] / "fixtures"
    for path in sorted(fixtures.rglob("*")):
        if path.suffix in {".md", ".pdf", ".html", ".txt", ".docx", ".epub"}:
            document = extract_file(path)
            headings = _outline_titles(document.outline)
            expected = (analysis.count_words(document.lines), _keywords_by_definition(document.title, document.lines, headings))
            assert analysis.words_and_keywords(document.title, document.lines, headings) == expected, path.name


def test_page_and_slide_markers_are_no_words_of_a_document():
    lines = ["--- page 1 ---", "Ownership rules", "--- page 2 ---", "Borrowing rules", "--- slide 3 ---",
             "--- chapter 4: Lifetimes ---", "a line that says --- page 9 --- in passing"]
    kept = analysis.word_lines(lines, [1, 3, 5, 6])
    assert kept == ["Ownership rules", "Borrowing rules", "Lifetimes", lines[-1]]
    assert analysis.word_lines(lines, []) is lines, "markers are found at page starts only"
    count, keywords = analysis.words_and_keywords("", analysis.word_lines(["--- page 1 ---", "x"] * 50, list(range(1, 101, 2))), [])
    assert "page" not in keywords and count == 50, "the 50 lines of x, not the markers"
    chunk = "--- page 2 ---\nBorrowing rules\n--- slide 3 ---"
    assert analysis.without_bare_markers(chunk) == "Borrowing rules"
    assert analysis.without_bare_markers("no marker here") == "no marker here"


def test_a_text_is_outside_latin_when_it_has_letters_and_none_latin():
    assert analysis.written_outside_latin("虚拟主机") and analysis.written_outside_latin("управление 2024")
    assert analysis.written_outside_latin("Ελληνικά")
    for text in ("ownership 所有权", "Ærø", "café", "2024", "", "?!"):
        assert not analysis.written_outside_latin(text), text


def test_a_run_of_thousands_of_letters_is_no_keyword_but_a_long_compound_is():
    filler = "x" * 4000
    lines = [f"{filler} Donaudampfschifffahrtsgesellschaft {filler}"] * 3 + ["needle in a line"] * 2
    count, keywords = analysis.words_and_keywords("Export", lines, [])
    assert count == 17 and filler not in keywords
    assert "Donaudampfschifffahrtsgesellschaft" in keywords and "needle" in keywords


def test_a_cjk_word_a_line_break_split_gives_its_bigram_but_a_blank_line_does_not():
    from linkly_ls.core.search.analysis import cjk_terms

    assert "下重" in cjk_terms("按照这些条款下\n重新分发", across_lines=True) and "下重" in cjk_terms("条款下  \n  重新", across_lines=True)
    assert "下重" not in cjk_terms("条款下\n\n重新分发", across_lines=True) and "下重" not in cjk_terms("条款下 重新", across_lines=True)
    assert "下重" not in cjk_terms("条款下\n重新分发"), "headings, one a line, are no run"


def test_an_epub_chapter_marker_counts_its_title_alone_and_page_markers_nothing():
    """Every EPUB held the word "chapter" (its markers'): the top keyword of a shelf of books in six
    languages, and the term two unrelated books shared."""
    from linkly_ls.core.search.analysis import without_bare_markers, word_lines

    text = "--- chapter 3: Le jardin des citronniers ---\nSa tante l'attendait.\n--- page 4 ---\n--- chapterhouse ---"
    assert without_bare_markers(text) == "Le jardin des citronniers\nSa tante l'attendait.\n--- chapterhouse ---"
    lines = ["--- chapter 1: Vår ---", "Snön smälte.", "--- chapter 2: Sommar ---", "Solen."]
    assert word_lines(lines, [1, 3]) == ["Vår", "Snön smälte.", "Sommar", "Solen."]
    assert word_lines(["--- page 1 ---", "text"], [1]) == ["text"]


def test_a_name_with_and_without_its_accents_is_one_keyword():
    """`López` and `Lopez` took two of a document's eight keywords, as search reads them as one word."""
    keywords = analysis.extract_keywords("Notes", ["María López said. Maria Lopez agreed. López again, López, Lopez."], [])
    assert "López" in keywords and "Lopez" not in keywords and "Maria" not in keywords
