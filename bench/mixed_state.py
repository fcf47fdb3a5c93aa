"""Search quality while the model refines: some documents ranked by refined vectors, the rest by first-pass ones.

Usage:
    python bench/mixed_state.py                                   # every collection of ../shared/ir
    python bench/mixed_state.py ../shared/ir/cranfield ../shared/ir/time --points 0.1,0.3,0.6

Each collection is indexed as `ir_eval.py` indexes it, with `[embedding] first_pass` on, and given
first-pass vectors; then the model refines its documents in linkly's own order (newest day first,
then smallest), stopped at each point (a share of the documents; a round of 64 documents is the
step) and at the end. At each point every query goes through the `search` tool in hybrid mode
(every document placed by its first-pass vectors, the refined ones reordered among their places by
the model's, `search/mixed_state.py`), nDCG@10 as a multiple of keyword-only search, with the
searches' wall time. Also printed: first-pass vectors alone.
On a large library the model refines for hours, so this is the state search is in most of that time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from first_pass_readings import first_pass_engine  # the bench folder is the script's folder, first on sys.path
from linkly_ls.core.search import evaluation
from linkly_ls.core.tools import call_tool

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"


class _Enough(Exception):
    """The refining run reached the point to measure."""


def measure(folder: Path, work: Path, points: list[float]) -> list[tuple[str, float, float, float]]:
    """(collection, share of words refined, x keyword-only, first-pass vectors alone x keyword-only) per point."""
    collection, names, engine = first_pass_engine(folder, work)
    rows = []
    try:
        total = engine.catalog.count()
        keyword = evaluation.evaluate(engine, collection, names, "keyword", recall=False).ndcg10
        alone = evaluation.evaluate(engine, collection, names, "hybrid", recall=False)
        first_pass = alone.ndcg10
        print(f"{collection.name:<10} first-pass vectors alone: {first_pass / keyword:.3f} x keyword-only"
              f"{_latency(alone)}", flush=True)
        refined = 0
        for point in points:
            target, already = max(int(total * point), 1), refined

            def stop_at_target(done: int, _total: int, _path: str) -> None:
                if done >= target - already:
                    raise _Enough

            try:
                engine.vectors.run_until_complete(progress=stop_at_target)
            except _Enough:
                pass
            share = call_tool(engine, "list_libraries", {}).to_json()["libraries"][0]["vector_coverage"]
            model = engine.vectors.provider.current()
            refined = len(engine.vectors.index_for(model).documents_with_vectors(engine.catalog.doc_ids()))
            scores = evaluation.evaluate(engine, collection, names, "hybrid", recall=False)
            now = scores.ndcg10 / keyword
            rows.append((collection.name, share, now, first_pass / keyword))
            print(f"{collection.name:<10} {refined}/{total} documents, {share:.0%} of the words refined: "
                  f"{now:.3f} x keyword-only{_latency(scores)}", flush=True)
    finally:
        engine.close()
    return rows


def _latency(scores: evaluation.ModeScores) -> str:
    return f"  (search p50 / p95 {scores.search_ms_p50:.1f} / {scores.search_ms_p95:.1f} ms)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", type=Path, nargs="*", help="collection folders (default: all of ../shared/ir)")
    parser.add_argument("--points", default="0.13,0.35,0.64", help="shares of the documents to stop at, comma-separated")
    args = parser.parse_args(argv)
    folders = args.collections or evaluation.collection_folders(SHARED_IR)
    if not folders:
        print(f"no collections given and none in {SHARED_IR}", file=sys.stderr)
        return 2
    points = [float(point) for point in args.points.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="linkly-mixed-state-") as work:
        for folder in folders:
            rows += measure(folder, Path(work), points)
    mixed = [row for row in rows if row[1] < 1.0]
    if mixed:
        below = sum(1 for row in mixed if row[2] < row[3])
        print(f"\nwhile partly refined ({len(mixed)} points): mean {statistics.fmean(r[2] for r in mixed):.3f} x keyword-only, "
              f"lowest {min(r[2] for r in mixed):.3f}; below first-pass vectors alone at {below} points")
    return 0


if __name__ == "__main__":
    sys.exit(main())
