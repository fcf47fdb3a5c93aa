"""Fusion shapes compared offline: each query's candidates scored once by `search`'s ranking, fused again.

Usage:
    python bench/fusion_shapes.py [COLLECTION_DIR ...] --cache DIR

Without a folder it takes every collection in ../shared/ir; derived collections
(`long_requests.py`, `collection_shapes.py`) are given as folders. Each is indexed
and embedded as by `ir_eval.py` (`--cache DIR` keeps the index for later runs).
Every query goes once through `rank_documents` in hybrid mode, which records each
candidate document's keyword score (its best chunk's BM25) and vector score (its
best passage's cosine); the shapes below then fuse those same numbers again, so
a shape is judged on the candidates `search` would fuse, in seconds:

- `present`: the ranking's own fused order (the convex fusion of `fusion.py`);
- `from the Nth`: each side scaled from its N-th best candidate instead of its lowest;
- `cosine ^ p`: the min-max-scaled cosine raised to a power;
- `tilt N`: the weights moved towards the side whose best score stands further
  above its N-th best (a confidence measure of each side for this query);
- `z N`: standard scores over each side's N best candidates.

Prints nDCG@10 / bm25s for every shape and collection and the leave-one-collection-out
table (`evaluation.leave_one_out`: a derived collection is left out with its source).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linkly_ls.core.search import evaluation
from linkly_ls.core.search.fusion import keyword_weight_for
from linkly_ls.core.search.ranking import rank_documents

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"


@dataclass
class Candidates:
    """One query's candidate documents: keyword score (0: not a keyword candidate), cosine (nan: not a
    vector candidate), the ranking's own fused score, and the keyword side's weight for the query."""

    names: list[str]
    keyword: np.ndarray
    cosine: np.ndarray
    present: np.ndarray
    weight: float


#: a shape: the candidates of one query -> a fused score per candidate
Shape = Callable[[Candidates], np.ndarray]


def scaled(values: np.ndarray, present: np.ndarray, floor_rank: int | None) -> np.ndarray:
    """Scores scaled to 0..1 among the present candidates: from the lowest (None) or the `floor_rank`-th best."""
    ordered = np.sort(values[present])[::-1]
    if not len(ordered):
        return np.zeros(len(values))
    top = ordered[0]
    floor = ordered[-1] if floor_rank is None else ordered[min(floor_rank, len(ordered)) - 1]
    if top <= floor:
        return present.astype(float)
    return np.where(present, np.clip((np.nan_to_num(values, nan=floor) - floor) / (top - floor), 0.0, None), 0.0)


def convex(candidates: Candidates, keyword: np.ndarray, vector: np.ndarray, weight: float | None = None) -> np.ndarray:
    weight = candidates.weight if weight is None else weight
    return weight * keyword + (1 - weight) * vector


def sides(candidates: Candidates, keyword_floor: int | None = None, vector_floor: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    keyword = candidates.keyword
    if keyword_floor is None:
        keyword_part = keyword / (keyword.max() or 1.0)
    else:
        keyword_part = scaled(keyword, keyword > 0, keyword_floor)
    return keyword_part, scaled(candidates.cosine, ~np.isnan(candidates.cosine), vector_floor)


def from_nth(keyword_floor: int | None, vector_floor: int | None) -> Shape:
    return lambda candidates: convex(candidates, *sides(candidates, keyword_floor, vector_floor))


def cosine_power(power: float) -> Shape:
    def fuse(candidates: Candidates) -> np.ndarray:
        keyword, vector = sides(candidates)
        return convex(candidates, keyword, vector**power)

    return fuse


def tilted(rank: int) -> Shape:
    def fuse(candidates: Candidates) -> np.ndarray:
        keyword, vector = sides(candidates)
        gaps = []
        for part, present in ((keyword, candidates.keyword > 0), (vector, ~np.isnan(candidates.cosine))):
            ordered = np.sort(part[present])[::-1]
            gaps.append(ordered[0] - ordered[min(rank, len(ordered)) - 1] if len(ordered) else 0.0)
        keyword_share, vector_share = candidates.weight * gaps[0], (1 - candidates.weight) * gaps[1]
        total = keyword_share + vector_share
        return convex(candidates, keyword, vector, keyword_share / total if total > 0 else None)

    return fuse


def standard_scores(depth: int) -> Shape:
    def side(values: np.ndarray, present: np.ndarray) -> np.ndarray:
        best = np.sort(values[present])[::-1][:depth]
        if len(best) < 2:
            return np.zeros(len(values))
        mean, spread = best.mean(), best.std() or 1.0
        return np.where(present, (np.nan_to_num(values) - mean) / spread, (best.min() - mean) / spread)

    def fuse(candidates: Candidates) -> np.ndarray:
        keyword = side(candidates.keyword, candidates.keyword > 0)
        return convex(candidates, keyword, side(candidates.cosine, ~np.isnan(candidates.cosine)))

    return fuse


SHAPES: dict[str, Shape] = {
    "present": lambda candidates: candidates.present,
    **{f"from the {n}th": from_nth(None, n) for n in (20, 50, 100)},
    "both from the 100th": from_nth(100, 100),
    **{f"cosine ^ {p}": cosine_power(p) for p in (0.5, 1.5, 2.0, 3.0)},
    **{f"tilt {n}": tilted(n) for n in (5, 10, 20)},
    **{f"z {n}": standard_scores(n) for n in (20, 50, 100)},
}


def query_candidates(engine, collection: evaluation.Collection, names: dict[str, str]) -> list[tuple[dict, Candidates]]:
    by_doc_id = {record.doc_id: names.get(Path(record.path).stem, "") for record in engine.catalog.all_documents()}
    found = []
    for query in collection.queries:
        ranking = rank_documents(engine, query["text"], None, mode="hybrid")
        documents = ranking.documents
        found.append(
            (
                query,
                Candidates(
                    names=[by_doc_id.get(document.doc_id, "") for document in documents],
                    keyword=np.array([document.keyword_score or 0.0 for document in documents]),
                    cosine=np.array([np.nan if document.vector_score is None else document.vector_score for document in documents]),
                    present=np.array([document.fused_score for document in documents]),
                    weight=keyword_weight_for(query["text"]),
                ),
            )
        )
    return found


def shape_ratio(collection: evaluation.Collection, found: list[tuple[dict, Candidates]], shape: Shape) -> float:
    scores = []
    for query, candidates in found:
        skip = collection.excluded.get(query["id"], set())
        order = np.argsort(-shape(candidates), kind="stable") if candidates.names else []
        ranked = [candidates.names[i] for i in order if candidates.names[i] not in skip]
        scores.append(evaluation.ndcg_at(ranked, collection.qrels.get(query["id"], {})))
    return statistics.fmean(scores) / collection.reference["ndcg10"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", type=Path, nargs="*", help="collection folders (default: all of ../shared/ir)")
    parser.add_argument("--cache", type=Path, help="keep each collection's library and index in CACHE/<name>")
    args = parser.parse_args(argv)
    folders = args.collections or evaluation.collection_folders(SHARED_IR)
    ratios: dict[str, dict[str, float]] = {name: {} for name in SHAPES}
    with tempfile.TemporaryDirectory(prefix="linkly-fusion-") as scratch:
        for folder in folders:
            collection = evaluation.load_collection(folder)
            engine, names = evaluation.build_engine(collection, (args.cache or Path(scratch)) / collection.name)
            try:
                found = query_candidates(engine, collection, names)
            finally:
                engine.close()
            for name, shape in SHAPES.items():
                ratios[name][collection.name] = shape_ratio(collection, found, shape)
            print(f"{collection.name}: present {ratios['present'][collection.name]:.3f}", flush=True)
    print()
    print(evaluation.format_ratio_table(ratios, "shape", width=12))
    held_out = evaluation.leave_one_out(ratios)
    print()
    print(evaluation.format_leave_one_out(held_out, "fusion shape"))
    print(f"held-out mean {statistics.fmean(row.ratio for row in held_out):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
