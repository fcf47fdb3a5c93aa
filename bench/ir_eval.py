"""Search quality on the labelled IR collections: keyword, vector and hybrid beside BM25, and leave-one-out.

Usage:
    python bench/ir_eval.py [COLLECTION_DIR ...] [--cache DIR] [--modes keyword,vector,hybrid]
                            [--no-recall] [--loo] [--json FILE]

Without a folder it takes every collection in ../shared/ir (folders with
docs.jsonl, queries.jsonl and qrels.tsv; see their README). Each is indexed as
`.txt` files through the normal indexing path, fully embedded, and every query
goes through the `search` tool with its `mode` argument
(`linkly_ls.core.search.evaluation` has the details). `--cache DIR` keeps each
collection's library and index in DIR/<name> so a later run reuses them (vectors
are keyed by passage text, so a re-index with other keyword settings keeps them).

`--loo` also scores the candidate settings in `evaluation.CANDIDATES` and prints
the leave-one-collection-out table: for each collection, the candidate chosen on
all the others and its ratio to BM25 on the one left out.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from linkly_ls.core.search import evaluation
from linkly_ls.core.search.evaluation import MODES

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"


def summary_table(rows: dict[str, dict[str, float]], reference: dict[str, float], modes: list[str]) -> str:
    lines = [f"{'collection':<12} {'bm25s':>7} " + " ".join(f"{mode:>16}" for mode in modes)]
    for name, scores in rows.items():
        cells = [f"{scores[mode]:.4f} ({scores[mode] / reference[name]:.3f}x)" for mode in modes]
        lines.append(f"{name:<12} {reference[name]:>7.4f} " + " ".join(f"{cell:>16}" for cell in cells))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", type=Path, nargs="*", help="collection folders (default: all of ../shared/ir)")
    parser.add_argument("--cache", type=Path, help="keep each collection's library and index in CACHE/<name>")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: keyword,vector,hybrid")
    parser.add_argument("--no-recall", dest="recall", action="store_false", help="skip Recall@100 (faster)")
    parser.add_argument("--loo", action="store_true", help="score the candidate settings, leave one collection out")
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args(argv)
    folders = args.collections or evaluation.collection_folders(SHARED_IR)
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    summary: dict[str, dict[str, float]] = {}
    reference: dict[str, float] = {}
    candidates: dict[str, dict[str, dict[str, float]]] = {mode: {} for mode in ("keyword", "hybrid")}
    figures: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="linkly-ir-") as scratch:
        for folder in folders:
            collection = evaluation.load_collection(folder)
            data_dir = (args.cache or Path(scratch)) / collection.name
            engine, names = evaluation.build_engine(collection, data_dir)
            try:
                scores = [evaluation.evaluate(engine, collection, names, mode, recall=args.recall) for mode in modes]
                print(evaluation.format_scores(collection, scores), flush=True)
                print(flush=True)
                summary[collection.name] = {score.mode: score.ndcg10 for score in scores}
                reference[collection.name] = collection.reference.get("ndcg10", float("nan"))
                figures[collection.name] = [
                    {**score.__dict__, "modes_seen": sorted(score.modes_seen)} for score in scores
                ]
                if args.loo:
                    for mode in candidates:
                        for name, ratio in evaluation.candidate_ratios(engine, collection, names, mode).items():
                            candidates[mode].setdefault(name, {})[collection.name] = ratio
            finally:
                engine.close()
    print("nDCG@10 (x bm25s)")
    print(summary_table(summary, reference, modes))
    if args.loo:
        for mode, ratios in candidates.items():
            print()
            print(f"{mode} candidates, nDCG@10 x bm25s:")
            names = sorted({name for row in ratios.values() for name in row})
            print(f"{'candidate':<24} " + " ".join(f"{name:>10}" for name in names))
            for candidate, row in ratios.items():
                print(f"{candidate:<24} " + " ".join(f"{row[name]:>10.3f}" for name in names))
            print(evaluation.format_leave_one_out(evaluation.leave_one_out(ratios), mode))
        figures["candidates"] = candidates
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=sorted), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
