"""Fusion by standard scores over a pool of both sides' best documents."""

from __future__ import annotations

import statistics

import pytest

from linkly_ls.core.search import zscore_fusion
from linkly_ls.core.search.ranked import RankedDocument


def doc(doc_id: str, keyword: float | None = None, cosine: float | None = None) -> RankedDocument:
    return RankedDocument(doc_id=doc_id, keyword_score=keyword, vector_score=cosine)


def no_exact(doc_ids: list[str]) -> dict[str, float]:
    raise AssertionError(f"no exact cosine needed, asked for {doc_ids}")


def test_fused_score_is_the_mean_of_the_two_standard_scores():
    documents = [doc("a", 10.0, 0.5), doc("b", 6.0, 0.75), doc("c", 2.0, 0.3)]
    pool = zscore_fusion.fuse(documents, set(), no_exact)
    assert pool == {"a", "b", "c"}
    k_mean, k_sd = statistics.fmean([10, 6, 2]), statistics.pstdev([10, 6, 2])
    v_mean, v_sd = statistics.fmean([0.5, 0.75, 0.3]), statistics.pstdev([0.5, 0.75, 0.3])
    for document in documents:
        expected = 0.5 * (document.keyword_score - k_mean) / k_sd + 0.5 * (document.vector_score - v_mean) / v_sd
        assert document.fused_score == pytest.approx(expected)
    assert documents[1].fused_score > documents[0].fused_score > documents[2].fused_score


def test_a_side_that_stands_out_decides_more_than_one_that_is_flat():
    # keyword side: one clear winner; vector side: all nearly equal, with "b" a hair ahead
    documents = [doc("a", 20.0, 0.600), doc("b", 5.0, 0.605), doc("c", 4.0, 0.600), doc("d", 4.5, 0.598)]
    zscore_fusion.fuse(documents, set(), no_exact)
    assert max(documents, key=lambda d: d.fused_score).doc_id == "a"


def test_pooled_documents_missing_a_side_get_bm25_zero_or_their_exact_cosine():
    asked: list[list[str]] = []

    def exact(doc_ids: list[str]) -> dict[str, float]:
        asked.append(sorted(doc_ids))
        return {"k": 0.65}

    documents = [doc("k", keyword=9.0), doc("v", cosine=0.8), doc("both", 3.0, 0.6)]
    zscore_fusion.fuse(documents, set(), exact)
    assert asked == [["k"]] and documents[0].vector_score == 0.65
    assert documents[1].keyword_score is None  # counted as 0 in its z-score, not written back
    keyword_z = {"k": 9.0, "v": 0.0, "both": 3.0}
    mean, spread = statistics.fmean(keyword_z.values()), statistics.pstdev(keyword_z.values())
    vector_z = {"k": 0.65, "v": 0.8, "both": 0.6}
    v_mean, v_spread = statistics.fmean(vector_z.values()), statistics.pstdev(vector_z.values())
    assert documents[1].fused_score == pytest.approx(0.5 * (0 - mean) / spread + 0.5 * (0.8 - v_mean) / v_spread)


def test_a_document_without_vectors_counts_its_keyword_score_on_both_sides():
    documents = [doc("new", keyword=8.0), doc("a", 4.0, 0.7), doc("b", 2.0, 0.5)]
    zscore_fusion.fuse(documents, {"new"}, no_exact)
    keyword = [8.0, 4.0, 2.0]
    z_new = (8.0 - statistics.fmean(keyword)) / statistics.pstdev(keyword)
    assert documents[0].fused_score == pytest.approx(z_new)


def test_only_each_sides_best_documents_enter_the_pool(monkeypatch):
    monkeypatch.setattr(zscore_fusion, "POOL_DOCUMENTS", 2)
    documents = [doc(str(n), keyword=10.0 - n, cosine=0.1 * n) for n in range(6)]
    pool = zscore_fusion.fuse(documents, set(), no_exact)
    assert pool == {"0", "1", "4", "5"}
    assert all(documents[n].fused_score == 0.0 for n in (2, 3))
