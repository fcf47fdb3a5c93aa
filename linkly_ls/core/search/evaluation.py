"""Search quality on labelled collections: loading, metrics, evaluation through `search`, leave-one-out.

A collection folder holds `docs.jsonl`, `queries.jsonl`, `qrels.tsv` and, for
Cranfield, `excluded.tsv` (the format is described in the collections' README).
Each document becomes a plain-text file `<id>.txt`: the title, a blank line,
then the text as given, indexed through the normal `Engine.index` path with
every vector computed. Every query then goes through the public `search` tool
with its `mode` argument, so what is measured is what users get.

Scoring is at document level: nDCG@10 (linear graded gains, log2 discount, as
trec_eval), MRR@10 and Recall@100; Cranfield's excluded pairs are removed from
a ranking first; a query without results scores 0. nDCG@10 and MRR@10 come from
the tool's results (limit 50, its maximum); Recall@100 needs 100 documents, so
it asks `rank_documents`, the ranking inside `search`, for deeper candidates.

`leave_one_out` chooses among candidate settings the way a new collection would
meet them: for each collection, the setting with the best mean ratio to the
BM25 reference on all the other collections, scored on the one left out.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
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
    recall100: float | None
    search_ms_p50: float
    search_ms_p95: float
    modes_seen: set[str]
    #: CPU time of the process per search (all its threads), p95: less noisy than wall time on a busy machine
    search_cpu_ms_p95: float = 0.0
    #: query id -> nDCG@10, for paired comparisons
    per_query: dict[str, float] = field(default_factory=dict)


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


def collection_folders(root: Path) -> list[Path]:
    """The collections under `root` (folders with docs, queries and judgments), by name."""
    return sorted(
        folder
        for folder in root.iterdir()
        if folder.is_dir() and all((folder / name).exists() for name in ("docs.jsonl", "queries.jsonl", "qrels.tsv"))
    )


#: bm25s figures measured the way this harness scores, where the collections' README differs: its
#: Cranfield row does not remove the excluded pairs (bm25s 0.3.16, the README's settings, excluded pairs
#: removed from the ranking before scoring, as `evaluate` does)
REFERENCE_OVERRIDES: dict[str, dict[str, float]] = {
    "cranfield": {"ndcg10": 0.4197, "mrr10": 0.6631, "recall100": 0.7372},
}


def reference_figures(folder: Path) -> dict[str, float]:
    """The bm25s row for this collection (REFERENCE_OVERRIDES, else the collections' README), when known."""
    if folder.name in REFERENCE_OVERRIDES:
        return dict(REFERENCE_OVERRIDES[folder.name])
    readme = folder.parent / "README.md"
    if not readme.exists():
        return {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] == folder.name and re.fullmatch(r"[0-9.]+", cells[1]):
            return {"ndcg10": float(cells[1]), "mrr10": float(cells[2]), "recall100": float(cells[3])}
    return {}


def write_library(collection: Collection, folder: Path) -> dict[str, str]:
    """Write each document as `<id>.txt` (title, blank line, text); returns file stem -> document id."""
    folder.mkdir(parents=True, exist_ok=True)
    names: dict[str, str] = {}
    for doc in collection.docs:
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", doc["id"])
        names[stem] = doc["id"]
        title = " ".join(doc.get("title", "").split())
        content = f"{title}\n\n{doc['text'].strip()}\n"
        path = folder / f"{stem}.txt"
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
        print(
            f"{collection.name}: indexed in {indexed:.1f} s; embedded {embedded} documents in {seconds:.1f} s",
            file=sys.stderr,
        )
    return engine, names


def _progress(done: int, total: int, path: str) -> None:
    if done == total or done % 500 == 0:
        print(f"  embedding {done}/{total}", file=sys.stderr)


def evaluate(
    engine: Engine, collection: Collection, names: dict[str, str], mode: str, recall: bool = True
) -> ModeScores:
    """Every query of the collection through the `search` tool in `mode`."""
    by_doc_id = {record.doc_id: names.get(Path(record.path).stem, "") for record in engine.catalog.all_documents()}
    ndcgs: dict[str, float] = {}
    mrrs, recalls, timings, cpu_timings = [], [], [], []
    modes_seen: set[str] = set()
    for query in collection.queries:
        grades = collection.qrels.get(query["id"], {})
        skip = collection.excluded.get(query["id"], set())
        started, cpu_started = time.perf_counter(), time.process_time()
        result = search(engine, query=query["text"], limit=TOOL_LIMIT, mode=mode)
        timings.append((time.perf_counter() - started) * 1000)
        cpu_timings.append((time.process_time() - cpu_started) * 1000)
        modes_seen.add(result.mode)
        ranked = [by_doc_id[hit.doc_id] for hit in result.results if by_doc_id[hit.doc_id] not in skip]
        ndcgs[query["id"]] = ndcg_at(ranked, grades)
        mrrs.append(mrr_at(ranked, grades))
        if recall:
            deep = rank_documents(engine, query["text"], None, mode=mode, keyword_chunks=4000, vector_chunks=2000)
            deep_ranked = [by_doc_id.get(d.doc_id, "") for d in deep.documents]
            recalls.append(recall_at([doc for doc in deep_ranked if doc not in skip], grades))
    return ModeScores(
        mode=mode,
        ndcg10=statistics.fmean(ndcgs.values()),
        mrr10=statistics.fmean(mrrs),
        recall100=statistics.fmean(recalls) if recalls else None,
        search_ms_p50=statistics.median(timings),
        search_ms_p95=_percentile(timings, 0.95),
        modes_seen=modes_seen,
        search_cpu_ms_p95=_percentile(cpu_timings, 0.95),
        per_query=ndcgs,
    )


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


@contextmanager
def settings(overrides: dict[str, Any]) -> Iterator[None]:
    """Set module attributes named `package.module:ATTRIBUTE` for the duration of a block."""
    saved: list[tuple[object, str, Any]] = []
    try:
        for name, value in overrides.items():
            module_name, attribute = name.split(":")
            module = sys.modules[module_name] if module_name in sys.modules else __import__(module_name, fromlist=["_"])
            saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, value)
        yield
    finally:
        for module, attribute, value in reversed(saved):
            setattr(module, attribute, value)


