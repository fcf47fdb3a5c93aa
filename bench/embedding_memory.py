"""Peak RSS of the embedding process with a large vector index, step by step.

Usage:
    python bench/embedding_memory.py --data-dir DIR [--vectors 50000] [--passages 600] [--first-pass-vectors N]

`DIR` is a linkly data dir with a keyword index (e.g. one kept by
`vector_coverage.py --keep`, or made with `linkly index`); its catalog and
keyword index are copied to a temporary folder, never changed. In one process,
as `serve` or `linkly index --wait` would hold them: the engine is opened, the
default embedding model loaded, the vector index filled with `--vectors` random
unit vectors (spread over the catalog's documents) and saved, then
`--passages` real passages of the catalog are embedded the way VectorSync does
(calls of 256 passages), a keyword and a hybrid search run, and the index is
saved again. Prints RSS (with its anonymous and file-backed parts) and peak
RSS (VmHWM) after every step, so what dominates is visible. Random vectors
cost the index the same memory as real ones; computing 50,000 real ones would
take a quarter of an hour.

`--first-pass-vectors N` first fills the first pass's index with N random vectors
(as a first pass over a library of N chunks leaves it) and runs the first pass
(which then finds nothing to add and hands its index back to reading), so the
steps after it show what the first-pass index costs while the model refines.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.search.chunking import embedding_passages
from linkly_ls.core.search.vectors import ChunkRef
from linkly_ls.core.tools.search import search
from linkly_ls.core.indexing.embedding_rounds import PASSAGES_PER_CALL, passage_text


def rss_mb(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) // 1024
    return 0


def report(step: str, previous: list[int]) -> None:
    """RSS, its anonymous part (the process's own memory) and its file part (pages of mapped files,
    such as a read-only vector index, which the kernel can drop and read again), and the peak."""
    now, peak = rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    anonymous, mapped = rss_mb("RssAnon"), rss_mb("RssFile")
    print(
        f"{step:<52} RSS {now:5d} MB  (+{now - previous[0]:4d}; anonymous {anonymous:5d}, files {mapped:4d})  peak {peak:5d} MB",
        flush=True,
    )
    previous[0] = now


def sample_passages(engine: Engine, count: int) -> list[str]:
    passages: list[str] = []
    for record in engine.catalog.all_documents():
        for chunk in embedding_passages(engine.catalog.lines(record.doc_id), record.outline, record.page_starts):
            passages.append(passage_text(record, chunk))
    random.Random(3).shuffle(passages)
    return passages[:count]


def fill(engine: Engine, index, vectors: int) -> None:
    hashes_by_doc = {record.doc_id: record.content_hash for record in engine.catalog.all_documents()}
    doc_ids = list(hashes_by_doc)
    per_document = vectors // len(doc_ids) + 1
    generator = np.random.default_rng(0)
    for doc_id in doc_ids:
        matrix = generator.normal(size=(per_document, index.dim)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        hashes = generator.integers(-(2**62), 2**62, size=per_document)
        refs = [ChunkRef(doc_id, n, n + 1, n + 1, int(hashes[n])) for n in range(per_document)]
        index.add(doc_id, hashes_by_doc[doc_id], refs, matrix)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a linkly data dir with a keyword index")
    parser.add_argument("--vectors", type=int, default=50_000)
    parser.add_argument("--passages", type=int, default=600)
    parser.add_argument("--first-pass-vectors", type=int, default=0, help="fill the first pass's index first")
    args = parser.parse_args()
    if not (args.data_dir / "catalog.sqlite3").is_file() or not (args.data_dir / "keyword").is_dir():
        print(f"error: {args.data_dir} is not a linkly data dir with a keyword index", file=sys.stderr)
        return 2
    previous = [rss_mb()]
    with tempfile.TemporaryDirectory(prefix="embedding-memory-") as temporary:
        data_dir = Path(temporary)
        shutil.copy(args.data_dir / "catalog.sqlite3", data_dir / "catalog.sqlite3")
        shutil.copytree(args.data_dir / "keyword", data_dir / "keyword")
        report("imports", previous)
        engine = Engine(Config(data_dir=data_dir))
        report("engine open (catalog, keyword index)", previous)
        if args.first_pass_vectors:
            table = engine.vectors.provider.first_pass()
            first_index = engine.vectors.index_for(table, writer=True) if table is not None else None
            if first_index is None:
                print("error: no first-pass table, or the index is another process's to write", file=sys.stderr)
                return 1
            fill(engine, first_index, args.first_pass_vectors)
            first_index.checkpoint()
            report(f"first-pass index: {len(first_index)} vectors, saved", previous)
            engine.vectors.first_pass.run([])
            report("first pass run (nothing left to add)", previous)
        embedder = engine.vectors.provider.current()
        if embedder is None:
            print(f"error: {engine.vectors.provider.status().reason}", file=sys.stderr)
            return 1
        report(f"model loaded ({embedder.model_id})", previous)
        index = engine.vectors.index_for(embedder, writer=True)
        fill(engine, index, args.vectors)
        index.checkpoint()
        report(f"vector index: {len(index)} vectors, saved", previous)
        passages = sample_passages(engine, args.passages)
        started = time.process_time()
        for start in range(0, len(passages), PASSAGES_PER_CALL):
            embedder.embed_passages(passages[start : start + PASSAGES_PER_CALL], engine.vectors.settings.batch_size)
        per_passage = (time.process_time() - started) / max(len(passages), 1) * 1000
        report(f"embedded {len(passages)} passages ({per_passage:.0f} CPU-ms each)", previous)
        for mode in ("keyword", "auto"):
            engine.search_mode = mode
            search(engine, query="network configuration files", limit=10)
        index.checkpoint()
        report("keyword + hybrid search, index saved", previous)
        engine.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
