"""A second development collection of long requests, derived from Cranfield without using its judgments.

Usage:
    python bench/long_requests.py OUT_DIR [--cranfield DIR]

LISA is the only collection in ../shared/ir whose requests are paragraphs, so
a method for long queries tuned on it cannot be checked on another. Cranfield
can give a second one honestly: each of its questions was written by the author
of a paper in the collection (`excluded.tsv` names that paper), and the author
then judged the collection for the question. The paper's abstract is the
author's own long statement of the same problem, written before and
independently of the judgments. So each source paper becomes one request: its
title and abstract (typically 100-250 words, several sentences); its relevant
documents are those judged for its questions (the best grade where two
questions judged the same document); the source paper itself is excluded from
the ranking, as Cranfield's `excluded.tsv` does for the questions.

Writes OUT_DIR/cranfield-long/{docs.jsonl, queries.jsonl, qrels.tsv,
excluded.tsv, SOURCE.md} and OUT_DIR/README.md with the bm25s reference row
(bm25s lucene, k1 1.2, b 0.75, English stopwords, Snowball stemmer, title +
text, excluded pairs removed: the settings of the collections' README), which
`bench/ir_eval.py OUT_DIR/cranfield-long` reads. Needs `bm25s` and `PyStemmer`
(`pip install bm25s==0.3.16 PyStemmer==3.1.0`). The data is never committed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
from pathlib import Path

from linkly_ls.core.search import evaluation

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"
NAME = "cranfield-long"


def long_requests(cranfield: evaluation.Collection) -> tuple[list[dict], dict[str, dict[str, int]], dict[str, set[str]]]:
    """(queries, qrels, excluded) with one request per source paper of Cranfield's questions."""
    docs = {doc["id"]: doc for doc in cranfield.docs}
    qrels: dict[str, dict[str, int]] = {}
    for query_id, sources in cranfield.excluded.items():
        for source in sources:
            grades = qrels.setdefault(source, {})
            for doc_id, grade in cranfield.qrels.get(query_id, {}).items():
                if doc_id != source:
                    grades[doc_id] = max(grade, grades.get(doc_id, 0))
    queries = []
    for source in sorted(qrels, key=int):
        text = _abstract(docs[source])
        if qrels[source] and len(text.split()) >= 20:
            queries.append({"id": source, "text": text})
    kept = {query["id"] for query in queries}
    return queries, {k: v for k, v in qrels.items() if k in kept}, {k: {k} for k in kept}


def _abstract(doc: dict) -> str:
    """The abstract, without the title Cranfield repeats at its start."""
    text, title = doc["text"].strip(), doc["title"].strip()
    body = text[len(title):].strip() if title and text.startswith(title) else text
    return f"{title} {body}".strip()


def bm25s_reference(collection: evaluation.Collection) -> dict[str, float]:
    """nDCG@10, MRR@10, Recall@100 of bm25s with the collections' README settings, excluded pairs removed."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    ids = [doc["id"] for doc in collection.docs]
    corpus = [f"{doc.get('title', '')} {doc['text']}" for doc in collection.docs]
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    ndcgs, mrrs, recalls = [], [], []
    for query in collection.queries:
        tokens = bm25s.tokenize([query["text"]], stopwords="en", stemmer=stemmer, show_progress=False)
        found, _ = retriever.retrieve(tokens, k=min(1000, len(ids)), show_progress=False)
        skip = collection.excluded.get(query["id"], set())
        ranked = [ids[i] for i in found[0] if ids[i] not in skip]
        grades = collection.qrels.get(query["id"], {})
        ndcgs.append(evaluation.ndcg_at(ranked, grades))
        mrrs.append(evaluation.mrr_at(ranked, grades))
        recalls.append(evaluation.recall_at(ranked, grades))
    return {"ndcg10": statistics.fmean(ndcgs), "mrr10": statistics.fmean(mrrs), "recall100": statistics.fmean(recalls)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder to write the collection into (outside the repository)")
    parser.add_argument("--cranfield", type=Path, default=SHARED_IR / "cranfield")
    args = parser.parse_args(argv)
    cranfield = evaluation.load_collection(args.cranfield)
    queries, qrels, excluded = long_requests(cranfield)
    folder = args.out / NAME
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(args.cranfield / "docs.jsonl", folder / "docs.jsonl")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(query) + "\n" for query in queries)
    (folder / "qrels.tsv").write_text(
        "".join(f"{q}\t{d}\t{g}\n" for q, grades in qrels.items() for d, g in sorted(grades.items(), key=lambda x: int(x[0]))),
        encoding="utf-8",
    )
    (folder / "excluded.tsv").write_text("".join(f"{q}\t{q}\n" for q in excluded), encoding="utf-8")
    (folder / "SOURCE.md").write_text(__doc__.split("\n\n", 2)[2].split("\n\nWrites")[0] + "\n", encoding="utf-8")
    derived = evaluation.Collection(NAME, cranfield.docs, queries, qrels, excluded)
    reference = bm25s_reference(derived)
    check = bm25s_reference(cranfield)
    (args.out / "README.md").write_text(
        "| folder | nDCG@10 | MRR@10 | Recall@100 |\n|---|---:|---:|---:|\n"
        f"| {NAME} | {reference['ndcg10']:.4f} | {reference['mrr10']:.4f} | {reference['recall100']:.4f} |\n",
        encoding="utf-8",
    )
    words = [len(query["text"].split()) for query in queries]
    print(
        f"{NAME}: {len(queries)} requests (median {statistics.median(words):.0f} words, "
        f"{min(words)}-{max(words)}), {sum(len(g) for g in qrels.values())} relevant pairs; "
        f"bm25s nDCG@10 {reference['ndcg10']:.4f}, MRR@10 {reference['mrr10']:.4f}, R@100 {reference['recall100']:.4f}"
    )
    print(f"check: bm25s on Cranfield's own questions, the same way: nDCG@10 {check['ndcg10']:.4f} (expected 0.4197)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