#: settings compared by leave-one-collection-out: name -> (module attribute overrides, modes they apply to)
_FEEDBACK = "linkly_ls.core.search.feedback:"
_FUSION = "linkly_ls.core.search.fusion:"
_RANKED = "linkly_ls.core.search.ranked:"
_WHOLE = "linkly_ls.core.search.whole_matches:"
_VIEWS = "linkly_ls.core.search.query_views:"
_QUERY_TERMS = "linkly_ls.core.search.query_terms:"
_SMOOTHING = "linkly_ls.core.search.smoothing:"
CANDIDATES: dict[str, tuple[dict[str, Any], tuple[str, ...]]] = {
    "plain": ({}, ("keyword", "hybrid")),
    "query function words kept": ({_QUERY_TERMS + "QUERY_WITHOUT_FUNCTION_WORDS": False}, ("keyword", "hybrid")),
    "rm3 5": ({_FEEDBACK + "RM3_DOCUMENTS": 5}, ("keyword", "hybrid")),
    "rm3 10": ({_FEEDBACK + "RM3_DOCUMENTS": 10}, ("keyword", "hybrid")),
    "rm3 10, query 0.7": ({_FEEDBACK + "RM3_DOCUMENTS": 10, _FEEDBACK + "RM3_ORIGINAL_WEIGHT": 0.7}, ("keyword", "hybrid")),
    "rocchio 5": ({_FEEDBACK + "ROCCHIO_DOCUMENTS": 5}, ("hybrid",)),
    "rm3 10 + rocchio 5": ({_FEEDBACK + "RM3_DOCUMENTS": 10, _FEEDBACK + "ROCCHIO_DOCUMENTS": 5}, ("hybrid",)),
    "further chunks 0.2": ({_RANKED + "KEYWORD_FURTHER_CHUNKS": 0.2}, ("keyword", "hybrid")),
    "long queries keyword 0.7": ({_FUSION + "LONG_QUERY_WORDS": 25, _FUSION + "LONG_QUERY_SENTENCES": 0}, ("hybrid",)),
    "no sentence-count weight": ({_FUSION + "LONG_QUERY_SENTENCES": 0}, ("hybrid",)),
    "2+ sentences keyword 0.7": ({_FUSION + "LONG_QUERY_SENTENCES": 2}, ("hybrid",)),
    "keyword weight 0.4": ({_FUSION + "CONVEX_KEYWORD_WEIGHT": 0.4}, ("hybrid",)),
    "keyword weight 0.6": ({_FUSION + "CONVEX_KEYWORD_WEIGHT": 0.6}, ("hybrid",)),
    "one query vector": ({_VIEWS + "SENTENCE_VIEWS": False}, ("hybrid",)),
    "z fusion": ({_FUSION + "FUSION": "z"}, ("hybrid",)),
    "z fusion, one query vector": ({_FUSION + "FUSION": "z", _VIEWS + "SENTENCE_VIEWS": False}, ("hybrid",)),
    "rrf": ({_FUSION + "FUSION": "rrf"}, ("hybrid",)),
    "no neighbour smoothing": ({_SMOOTHING + "SMOOTHING_DOCUMENTS": 0}, ("hybrid",)),
    "keyword side not completed": ({_RANKED + "COMPLETE_KEYWORD_SIDE": False}, ("hybrid",)),
    "vector side not completed": ({_RANKED + "COMPLETE_VECTOR_SIDE": False}, ("hybrid",)),
    "whole matches not first": ({_WHOLE + "WHOLE_MATCHES_FIRST": False}, ("hybrid",)),
    "whole matches above the weaker": ({_WHOLE + "WHOLE_MATCHES_ABOVE": "weaker"}, ("hybrid",)),
    "whole matches above those with none": ({_WHOLE + "WHOLE_MATCHES_ABOVE": "none"}, ("hybrid",)),
    "whole matches not first in keyword mode": ({_WHOLE + "WHOLE_MATCHES_MODES": ("hybrid",)}, ("keyword",)),
    "neighbour smoothing weight 0.5": ({_SMOOTHING + "SMOOTHING_WEIGHT": 0.5}, ("hybrid",)),
}


