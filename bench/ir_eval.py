"""Search quality on a labelled IR collection: nDCG@10, MRR@10 and Recall@100 per mode.

Usage:
    python bench/ir_eval.py /path/to/ir/adi [--modes keyword,vector,hybrid] [--data-dir DIR]

The collection folder holds docs.jsonl, queries.jsonl, qrels.tsv and, for
Cranfield, excluded.tsv (see the collections' README for the format).

Each document becomes a Markdown file `<id>.md`: `# title`, a blank line, then
the text wrapped at 100 columns. Markdown because its first heading becomes the
document title (the reference BM25 indexes title + text) and the heading starts
the document's section; wrapping because real files have lines, and the chunker
cuts at line ends. The files go into a library that is indexed through the
normal `Engine.index` path; the harness then waits until every chunk has its
vector and sends every query through the normal `search` tool, switching the
ranking with `engine.search_mode`.

nDCG@10 and MRR@10 come from the tool's results (limit 50, its maximum).
Recall@100 needs 100 documents, so it calls `rank_documents`, the ranking
function inside `search`, with more candidate chunks; it is the same ranking,
before snippets and dedupe. Scoring: document level, trec_eval-style nDCG
(linear graded gains, log2 discount), Cranfield's excluded pairs removed from
the ranking first, a query without results scores 0.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search import ranking
from linkly_ls.core.search.ranking import rank_documents
from linkly_ls.core.tools.search import search

MODES = ("keyword", "vector", "hybrid")
TOOL_LIMIT = 50
RECALL_DEPTH = 100


@dataclass
class Collection:
    name: str
    docs: list[dict]
    queries: list[dict]
    qrels: dict[str, dict[str, int]]
    excluded: dict[str, set[str]]
    reference: dict[str, float] = field(default_factory=dict)


@dataclass
class ModeScores:
    mode: str
    ndcg10: float
    mrr10: float
    recall100: float
    search_ms_p50: float
    modes_seen: set[str]


def load_collection(folder: Path) -> Collection:
    def jsonl(name: str) -> list[dict]:
        with (folder / name).open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]

    qrels: dict[str, dict[str, int]] = {}
    for line in (folder / "qrels.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip():
            query_id, doc_id, grade = line.split("\t")
            qrels.setdefault(query_id, {})[doc_id] = int(grade)
    excluded: dict[str, set[str]] = {}
    if (folder / "excluded.tsv").exists():
        for line in (folder / "excluded.tsv").read_text(encoding="utf-8").splitlines():
            if line.strip():
                query_id, doc_id = line.split("\t")[:2]
                excluded.setdefault(query_id, set()).add(doc_id)
    return Collection(
        name=folder.name,
        docs=jsonl("docs.jsonl"),
        queries=jsonl("queries.jsonl"),
        qrels=qrels,
        excluded=excluded,
        reference=reference_figures(folder),
    )


def reference_figures(folder: Path) -> dict[str, float]:
    """The bm25s row for this collection from the collections' README, when it is there."""
    readme = folder.parent / "README.md"
    if not readme.exists():
        return {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] == folder.name and re.fullmatch(r"[0-9.]+", cells[1]):
            return {"ndcg10": float(cells[1]), "mrr10": float(cells[2]), "recall100": float(cells[3])}
    return {}


def write_library(collection: Collection, folder: Path) -> dict[str, str]:
    """Write each document as `<id>.md`; returns file stem -> document id."""
    folder.mkdir(parents=True, exist_ok=True)
    names: dict[str, str] = {}
    for doc in collection.docs:
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", doc["id"])
        names[stem] = doc["id"]
        body = textwrap.fill(doc["text"], width=100, break_long_words=False, break_on_hyphens=False)
        title = " ".join(doc.get("title", "").split())
        content = f"# {title}\n\n{body}\n" if title else f"{body}\n"
        path = folder / f"{stem}.md"
        if not path.exists() or path.read_text(encoding="utf-8") != content:
            path.write_text(content, encoding="utf-8")
    return names


def ndcg_at(ranked: list[str], grades: dict[str, int], depth: int = 10) -> float:
    dcg = sum(grades.get(doc, 0) / math.log2(rank + 1) for rank, doc in enumerate(ranked[:depth], start=1))
    ideal = sorted(grades.values(), reverse=True)[:depth]
    best = sum(grade / math.log2(rank + 1) for rank, grade in enumerate(ideal, start=1))
    return dcg / best if best else 0.0


def mrr_at(ranked: list[str], grades: dict[str, int], depth: int = 10) -> float:
    for rank, doc in enumerate(ranked[:depth], start=1):
        if grades.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def recall_at(ranked: list[str], grades: dict[str, int], depth: int = RECALL_DEPTH) -> float:
    relevant = {doc for doc, grade in grades.items() if grade > 0}
    return len(relevant & set(ranked[:depth])) / len(relevant) if relevant else 0.0


