"""How relevant a shown passage reads: the share of the query's words it holds, and the cosine's band."""

from __future__ import annotations

import pytest

from linkly_ls.core.search.query_terms import readings_for
from linkly_ls.core.search.relevance import COSINE_STRONG, COSINE_UNRELATED, RelevanceScorer


def test_the_lexical_share_counts_the_query_s_subject_not_its_wording():
    scorer = RelevanceScorer("What is there about the cataloguing of maps?")
    assert scorer.terms == ["catalogu", "map"]
    assert scorer.lexical(["Cataloguing rare maps"], "") == pytest.approx(1.0)
    assert scorer.lexical(["Old maps"], "") == pytest.approx(0.5)


def test_rare_words_weigh_more_in_the_share():
    frequencies = {("body", "catalogu"): 5, ("body", "map"): 500}
    scorer = RelevanceScorer("cataloguing maps", lambda field, term: frequencies[field, term], documents=1000)
    assert scorer.lexical(["cataloguing"], "") > 0.7 > 0.3 > scorer.lexical(["maps"], "")


def test_chinese_is_matched_by_its_character_pairs_inside_longer_runs():
    scorer = RelevanceScorer("虚拟主机 Apache")
    assert scorer.terms == ["apach", "虚拟", "拟主", "主机"]
    assert scorer.lexical(["在配置虚拟主机的时候，Apache 服务器"], "") == pytest.approx(1.0)
    assert scorer.lexical(["配置主机"], "") == pytest.approx(0.25)
    assert scorer.lexical(["服务器"], "Web 服务器配置笔记") == 0.0


def test_character_pairs_weigh_by_their_rarity_in_the_cjk_field():
    asked: list[tuple[str, str]] = []

    def frequency(field: str, term: str) -> int:
        asked.append((field, term))
        return 900 if term == "主机" else 3

    scorer = RelevanceScorer("虚拟主机", frequency, documents=1000)
    assert sorted(asked) == [("cjk", "主机"), ("cjk", "拟主"), ("cjk", "虚拟")]
    assert scorer.lexical(["虚拟"], "") > scorer.lexical(["主机"], "")


def test_a_query_of_function_words_only_is_matched_by_them():
    scorer = RelevanceScorer("what about it")
    assert scorer.terms == ["what", "about"]
    assert scorer.lexical(["what it was about"], "") == pytest.approx(1.0)


def test_the_cosine_is_read_between_unrelated_and_strong():
    assert RelevanceScorer.semantic(COSINE_UNRELATED) == 0.0
    assert RelevanceScorer.semantic(COSINE_STRONG) == 1.0
    assert RelevanceScorer.semantic((COSINE_UNRELATED + COSINE_STRONG) / 2) == pytest.approx(0.5)
    assert RelevanceScorer.combine(0.4, None) == 0.4


def test_a_french_or_german_form_covers_the_passage_that_holds_another_form_of_the_word():
    assert RelevanceScorer("créerons").lexical(["Nous allons créer un projet Astro."], "") == pytest.approx(1.0)
    assert RelevanceScorer("Erweiterungen").lexical(["Eine Erweiterung installieren"], "") == pytest.approx(1.0)
    assert RelevanceScorer("the cat").lexical(["the dog"], "") == 0.0, "English function words count in no reading"
    frequencies = {("body", "catalogu"): 5, ("body", "map"): 500}
    rare_first = RelevanceScorer("cataloguing maps", lambda field, term: frequencies[field, term], documents=1000)
    assert rare_first.lexical(["maps"], "") < 0.3, "each word weighs what its English reading weighs, in every reading"


def test_a_document_is_read_in_its_own_language_only():
    """The French stem of "notes" is "not": an English document's "not" is no match for it, as its snippet
    does not mark it, while a French document's passage is read in French too."""
    scorer = RelevanceScorer("notes")
    assert scorer.lexical(["This is not it."], "", readings_for("en")) == 0.0
    assert scorer.lexical(["This is not it."], "", readings_for("fr")) == 1.0
    french = RelevanceScorer("créerons")
    assert french.lexical(["Nous allons créer un projet Astro."], "", readings_for("fr")) == 1.0
    assert french.lexical(["Nous allons créer un projet Astro."], "", readings_for(None)) == 0.0


def test_a_passage_counts_the_words_the_index_reads_in_it():
    """Accents written decomposed (macOS), a word written against Chinese characters, a word a line
    break hyphenated: the keyword index finds them all (`for_keywords`), so the share must too."""
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "Les châtaignes de Besançon")
    assert RelevanceScorer("châtaignes Besançon").lexical([decomposed], "") == 1.0
    assert RelevanceScorer("postgresql").lexical(["我们使用PostgreSQL数据库"], "") == 1.0
    assert RelevanceScorer("Datenbankverwaltung").lexical(["die Daten-", "bankverwaltung ist"], "") == 1.0
