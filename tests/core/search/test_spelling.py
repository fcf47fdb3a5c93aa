"""`suggestion`: the spelling the index knows one slip away from a word it does not."""

from __future__ import annotations

from linkly_ls.core.search.spelling import _ENGLISH_STEMS, _one_edit, suggestion, written_form


def stem(word: str) -> str:
    return _ENGLISH_STEMS.analyze(word)[0]


class Passages:
    """A keyword index in small: (field, term) -> the texts of the passages holding it."""

    def __init__(self, held: dict[tuple[str, str], list[str]]) -> None:
        self.held = held

    def doc_freq(self, field: str, term: str) -> int:
        return len(self.held.get((field, term), []))

    def passages_holding(self, field: str, term: str, limit: int) -> list[tuple[str, int, int]]:
        return [(f"{field}\t{term}", number, number) for number in range(min(limit, self.doc_freq(field, term)))]

    def text_of(self, doc_id: str, first: int, last: int) -> str:
        field, term = doc_id.split("\t")
        return self.held[field, term][first]


def body(*texts_by_word: tuple[str, int]) -> Passages:
    """Each word held in the text field by `count` passages that write it."""
    return Passages({("body", stem(word)): [f"Some text with {word} in it."] * count for word, count in texts_by_word})


def suggest(index: Passages, word: str) -> str | None:
    return suggestion(index, word, index.text_of)


def test_each_slip_of_typing_finds_the_known_word():
    index = body(("borrowing", 3), ("refer", 5), ("debian", 9), ("handbook", 2), ("receipt", 4))
    assert suggest(index, "borowing") == "borrowing"  # a letter left out
    assert suggest(index, "debain") == "debian"  # two letters swapped
    assert suggest(index, "reciept") == "receipt"
    assert suggest(index, "handbokk") == "handbook"  # a letter changed
    assert suggest(index, "zzzzqqq") is None


def test_short_words_and_non_words_get_no_guess():
    index = body(("cat", 3), ("car", 2))
    assert suggest(index, "cst") is None
    assert suggest(index, "abc123") is None


def test_a_neighbour_whose_stem_is_held_but_that_no_document_writes_is_passed_over():
    """`byrowing` reads as `byrow`, which R code writes often; `borrowing`, written less often, is meant."""
    index = Passages({
        ("body", stem("byrowing")): ["matrix(x, byrow = TRUE)"] * 20,
        ("body", stem("borrowing")): ["Borrowing a reference"] * 16,
    })
    assert suggest(index, "borowing") == "borrowing"
    assert suggest(Passages({("body", stem("byrowing")): ["byrow = TRUE"] * 20}), "borowing") is None


def test_a_word_s_accents_come_back_as_a_document_writes_it():
    index = Passages({("body", stem("bibliotheque")): ["La bibliothèque municipale"] * 2})
    assert suggest(index, "bibliothque") == "bibliothèque"
    assert written_form("sécuré", "A secure channel") is None, "a neighbour's own accents must be written"
    assert written_form("websockets", "The WebSocket handshake") == "websockets", "a plural of a written word"


def test_a_file_name_word_is_a_known_spelling():
    index = Passages({("path", "zettelkasten"): ["Notes\n/home/me/notes/zettelkasten.md\n"] * 2})
    assert suggest(index, "zettelkastne") == "zettelkasten"


def test_a_german_stem_shared_by_chance_is_no_fix():
    """`dernia` is no word a German text holds; its German stem only collides with one that is."""
    index = Passages({("body_de", "derni"): ["Die Dernier-Linie"] * 7, ("body", stem("hernia")): ["A hernia"]})
    assert suggest(index, "hernai") == "hernia"
    assert suggest(Passages({("body_de", "derni"): ["Die Dernier-Linie"] * 7}), "hernia") is None


def test_the_candidates_are_every_word_one_edit_away():
    candidates = set(_one_edit("ab"))
    assert {"a", "b", "ba", "xb", "abx", "xab", "axb"} <= candidates and "ab" not in candidates
