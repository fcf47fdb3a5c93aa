"""`suggestion`: the spelling the index knows one slip away from a word it does not."""

from __future__ import annotations

from linkly_ls.core.search.spelling import _one_edit, suggestion


class Frequencies:
    """Document frequencies of a few English stems, as the keyword index answers them."""

    def __init__(self, stems: dict[str, int]) -> None:
        self.stems = stems

    def doc_freq(self, field: str, term: str) -> int:
        return self.stems.get(term, 0) if field == "body" else 0


def test_each_slip_of_typing_finds_the_known_word():
    index = Frequencies({"borrow": 3, "refer": 5, "debian": 9, "handbook": 2, "firewal": 1, "receipt": 4})
    assert suggestion(index, "borowing") == "borrowing"  # a letter left out
    assert suggestion(index, "debain") == "debian"  # two letters swapped
    assert suggestion(index, "reciept") == "receipt"
    assert suggestion(index, "handbokk") == "handbook"  # a letter changed
    assert suggestion(index, "zzzzqqq") is None


def test_short_words_and_non_words_get_no_guess():
    index = Frequencies({"cat": 3, "car": 2})
    assert suggestion(index, "cst") is None
    assert suggestion(index, "abc123") is None


def test_the_candidates_are_every_word_one_edit_away():
    candidates = set(_one_edit("ab"))
    assert {"a", "b", "ba", "xb", "abx", "xab", "axb"} <= candidates and "ab" not in candidates


class FieldFrequencies:
    """Document frequencies of terms by field."""

    def __init__(self, terms: dict[tuple[str, str], int]) -> None:
        self.terms = terms

    def doc_freq(self, field: str, term: str) -> int:
        return self.terms.get((field, term), 0)


def test_a_file_name_word_is_a_known_spelling():
    assert suggestion(FieldFrequencies({("path", "zettelkasten"): 2}), "zettelkastne") == "zettelkasten"


def test_a_german_stem_shared_by_chance_is_no_fix():
    """`dernia` is no word a German text holds; its German stem only collides with one that is."""
    index = FieldFrequencies({("body_de", "derni"): 7, ("body", "hernia"): 1})
    assert suggestion(index, "hernai") == "hernia"
    assert suggestion(FieldFrequencies({("body_de", "derni"): 7}), "hernia") is None
