"""The keyword side's candidates: enough documents even where a few long ones match throughout."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.search import ranked
from linkly_ls.core.search.chunking import Chunk
from linkly_ls.core.search.keyword import IndexedChunks, KeywordIndex
from linkly_ls.core.search.ranked import keyword_candidates, keyword_documents


def document(doc_id: str, chunk_texts: list[str]) -> IndexedChunks:
    chunks = [Chunk(number, number + 1, number + 1, "", text) for number, text in enumerate(chunk_texts)]
    return IndexedChunks(doc_id, doc_id.title(), f"/library/{doc_id}.txt", "en", chunks)


@pytest.fixture
def index(tmp_path: Path) -> KeywordIndex:
    """Two manuals that name the distribution in every one of their 12 chunks (the manual more often
    than the guide), and four short notes that name it once among other words."""
    keyword = KeywordIndex(tmp_path / "keyword")
    manuals = [
        document("manual", [f"debian packages debian mirrors debian section {n}" for n in range(12)]),
        document("guide", [f"debian packages and debian mirrors, section {n}" for n in range(12)]),
    ]
    notes = [document(f"note{n}", [f"a note on debian and on {n} other things worth writing down today"]) for n in range(4)]
    keyword.replace([*manuals, *notes], [])
    return keyword


def test_documents_past_the_chunks_of_long_ones_are_gathered(index, monkeypatch):
    monkeypatch.setattr(ranked, "KEYWORD_CANDIDATE_DOCUMENTS", 6)
    hits = keyword_candidates(index, "debian", 8, None)
    assert set(keyword_documents(hits)) == {"manual", "guide", "note0", "note1", "note2", "note3"}
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True), "each round scores at most the lowest of the one before"


def test_one_round_alone_holds_only_the_manual(index, monkeypatch):
    monkeypatch.setattr(ranked, "KEYWORD_FURTHER_ROUNDS", 0)
    assert set(keyword_documents(keyword_candidates(index, "debian", 8, None))) == {"manual"}


def test_rounds_stop_once_enough_documents_are_found(index, monkeypatch):
    monkeypatch.setattr(ranked, "KEYWORD_CANDIDATE_DOCUMENTS", 2)
    hits = keyword_candidates(index, "debian", 8, None)
    assert [hit.doc_id for hit in hits] == ["manual"] * 8 + ["guide"] * 8


def test_a_round_that_comes_back_short_is_the_last(index, monkeypatch):
    monkeypatch.setattr(ranked, "KEYWORD_CANDIDATE_DOCUMENTS", 100)
    hits = keyword_candidates(index, "debian", 8, None)
    assert [hit.doc_id for hit in hits][:16] == ["manual"] * 8 + ["guide"] * 8
    assert sorted(hit.doc_id for hit in hits[16:]) == ["note0", "note1", "note2", "note3"], "three rounds, the last short"


def test_further_rounds_keep_within_the_documents_searched(index, monkeypatch):
    monkeypatch.setattr(ranked, "KEYWORD_CANDIDATE_DOCUMENTS", 6)
    hits = keyword_candidates(index, "debian", 8, ["manual", "guide", "note2"])
    assert set(keyword_documents(hits)) == {"manual", "guide", "note2"}
