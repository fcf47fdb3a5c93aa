"""Text statistics: the language of a document, its word count."""

from __future__ import annotations

import random
import re

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
