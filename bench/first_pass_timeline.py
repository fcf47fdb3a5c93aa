"""When search turns hybrid, in the process that indexes: keyword indexing, then the first vector pass.

Usage:
    python bench/first_pass_timeline.py                          # every collection of ../shared/ir
    python bench/first_pass_timeline.py ../shared/ir/adi --runs 5
    python bench/first_pass_timeline.py --folder ../shared/corpus

Each run indexes the library from an empty data dir with `linkly index LIBRARY --wait` (the
defaults: first pass on, OCR as configured) and reads its output as it comes: the time from the
process start to the keyword summary line (every file in the keyword index) and to the
`first pass:` line (every chunk with a first-pass vector, so search is hybrid). The process is
then killed: the model's refining is `vector_coverage.py`'s to time. `vector_coverage.py
--first-pass` measures the same point across two processes (`linkly index`, then `linkly index
--wait`); here both phases share one process start, as in `linkly serve` or `linkly watch`.
Prints each run and, per library, the median ratio of the two times.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from linkly_ls.core.search import evaluation

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"
LINKLY = Path(sys.executable).parent / "linkly"


def timeline(library: Path, work: Path) -> tuple[float, float, str]:
    """(seconds to the keyword summary, seconds to the first-pass line, that line) of one cold run."""
    data_dir = Path(tempfile.mkdtemp(dir=work))
    config = work / "config.toml"
    config.write_text("", encoding="utf-8")
    env = {**os.environ, "LINKLY_DATA_DIR": str(data_dir), "LINKLY_CONFIG": str(config)}
    started = time.monotonic()
    process = subprocess.Popen(
        [str(LINKLY), "index", str(library), "--library", "bench", "--wait"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    keyword = first = None
    line = ""
    try:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode(errors="replace").strip()
            now = time.monotonic() - started
            if keyword is None and " indexed, " in line and " removed in " in line:
                keyword = now
            elif line.startswith("first pass:"):
                first = now
                break
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if keyword is None or first is None:
        raise SystemExit(f"{library}: no keyword summary or first-pass line; last output: {line!r}")
    return keyword, first, line


def libraries(args: argparse.Namespace, work: Path) -> list[tuple[str, Path]]:
    if args.folder:
        return [(args.folder.name, args.folder.resolve())]
    found = []
    for folder in args.collections or evaluation.collection_folders(SHARED_IR):
        collection = evaluation.load_collection(folder)
        library = work / "libraries" / collection.name
        evaluation.write_library(collection, library)
        found.append((collection.name, library))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("collections", type=Path, nargs="*", help="labelled collections (default: all of ../shared/ir)")
    parser.add_argument("--folder", type=Path, help="a folder of documents instead of the collections")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="linkly-first-pass-timeline-") as name:
        work = Path(name)
        rows = []
        for label, library in libraries(args, work):
            ratios = []
            for run in range(1, args.runs + 1):
                keyword, first, line = timeline(library, work)
                ratios.append(first / keyword)
                print(f"{label} run {run}: keyword index {keyword:.2f} s, first pass done {first:.2f} s "
                      f"({first / keyword:.2f} x)  [{line[:80]}]", flush=True)
            rows.append((label, ratios))
    print("\nlibrary       first pass done / keyword index done, from one process start (median, range)")
    for label, ratios in rows:
        print(f"{label:<12}  {statistics.median(ratios):.2f} x  ({min(ratios):.2f}-{max(ratios):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