def build_engine(collection: Collection, data_dir: Path, progress: bool = True) -> tuple[Engine, dict[str, str]]:
    """Index the collection as a library (incremental: a second run reuses the index) and embed it all."""
    library = data_dir / "corpus"
    names = write_library(collection, library)
    engine = Engine(Config(data_dir=data_dir / "index", libraries=[LibraryConfig(name="corpus", paths=[library])]))
    started = time.monotonic()
    engine.index()
    indexed = time.monotonic() - started
    started = time.monotonic()
    embedded = engine.vectors.run_until_complete(progress=_progress if progress else None, wait_for_model=True)
    if progress:
        seconds = time.monotonic() - started
        print(f"indexed in {indexed:.1f} s; embedded {embedded} documents in {seconds:.1f} s", file=sys.stderr)
    return engine, names


def _progress(done: int, total: int, path: str) -> None:
    if done == total or done % 50 == 0:
        print(f"  embedding {done}/{total}", file=sys.stderr)


def evaluate(engine: Engine, collection: Collection, names: dict[str, str], mode: str) -> ModeScores:
    engine.search_mode = mode
    by_doc_id: dict[str, str] = {}
    for record in engine.catalog.all_documents():
        by_doc_id[record.doc_id] = names.get(Path(record.path).stem, "")
    ndcgs, mrrs, recalls, timings = [], [], [], []
    modes_seen: set[str] = set()
    for query in collection.queries:
        grades = collection.qrels.get(query["id"], {})
        skip = collection.excluded.get(query["id"], set())
        started = time.perf_counter()
        result = search(engine, query=query["text"], limit=TOOL_LIMIT)
        timings.append((time.perf_counter() - started) * 1000)
        modes_seen.add(result.mode)
        ranked = [by_doc_id[hit.doc_id] for hit in result.results if by_doc_id[hit.doc_id] not in skip]
        ndcgs.append(ndcg_at(ranked, grades))
        mrrs.append(mrr_at(ranked, grades))
        deep = rank_documents(engine, query["text"], None, mode=mode, keyword_chunks=4000, vector_chunks=2000)
        deep_ranked = [by_doc_id.get(d.doc_id, "") for d in deep.documents]
        recalls.append(recall_at([doc for doc in deep_ranked if doc not in skip], grades))
    engine.search_mode = "auto"
    return ModeScores(
        mode=mode,
        ndcg10=statistics.fmean(ndcgs),
        mrr10=statistics.fmean(mrrs),
        recall100=statistics.fmean(recalls),
        search_ms_p50=statistics.median(timings),
        modes_seen=modes_seen,
    )


def format_table(collection: Collection, scores: list[ModeScores]) -> str:
    reference = collection.reference
    lines = [
        f"{collection.name}: {len(collection.docs)} documents, {len(collection.queries)} queries",
        f"{'mode':<10} {'nDCG@10':>8} {'MRR@10':>8} {'R@100':>8}   {'x bm25s (nDCG / MRR / R)':<26} p50 ms",
    ]
    if reference:
        lines.append(
            f"{'bm25s':<10} {reference['ndcg10']:>8.4f} {reference['mrr10']:>8.4f} {reference['recall100']:>8.4f}"
        )
    for score in scores:
        ratio = ""
        if reference:
            ratio = " / ".join(
                f"{getattr(score, key) / reference[key]:.3f}" for key in ("ndcg10", "mrr10", "recall100")
            )
        lines.append(
            f"{score.mode:<10} {score.ndcg10:>8.4f} {score.mrr10:>8.4f} {score.recall100:>8.4f}   {ratio:<26} "
            f"{score.search_ms_p50:.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collection", type=Path, help="folder with docs.jsonl, queries.jsonl, qrels.tsv")
    parser.add_argument("--modes", default=",".join(MODES), help="comma-separated: keyword,vector,hybrid")
    parser.add_argument("--data-dir", type=Path, help="keep the library and index here (reused by later runs)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    parser.add_argument("--fusion", choices=["convex", "rrf"], help="fusion of the two rankings (default: search's)")
    args = parser.parse_args(argv)
    if args.fusion:
        ranking.FUSION = args.fusion
    collection = load_collection(args.collection)
    modes = [mode.strip() for mode in args.modes.split(",") if mode.strip()]
    with tempfile.TemporaryDirectory(prefix="linkly-ir-") as scratch:
        data_dir = args.data_dir or Path(scratch)
        engine, names = build_engine(collection, data_dir)
        try:
            scores = [evaluate(engine, collection, names, mode) for mode in modes]
        finally:
            engine.close()
    if args.json:
        print(json.dumps([{**score.__dict__, "modes_seen": sorted(score.modes_seen)} for score in scores], indent=2))
    else:
        print(format_table(collection, scores))
    return 0


if __name__ == "__main__":
    sys.exit(main())
