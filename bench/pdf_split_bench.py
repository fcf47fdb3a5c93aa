#!/usr/bin/env python3
"""A long PDF read whole versus in page-range parts: CPU and wall seconds, medians of several runs.

    .venv/bin/python bench/pdf_split_bench.py                       # R-fullrefman, 3 runs
    .venv/bin/python bench/pdf_split_bench.py --runs 5 path/to/long.pdf

Whole: `prepare_file` (extract, analyse, chunk) in this process, as one
worker runs it. Parts: the part tasks the indexer hands out
(`core/pdf_split.py`, one per worker on 2 workers), run one after the other
in this process, so each part's CPU time is measured alone; the critical
path is the longest part, the assembling one (which reads its pages, then
puts the document together) included: how long the file holds the pool.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from linkly_ls.core.extract.base import ExtractLimits  # noqa: E402
from linkly_ls.core.indexing.pdf_split import PdfSplitter, prepare_pdf_part  # noqa: E402
from linkly_ls.core.indexing.preparation import prepare_file  # noqa: E402

DEFAULT_PDF = REPO_ROOT.parent / "shared" / "corpus" / "books" / "R" / "R-fullrefman.pdf"
LIMITS = ExtractLimits(ocr_deferred=True)


def whole(path: Path) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    prepare_file((str(path), None, LIMITS))
    return time.process_time() - cpu, time.perf_counter() - wall


def in_parts(path: Path) -> list[float]:
    """CPU seconds of each part task, the assembling (last) one last."""
    splitter = PdfSplitter()
    tasks = splitter.split([(str(path), (str(path), None, LIMITS))], workers=2)
    seconds = []
    with tempfile.TemporaryDirectory() as folder:
        for _, task in tasks:
            cpu = time.process_time()
            prepare_pdf_part(task.__class__(**{**task.__dict__, "folder": folder}))
            seconds.append(time.process_time() - cpu)
    splitter.discard()
    return seconds


def critical_path(parts: list[float], workers: int) -> float:
    """Greedy schedule in task order on `workers` workers: when the last part is done."""
    free = [0.0] * workers
    for seconds in parts:
        index = free.index(min(free))
        free[index] += seconds
    return max(free)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pdf", nargs="?", type=Path, default=DEFAULT_PDF)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not args.pdf.is_file():
        print(f"no such file: {args.pdf}", file=sys.stderr)
        return 2
    whole_cpu, whole_wall, part_runs = [], [], []
    for _ in range(args.runs):
        cpu, wall = whole(args.pdf)
        whole_cpu.append(cpu)
        whole_wall.append(wall)
        part_runs.append(in_parts(args.pdf))
    count = len(part_runs[0])
    total = [sum(run) for run in part_runs]
    print(f"{args.pdf.name}: median of {args.runs} run(s), CPU seconds unless said")
    print(f"  whole file, one task            cpu {statistics.median(whole_cpu):6.2f}  wall {statistics.median(whole_wall):6.2f}")
    if count < 2:
        print("  not split (below core/pdf_split.py SPLIT_MIN_SECONDS)")
        return 0
    print(f"  {count} parts, sum                 cpu {statistics.median(total):6.2f}")
    print(f"    longest reading part          cpu {statistics.median(max(run[:-1]) for run in part_runs):6.2f}")
    print(f"    last part (reads + assembles) cpu {statistics.median(run[-1] for run in part_runs):6.2f}")
    path = statistics.median(critical_path(run, len(run)) for run in part_runs)
    print(f"    critical path, a worker per part {path:6.2f}  ({path / statistics.median(whole_cpu):.2f} x whole)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
