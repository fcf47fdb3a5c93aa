#!/usr/bin/env python3
"""A folder moved within a library: how long the next `linkly index` takes, OCR off.

    .venv/bin/python bench/move_bench.py                       # the home-like corpus, its `manuals/` folder
    .venv/bin/python bench/move_bench.py --corpus DIR --folder SUB --runs 3
    .venv/bin/python bench/move_bench.py --code path/to/other/checkout   # that checkout's code, same steps

Each run copies the corpus into a temporary folder, indexes it with `linkly index`, moves the folder
(`SUB` -> `archive/SUB`, content unchanged) and times the `linkly index` that follows, as the CLI runs
it (a fresh process, its own worker processes). Prints each run's wall time and the run's own summary,
then the median. The home-like corpus comes from `bench/home_corpus.py` (run it first).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOME_CORPUS = Path.home() / ".cache" / "linkly-bench" / "home-corpus" / "corpus-1"
REPO = Path(__file__).resolve().parents[1]


def linkly(code: Path, data_dir: Path, config: Path, *arguments: str) -> tuple[float, str]:
    """Run the CLI of the checkout at `code` (outside it, so that its folder is not on the path first)."""
    environment = {**os.environ, "PYTHONPATH": str(code), "LINKLY_DATA_DIR": str(data_dir), "LINKLY_CONFIG": str(config)}
    command = [sys.executable, "-c", "import sys; from linkly_ls.cli_launch import main; sys.exit(main())", *arguments]
    started = time.monotonic()
    result = subprocess.run(command, env=environment, capture_output=True, text=True, cwd=tempfile.gettempdir(), timeout=3600)
    seconds = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"linkly {' '.join(arguments)} failed ({result.returncode}): {result.stderr.strip()}")
    return seconds, result.stdout.strip().splitlines()[-1]


def one_run(code: Path, corpus: Path, folder: str) -> tuple[float, str]:
    with tempfile.TemporaryDirectory(prefix="linkly-move-") as work:
        root = Path(work)
        shutil.copytree(corpus, root / "lib")
        config = root / "config.toml"
        config.write_text("[limits]\nocr = false\n", encoding="utf-8")
        linkly(code, root / "data", config, "index", str(root / "lib"), "--library", "bench")
        (root / "lib" / "archive").mkdir(exist_ok=True)
        shutil.move(root / "lib" / folder, root / "lib" / "archive" / folder)
        return linkly(code, root / "data", config, "index")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HOME_CORPUS)
    parser.add_argument("--folder", default="manuals", help="the corpus's subfolder that is moved")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--code", type=Path, default=REPO, help="the checkout whose code runs (default: this one)")
    args = parser.parse_args()
    if not (args.corpus / args.folder).is_dir():
        raise SystemExit(f"{args.corpus / args.folder} is not a folder (run bench/home_corpus.py first?)")
    moved = [path for path in (args.corpus / args.folder).rglob("*") if path.is_file()]
    size = sum(path.stat().st_size for path in moved)
    print(f"corpus {args.corpus}; moving {args.folder}/ ({len(moved)} files, {size / 1e6:.1f} MB); code {args.code}")
    times = []
    for number in range(1, args.runs + 1):
        seconds, summary = one_run(args.code.resolve(), args.corpus, args.folder)
        times.append(seconds)
        print(f"run {number}: {seconds:.2f} s wall :: {summary}")
    print(f"median {statistics.median(times):.2f} s wall for the index run after the move")
    return 0


if __name__ == "__main__":
    sys.exit(main())
