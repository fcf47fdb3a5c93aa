"""The quality harness on ADI (82 documents): metrics are right, and search stays above a floor."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
ADI = REPO.parent / "shared" / "ir" / "adi"


def load_harness():
    spec = importlib.util.spec_from_file_location("ir_eval", REPO / "bench" / "ir_eval.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["ir_eval"] = module
    spec.loader.exec_module(module)
    return module


ir_eval = load_harness()


def test_metrics_follow_trec_eval_definitions():
    grades = {"a": 2, "b": 1, "c": 1}
    assert ir_eval.ndcg_at(["a", "b", "c"], grades) == pytest.approx(1.0)
    # one relevant document (grade 1) at rank 2 of an ideal [2, 1, 1]
    ideal = 2 + 1 / 1.5849625 + 1 / 2
    assert ir_eval.ndcg_at(["x", "b"], grades) == pytest.approx((1 / 1.5849625) / ideal)
    assert ir_eval.mrr_at(["x", "y", "c"], grades) == pytest.approx(1 / 3)
    assert ir_eval.mrr_at([], grades) == 0.0
    assert ir_eval.recall_at(["a", "x", "c"], grades) == pytest.approx(2 / 3)


def test_reference_figures_are_read_from_the_collections_readme():
    if not ADI.exists():
        pytest.skip("the IR collections are not beside the repository")
    assert ir_eval.reference_figures(ADI) == {"ndcg10": 0.4832, "mrr10": 0.645, "recall100": 0.9103}


def test_adi_keyword_and_hybrid_quality(tmp_path):
    if not ADI.exists():
        pytest.skip("the IR collections are not beside the repository")
    collection = ir_eval.load_collection(ADI)
    engine, names = ir_eval.build_engine(collection, tmp_path, progress=False)
    try:
        assert engine.vectors.coverage() == {"corpus": 1.0}
        keyword = ir_eval.evaluate(engine, collection, names, "keyword")
        hybrid = ir_eval.evaluate(engine, collection, names, "hybrid")
    finally:
        engine.close()
    assert keyword.modes_seen == {"keyword"} and hybrid.modes_seen == {"hybrid"}
    assert keyword.ndcg10 >= 0.45 and keyword.ndcg10 >= 0.98 * collection.reference["ndcg10"]
    assert keyword.recall100 >= 0.85
    assert hybrid.ndcg10 >= keyword.ndcg10 and hybrid.ndcg10 >= 1.05 * collection.reference["ndcg10"]
    assert hybrid.recall100 >= keyword.recall100
    print(ir_eval.format_table(collection, [keyword, hybrid]))
