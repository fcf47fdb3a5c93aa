"""Documents with a passage holding every word of the query, first in a hybrid ranking."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search import whole_matches
from linkly_ls.core.search.keyword import ChunkHit
from linkly_ls.core.search.ranked import Passage, RankedDocument
from linkly_ls.core.tools import call_tool

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


class HoldingIndex:
    """Stands in for the keyword index's lookup of documents holding every word (tested in test_keyword)."""

    def __init__(self, holding: set[str]) -> None:
        self.holding, self.asked = holding, []

    def passages_with_every_word(self, query: str, doc_ids: list[str], common_path_terms: frozenset[str]) -> dict[str, ChunkHit]:
        self.asked.append(list(doc_ids))
        return {doc_id: ChunkHit(doc_id, 3, 7, 9, 1.0) for doc_id in self.holding & set(doc_ids)}


def ranked(*documents: tuple[str, float | None]) -> list[RankedDocument]:
    return [RankedDocument(doc_id, fused_score=1.0 - place / 10, keyword_score=score) for place, (doc_id, score) in enumerate(documents)]


def order(documents: list[RankedDocument]) -> list[str]:
    return [document.doc_id for document in documents]


LIST = [("near", None), ("partial", 2.0), ("strong", 9.0), ("whole", 5.0), ("other", None), ("second", 1.0)]


@pytest.mark.parametrize(
    ("place", "expected"),
    [
        ("all", ["whole", "second", "near", "partial", "strong", "other"]),
        ("weaker", ["near", "partial", "strong", "whole", "second", "other"]),
        ("none", ["whole", "second", "near", "partial", "strong", "other"]),
    ],
)
def test_documents_holding_every_word_move_up_as_the_setting_says(monkeypatch, place, expected):
    monkeypatch.setattr(whole_matches, "WHOLE_MATCHES_ABOVE", place)
    documents = ranked(*LIST)
    moved = whole_matches.whole_matches_first(HoldingIndex({"whole", "second"}), "larkspur lane", documents, frozenset())
    assert order(moved) == expected
    assert {d.doc_id for d in moved if d.holds_every_word} == {"whole", "second"}
    assert all(d.holds_every_word is False for d in moved if d.doc_id not in {"whole", "second"})


def test_a_document_holding_every_word_is_shown_by_the_passage_holding_them(monkeypatch):
    documents = ranked(("whole", 5.0))
    documents[0].keyword_passage, documents[0].further_keyword_passages = Passage(1, 2), [Passage(7, 9), Passage(20, 22)]
    moved = whole_matches.whole_matches_first(HoldingIndex({"whole"}), "q", documents, frozenset())
    assert moved[0].keyword_passage == Passage(7, 9)
    assert moved[0].further_keyword_passages == [Passage(1, 2), Passage(20, 22)]


def test_the_none_setting_looks_up_only_documents_below_the_first_holding_no_word(monkeypatch):
    monkeypatch.setattr(whole_matches, "WHOLE_MATCHES_ABOVE", "none")
    index = HoldingIndex({"top", "whole"})
    moved = whole_matches.whole_matches_first(index, "q", ranked(("top", 3.0), ("near", None), ("whole", 1.0)), frozenset())
    assert order(moved) == ["top", "whole", "near"] and index.asked == [["whole"]]
    assert [d.holds_every_word for d in moved] == [None, True, False]


def test_nothing_moves_when_no_document_holds_every_word_or_the_rule_is_off(monkeypatch):
    documents = ranked(*LIST)
    assert order(whole_matches.whole_matches_first(HoldingIndex(set()), "q", documents, frozenset())) == order(documents)
    monkeypatch.setattr(whole_matches, "WHOLE_MATCHES_FIRST", False)
    index = HoldingIndex({"whole"})
    assert order(whole_matches.whole_matches_first(index, "q", documents, frozenset())) == order(documents) and not index.asked


def test_an_unknown_setting_is_an_error(monkeypatch):
    monkeypatch.setattr(whole_matches, "WHOLE_MATCHES_ABOVE", "some")
    with pytest.raises(ValueError, match="WHOLE_MATCHES_ABOVE"):
        whole_matches.whole_matches_first(HoldingIndex(set()), "q", ranked(*LIST), frozenset())


CHAT = """[03/02/24, 21:04] Maria: did you get the scans I sent?
[03/02/24, 21:05] Me: yes, the scoring sheets came through, thanks
[03/02/24, 21:06] Maria: the second page is the one they changed
[03/02/24, 21:09] Me: can we meet on Thursday to go over them?
[03/02/24, 21:11] Maria: not at my place, they know where I live
[03/02/24, 21:12] Maria: I'm staying at my sister's house for now, 14 Larkspur Lane
[03/02/24, 21:13] Me: ok, I'll come by at six
[03/02/24, 21:15] Maria: bring the printouts of the contract, the port authority one
"""
GARDEN = """# Cottage garden plan

Tall spires of larkspur and delphinium at the back of the border, foxgloves and hollyhocks
in front, lavender along the path. Sow larkspur in autumn where it is to flower; it does not
like to be moved. Cut the flower spikes for drying when the lower blooms open.
"""
WALKS = """# Walks near the cottage

The old lane climbs between high hedgerows full of wildflowers, primroses in spring and
honeysuckle in summer. Past the farm the lane narrows to a green track that leads to the
common, where the views open over the valley and the village gardens below.
"""

