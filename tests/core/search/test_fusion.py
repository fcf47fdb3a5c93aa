"""The fusion of the two document rankings: convex (the default) and reciprocal-rank, and the keyword
side's weight for a query."""

from __future__ import annotations

import pytest

from linkly_ls.core.search import fusion
from linkly_ls.core.search.first_pass_side import FIRST_PASS
from linkly_ls.core.search.ranked import RankedDocument


def document(
    doc_id: str, keyword: float | None = None, cosine: float | None = None, rank: int | None = None
) -> RankedDocument:
    vector_rank = rank if cosine is not None else None
    return RankedDocument(doc_id=doc_id, keyword_score=keyword, keyword_rank=rank, vector_score=cosine, vector_rank=vector_rank)


def test_convex_fusion_halves_bm25_over_the_best_and_the_min_max_scaled_cosine():
    documents = [document("a", 10.0, 0.8), document("b", 5.0, 0.6), document("c", None, 0.4)]
    fusion._fuse_convex(documents, set(), 0.5)
    scores = {d.doc_id: d.fused_score for d in documents}
    assert scores == pytest.approx({"a": 1.0, "b": 0.5 * 0.5 + 0.5 * 0.5, "c": 0.0})


def test_a_document_without_vectors_counts_its_keywords_on_the_vector_side_too():
    """A library half embedded: a document not embedded yet is neither favoured nor buried."""
    documents = [document("a", 10.0, 0.8), document("b", 4.0, 0.4), document("pending", 6.0)]
    fusion._fuse_convex(documents, {"pending"}, 0.5)
    scores = {d.doc_id: d.fused_score for d in documents}
    assert scores["pending"] == pytest.approx(0.6)
    fusion._fuse_convex(documents, set(), 0.5)
    assert {d.doc_id: d.fused_score for d in documents}["pending"] == pytest.approx(0.3), "embedded, but not found by meaning"


def test_a_first_pass_document_takes_the_first_pass_keyword_weight():
    refined = [document("a", 5.0, 0.8), document("a-low", 0.0, 0.2)]
    first_pass = [document("b", 5.0, 0.8), document("b-low", 0.0, 0.2)]
    for each in first_pass:
        each.vector_kind = FIRST_PASS
    fusion._fuse_convex([*refined, *first_pass], set(), 0.5, keyword_top=10.0)
    weight = fusion.first_pass_keyword_weight(0.5)
    assert weight > 0.5, "first-pass vectors weigh less than the model's"
    assert refined[0].fused_score == pytest.approx(0.5 * 0.5 + 0.5)
    assert first_pass[0].fused_score == pytest.approx(weight * 0.5 + (1 - weight))


def test_rrf_sums_reciprocal_ranks():
    documents = [document("a", 3.0, 0.9, rank=1), document("b", 2.0, None, rank=2)]
    fusion._fuse_rrf(documents, {"b"})
    assert documents[0].fused_score == pytest.approx(2 / (fusion.RRF_K + 1))
    assert documents[1].fused_score == pytest.approx(2 / (fusion.RRF_K + 2)), "no vectors yet: its keyword rank twice"


def test_a_request_of_three_sentences_weighs_the_keyword_side_more():
    short = "heat transfer in laminar boundary layers"
    two = "I study heat transfer. Laminar boundary layers are my subject."
    three = "I study heat transfer. Laminar boundary layers are my subject. Please send me papers on them."
    assert fusion.keyword_weight_for(short) == fusion.CONVEX_KEYWORD_WEIGHT
    assert fusion.keyword_weight_for(two) == fusion.CONVEX_KEYWORD_WEIGHT
    assert fusion.keyword_weight_for(three) == fusion.LONG_QUERY_KEYWORD_WEIGHT > fusion.CONVEX_KEYWORD_WEIGHT
    long_sentence = " ".join(["word"] * 60)
    assert fusion.keyword_weight_for(long_sentence) == fusion.CONVEX_KEYWORD_WEIGHT
    for cut_but_short in ("papers by J. R. R. Tolkien", "Dr. Smith vs. Jones; U.S. vs. U.K. law", "What? Why? How?"):
        assert fusion.keyword_weight_for(cut_but_short) == fusion.CONVEX_KEYWORD_WEIGHT


def test_equal_fused_scores_put_the_document_holding_the_query_words_first():
    """`Nathaniel Graham`: the paper naming him (keywords alone, 0.5) tied the top vector hit naming neither
    (its vector alone, 0.5), and the tie went by document id."""
    documents = {
        "0000aaaa0000": document("0000aaaa0000", None, 0.31, rank=1),  # the nearest in meaning, no query word
        "ffffbbbbffff": document("ffffbbbbffff", 9.0, None, rank=1),  # both names, no chunk among the nearest
        "1111cccc1111": document("1111cccc1111", None, 0.28, rank=2),
    }
    ranked = fusion.fused(None, None, documents, "convex", 0.5, having_vectors=set(documents))  # type: ignore[arg-type]
    assert [d.doc_id for d in ranked][:2] == ["ffffbbbbffff", "0000aaaa0000"]
    assert ranked[0].fused_score == pytest.approx(ranked[1].fused_score)