def candidate_ratios(
    engine: Engine, collection: Collection, names: dict[str, str], mode: str
) -> dict[str, float]:
    """candidate -> nDCG@10 / reference on this collection, for the candidates that apply to `mode`."""
    ratios: dict[str, float] = {}
    for name, (overrides, modes) in CANDIDATES.items():
        if mode not in modes:
            continue
        with settings(overrides):
            score = evaluate(engine, collection, names, mode, recall=False)
        ratios[name] = score.ndcg10 / collection.reference["ndcg10"]
    return ratios


@dataclass
class HeldOut:
    collection: str
    #: the candidate chosen on the other collections
    chosen: str
    #: its ratio to the reference on the collection left out
    ratio: float
    #: the best candidate on this collection alone, for comparison
    best: str
    best_ratio: float


#: name endings of the collections derived from another by `bench/long_requests.py` and `bench/collection_shapes.py`
DERIVED_SUFFIXES = ("-long", "-titles", "-flat", "-known", "-phrases")


def source_of(collection: str) -> str:
    """The collection a derived one was made from (`lisa-titles`, `cranfield-long` -> `lisa`, `cranfield`)."""
    for suffix in DERIVED_SUFFIXES:
        if collection.endswith(suffix):
            return collection[: -len(suffix)]
    return collection


def leave_one_out(ratios: dict[str, dict[str, float]]) -> list[HeldOut]:
    """`ratios[candidate][collection]` (score / reference); for each collection, the candidate with the
    best mean ratio over the other collections, scored on that one. A collection derived from another
    (`bench/long_requests.py`, `bench/collection_shapes.py`) shares its documents or queries, so it is
    left out together with its source and every other collection derived from it."""
    candidates = list(ratios)
    collections = sorted({name for row in ratios.values() for name in row})
    held_out: list[HeldOut] = []
    for left_out in collections:
        others = [name for name in collections if source_of(name) != source_of(left_out)]

        def mean_on_others(candidate: str) -> float:
            return statistics.fmean(ratios[candidate][name] for name in others) if others else 0.0

        chosen = max(candidates, key=mean_on_others)
        best = max(candidates, key=lambda candidate: ratios[candidate][left_out])
        held_out.append(HeldOut(left_out, chosen, ratios[chosen][left_out], best, ratios[best][left_out]))
    return held_out


def format_scores(collection: Collection, scores: list[ModeScores]) -> str:
    reference = collection.reference
    lines = [
        f"{collection.name}: {len(collection.docs)} documents, {len(collection.queries)} queries",
        f"{'mode':<10} {'nDCG@10':>8} {'MRR@10':>8} {'R@100':>8}   {'x bm25s (nDCG / MRR / R)':<26} "
        "p50/p95 ms (CPU p95)",
    ]
    if reference:
        lines.append(
            f"{'bm25s':<10} {reference['ndcg10']:>8.4f} {reference['mrr10']:>8.4f} {reference['recall100']:>8.4f}"
        )
    for score in scores:
        recall = f"{score.recall100:>8.4f}" if score.recall100 is not None else f"{'-':>8}"
        ratio = ""
        if reference:
            parts = [score.ndcg10 / reference["ndcg10"], score.mrr10 / reference["mrr10"]]
            if score.recall100 is not None:
                parts.append(score.recall100 / reference["recall100"])
            ratio = " / ".join(f"{part:.3f}" for part in parts)
        lines.append(
            f"{score.mode:<10} {score.ndcg10:>8.4f} {score.mrr10:>8.4f} {recall}   {ratio:<26} "
            f"{score.search_ms_p50:.1f}/{score.search_ms_p95:.1f} ({score.search_cpu_ms_p95:.1f})"
        )
    return "\n".join(lines)


def format_ratio_table(ratios: dict[str, dict[str, float]], label: str, width: int = 10) -> str:
    """`ratios[candidate][collection]` as a table, a row per candidate with its mean, collections in
    the order of the first row."""
    collections = list(next(iter(ratios.values()), {}))
    lines = [f"{label:<24} " + " ".join(f"{name[:width]:>{width}}" for name in collections) + f" {'mean':>8}"]
    for name, row in ratios.items():
        cells = " ".join(f"{row[collection]:>{width}.3f}" for collection in collections)
        lines.append(f"{name:<24} {cells} {statistics.fmean(row.values()):>8.3f}")
    return "\n".join(lines)


def format_leave_one_out(held_out: list[HeldOut], label: str) -> str:
    lines = [
        f"leave-one-collection-out ({label}): chosen on the others, scored on the one left out",
        f"{'left out':<12} {'chosen':<28} {'x bm25s':>8}   {'best here':<28} {'x bm25s':>8}",
    ]
    for row in held_out:
        lines.append(f"{row.collection:<12} {row.chosen:<28} {row.ratio:>8.3f}   {row.best:<28} {row.best_ratio:>8.3f}")
    return "\n".join(lines)
