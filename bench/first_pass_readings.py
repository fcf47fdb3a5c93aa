"""First-pass search quality by how the query is read, with leave-one-collection-out.

Usage:
    python bench/first_pass_readings.py [COLLECTION_DIR ...]

Without a folder it takes every collection in ../shared/ir. Each is indexed as
`ir_eval.py` indexes it, with `[embedding] first_pass` on, and given first-pass
vectors only (the model refines nothing), the state of a library in the seconds
after keyword indexing, with the bundled model loaded (the refining run loads it
beside the first pass). Every query then goes through the `search` tool: once in
keyword mode, and in hybrid mode for each candidate, the query's reading for
first-pass vectors (`first_pass_side.QUERY_READING`: its table vector, its
vector from the bundled model, or both joined) times the keyword weight of
first-pass documents (`FIRST_PASS_KEYWORD_WEIGHT`). It prints each candidate's
nDCG@10 as a multiple of keyword-only search, per collection, and the
leave-one-collection-out table: for each collection, the candidate with the
best mean on the others, scored on the one left out.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search import evaluation

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"
READINGS = ("table", "model", "joint")
KEYWORD_WEIGHTS = (0.7, 0.8, 0.9)
_SIDE = "linkly_ls.core.search.first_pass_side:"


def candidates() -> dict[str, dict[str, object]]:
    return {
        f"{reading}, {weight}": {_SIDE + "QUERY_READING": reading, _SIDE + "FIRST_PASS_KEYWORD_WEIGHT": weight}
        for reading in READINGS
        for weight in KEYWORD_WEIGHTS
    }


def first_pass_engine(folder: Path, work: Path) -> tuple[evaluation.Collection, dict[str, str], Engine]:
    """A collection written as a library under `work`, and an engine over it, indexed, every document
    given a first-pass vector and the model loaded (as the refining run loads it beside the first pass)."""
    collection = evaluation.load_collection(folder)
    library = work / collection.name / "corpus"
    names = evaluation.write_library(collection, library)
    config = Config(
        data_dir=work / collection.name / "index",
        libraries=[LibraryConfig(name="corpus", paths=[library])],
        raw={"embedding": {"first_pass": True}},
    )
    engine = Engine(config)
    try:
        engine.index()
        engine.vectors.run_first_pass()
        engine.vectors.provider.current()
    except BaseException:
        engine.close()
        raise
    return collection, names, engine


def collection_ratios(folder: Path, work: Path) -> tuple[str, dict[str, float]]:
    """candidate -> hybrid nDCG@10 / keyword-only nDCG@10 on one collection, first-pass vectors only."""
    collection, names, engine = first_pass_engine(folder, work)
    try:
        keyword = evaluation.evaluate(engine, collection, names, "keyword", recall=False).ndcg10
        ratios: dict[str, float] = {}
        for name, overrides in candidates().items():
            with evaluation.settings(overrides):
                scores = evaluation.evaluate(engine, collection, names, "hybrid", recall=False)
            ratios[name] = scores.ndcg10 / keyword
            print(f"  {collection.name:<10} {name:<12} x keyword-only {ratios[name]:.3f} "
                  f"(ranked as {','.join(sorted(scores.modes_seen))})", flush=True)
        return collection.name, ratios
    finally:
        engine.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", type=Path, nargs="*", help="collection folders (default: all of ../shared/ir)")
    args = parser.parse_args(argv)
    folders = args.collections or evaluation.collection_folders(SHARED_IR)
    if not folders:
        print(f"no collections given and none in {SHARED_IR}", file=sys.stderr)
        return 2
    by_candidate: dict[str, dict[str, float]] = {name: {} for name in candidates()}
    with tempfile.TemporaryDirectory(prefix="linkly-first-pass-") as work:
        for folder in folders:
            collection, ratios = collection_ratios(folder, Path(work))
            for name, ratio in ratios.items():
                by_candidate[name][collection] = ratio
    by_candidate = {name: dict(sorted(row.items())) for name, row in by_candidate.items()}
    print("\nnDCG@10 x keyword-only, first-pass vectors only, hybrid mode")
    print(evaluation.format_ratio_table(by_candidate, "reading, keyword weight"))
    held_out = evaluation.leave_one_out(by_candidate)
    print()
    print(evaluation.format_leave_one_out(held_out, "x keyword-only").replace("x bm25s", "x kw-only"))
    print(f"mean on the collection left out: {statistics.fmean(row.ratio for row in held_out):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
