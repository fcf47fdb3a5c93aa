"""How a query is read into index terms: each reading without function words."""

from __future__ import annotations

from linkly_ls.core.search import query_terms


def test_a_query_is_searched_by_its_english_words_without_function_words():
    assert query_terms.english_query_terms("I would like any papers about the cataloguing of maps") == [
        "like", "paper", "catalogu", "map"
    ]
    assert query_terms.english_query_terms("maps, maps and more maps") == ["map", "map", "map"]
    assert query_terms.english_query_terms("does John Doe") == ["john", "doe"]
    assert query_terms.english_query_terms("The Who") == ["who"]
    assert query_terms.english_query_terms("to be or not to be") == []


def test_a_query_matches_paths_by_its_words_without_stopwords():
    assert query_terms.path_query_terms("Notes on the Wars of 1914") == ["notes", "wars", "1914"]
    assert query_terms.path_query_terms("the who") == ["the", "who"]


def test_the_french_and_german_readings_leave_out_english_function_words_too():
    """An English query read as German matched a German guide by "and" alone."""
    assert query_terms.reading_terms("ownership and borrowing", "lk_de") == query_terms.reading_terms("ownership borrowing", "lk_de")
    assert "and" not in query_terms.reading_terms("the ownership of and", "lk_fr")
    assert query_terms.reading_terms("die Erweiterungen und das Paket", "lk_de") == ["erweiter", "pak"]
    assert query_terms.reading_terms("and", "lk_de") == ["and"], "a query of nothing else keeps its words"
    assert query_terms.is_function_word("The") and not query_terms.is_function_word("ownership")
    assert not query_terms.is_function_word("—")


def test_a_query_is_bounded_by_its_distinct_words_keeping_repeats():
    from linkly_ls.core.search.query_terms import bounded_query

    assert bounded_query("tide tide moon Tide sea", limit=2) == ("tide tide moon Tide ", 3)
    text = "harbour " * 5 + "sea"
    assert bounded_query(text, limit=2) == (text, 2)
    many = " ".join(f"w{number}x" for number in range(5000))
    kept, distinct = bounded_query(many)
    assert distinct == 5000 and len(kept.split()) == 1024


def test_a_query_of_english_function_words_alone_is_told_apart():
    from linkly_ls.core.search.query_terms import common_words_only

    assert common_words_only("The of AND the") == ["the", "of", "and"]
    assert common_words_only("the rust book") == [] and common_words_only("???") == [] and common_words_only("le la") == []