SUPPLY = """# Supply Agreement

## Parties

This Supply Agreement is made between Harbour Foods Ltd (the supplier) and Tidewater Stores (the buyer).
The supply of goods under this Supply Agreement starts on signature. Supply volumes, supply dates and
supply locations are set out in Schedule 1 to this Supply Agreement; the supplier will supply the goods
and the buyer will take the supply. Each supply is a separate contract on the terms of this Supply Agreement.

## Payment

The buyer pays each invoice within thirty days of its date by bank transfer to the account the seller
names in writing. Late payment carries interest at four per cent above base rate from the day after the
due date until paid. Prices are fixed for the first year and then reviewed each January against the
published index, with sixty days' written warning of any change before it takes effect.

## Ending

Either party may end this contract by ninety days' written termination notice, served by hand or by
recorded delivery at the address for service above; a termination for breach takes effect at once.
"""
SEEDS = """# Seeds to order

Larkspur: giant imperial larkspur, dwarf rocket larkspur, larkspur 'Blue Bell'.
"""


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Engine:
    """A reporter's notes and a chat, with the fixtures' reference texts, embedded with the bundled model."""
    root = tmp_path_factory.mktemp("whole")
    library = root / "claire" / "library"
    shutil.copytree(FIXTURES / "reference", library / "reference")
    for path in (library / "reference").rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    for name, text in (("chat-with-maria.txt", CHAT), ("garden.md", GARDEN), ("walks.md", WALKS), ("seeds.md", SEEDS), ("supply.md", SUPPLY)):
        (library / name).write_text(text, encoding="utf-8")
    engine = Engine(Config(data_dir=root / "data", libraries=[LibraryConfig(name="notes", paths=[library])]))
    engine.index()
    engine.vectors.run_until_complete()
    yield engine
    engine.close()


def top(engine: Engine, query: str, mode: str = "hybrid") -> list[str]:
    result = call_tool(engine, "search", {"query": query, "limit": 3, "explain": True, "mode": mode})
    assert result.mode == mode
    return [Path(hit.path).name for hit in result.results]


@pytest.mark.slow
def test_an_address_ranks_the_one_document_holding_it_above_those_near_its_words(archive, monkeypatch):
    assert top(archive, "Larkspur Lane")[0] == "chat-with-maria.txt"
    monkeypatch.setattr(whole_matches, "WHOLE_MATCHES_FIRST", False)
    assert top(archive, "Larkspur Lane")[0] != "chat-with-maria.txt"  # the fusion alone put the garden first


@pytest.mark.slow
def test_explain_says_which_documents_hold_every_word(archive):
    result = call_tool(archive, "search", {"query": "Larkspur Lane", "limit": 5, "explain": True}).to_json()
    held = {Path(hit["path"]).name: hit["explain"]["holds_every_word"] for hit in result["results"]}
    assert held["chat-with-maria.txt"] is True and held["garden.md"] is False and held["walks.md"] is False


def test_in_keyword_mode_a_passage_holding_every_word_ranks_above_one_repeating_a_word(archive, monkeypatch):
    assert top(archive, "Larkspur Lane", "keyword")[0] == "chat-with-maria.txt"
    monkeypatch.setattr(whole_matches, "WHOLE_MATCHES_MODES", ("hybrid",))
    assert top(archive, "Larkspur Lane", "keyword")[0] == "seeds.md"  # BM25 alone: the word four times


def test_vector_mode_is_left_as_it_ranks(archive):
    result = call_tool(archive, "search", {"query": "Larkspur Lane", "mode": "vector", "explain": True}).to_json()
    assert all(hit["explain"]["holds_every_word"] is None for hit in result["results"])


def test_the_folders_a_library_lives_in_make_no_document_hold_a_word(archive):
    result = call_tool(archive, "search", {"query": "claire lane", "explain": True}).to_json()
    assert result["results"] and not any(hit["explain"]["holds_every_word"] for hit in result["results"])
    held = call_tool(archive, "search", {"query": "chat lane", "explain": True}).to_json()  # its own file name
    assert [Path(hit["path"]).name for hit in held["results"] if hit["explain"]["holds_every_word"]] == ["chat-with-maria.txt"]


def test_the_snippet_of_a_whole_match_is_the_passage_holding_every_word(archive):
    result = call_tool(archive, "search", {"query": "supply agreement termination", "limit": 1, "mode": "keyword"}).to_json()
    hit = result["results"][0]
    assert Path(hit["path"]).name == "supply.md" and "**termination**" in hit["snippet"]
