#!/usr/bin/env python3
"""Background embedding against searches in one process, as in the servers: with and without giving way.

    .venv/bin/python bench/embedding_contention.py                  # 600 passages, 150 searches a phase
    .venv/bin/python bench/embedding_contention.py --passages 1200 --searches 300 --json

Indexes the Markdown, HTML and text files of ../shared/corpus (`notes`, `web`,
`reference`; keywords only, thousands of passages), embeds the first
`--seed-passages` in the foreground so that searches are hybrid, then runs each
phase on a fresh copy of that index:

- searches alone (`idle`): the reference search latency;
- background embedding alone, `--passages` of it, in three ways: as before this
  change (`old`: every core, normal priority, no pause), the new default (`new`:
  nice 19, one core fewer, waits while a tool call is answered) and the new
  one with every core (`new, all cores`, `[embedding] threads` = cores), which
  tells the cost of the free core from that of the priority and the pauses;
- searches while the background embedding runs, `old` and `new`: search
  latency, and how far embedding got meanwhile.

A search is `call_tool("search")` (what every face calls), one at a time with
`--pace` seconds (+-50 %) between them, as an agent makes them. Rounds of
embedding are made smaller than in the servers (PASSAGES_PER_ROUND) so that
throughput is seen every few seconds. Timings on a shared machine are noisy:
the phases of one run are comparable, runs on different days less so; the
machine's busy CPUs are printed for each phase.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from linkly_ls.core import background
from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing import embedding_rounds, vector_sync
from linkly_ls.core.tools import call_tool

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
QUERIES = [
    "ownership borrowing", "struct fields", "match enum", "control flow loop", "guessing game", "hello world",
    "variables mutability shadowing", "if let", "integer overflow", "slices string", "method syntax",
    "references and borrowing rules", "tool that prints text to the screen", "what happens when a value goes out of scope",
]
ROUND_PASSAGES = 64
SOURCE_FOLDERS = ("notes", "web", "reference")
SOURCE_SUFFIXES = {".md", ".mdx", ".html", ".txt"}


def machine_busy_s() -> float:
    values = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def open_engine(data_dir: Path, library: Path, threads: int | None = None) -> Engine:
    embedding: dict[str, Any] = {"model": "bundled"}
    if threads:
        embedding["threads"] = threads
    return Engine(Config(data_dir=data_dir, libraries=[LibraryConfig(name="notes", paths=[library])],
                         raw={"embedding": embedding}))


def prepare(root: Path, seed_passages: int) -> tuple[Path, Path]:
    library = root / "library"
    for folder in SOURCE_FOLDERS:
        for source in sorted((CORPUS / folder).rglob("*")):
            if source.suffix in SOURCE_SUFFIXES and source.is_file():
                target = library / source.relative_to(CORPUS)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    data = root / "seeded"
    engine = open_engine(data, library)
    try:
        engine.index()
        engine.vectors.start()
        wait(lambda: engine.vectors.state().embedded >= seed_passages or finished(engine), 1800)
    finally:
        engine.close()
    return library, data


def finished(engine: Engine) -> bool:
    state = engine.vectors.state()
    return not state.running and state.total > 0 and state.done >= state.total


def wait(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.01)


class Embedding:
    """Background embedding of a fresh copy of the seeded index; passages embedded over time."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.started_at = 0.0
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)

    def start(self) -> None:
        self.engine.vectors.start()
        wait(lambda: self.engine.vectors.state().running, 300)
        self.started_at = time.monotonic()
        self._sampler.start()

    def _sample(self) -> None:
        last = -1
        while not self._stop.is_set():
            embedded = self.engine.vectors.state().embedded
            if embedded != last:
                self.samples.append((time.monotonic(), embedded))
                last = embedded
            time.sleep(0.005)

    def stop(self) -> None:
        self._stop.set()
        self._sampler.join()

    def throughput(self) -> tuple[int, float]:
        """(passages embedded, per second from the first completed round to the last; the model's
        load and the first round's wait for a quiet moment are left out)."""
        done = [(moment, embedded) for moment, embedded in self.samples if embedded > 0]
        if not done:
            return 0, 0.0
        if len(done) == 1:  # one round only: from the start, the model's load included
            return done[0][1], done[0][1] / (done[0][0] - self.started_at)
        (first_at, first), (last_at, last) = done[0], done[-1]
        return last, (last - first) / (last_at - first_at)


def search_loop(engine: Engine, count: int, pace: float, seed: int) -> list[float]:
    rng = random.Random(seed)
    latencies = []
    for _ in range(count):
        query = rng.choice(QUERIES)
        started = time.perf_counter()
        result = call_tool(engine, "search", {"query": query, "limit": 10})
        latencies.append((time.perf_counter() - started) * 1000)
        if not result.results:
            raise RuntimeError(f"no results for {query!r}")
        time.sleep(pace * rng.uniform(0.5, 1.5))
    return latencies


def with_behaviour(old: bool):
    """`old`: no lowering and no pauses (what background embedding did before giving way)."""
    saved = (vector_sync.lower_current_thread, background.FOREGROUND.max_wait_s)
    if old:
        vector_sync.lower_current_thread = lambda: False
        background.FOREGROUND.max_wait_s = 0.0
    return saved


def restore(saved) -> None:
    vector_sync.lower_current_thread, background.FOREGROUND.max_wait_s = saved


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))], 1)


def run_phase(name: str, root: Path, library: Path, seeded: Path, args: argparse.Namespace, *, embed: bool,
              search: bool, old: bool = False, threads: int | None = None) -> dict[str, Any]:
    data = root / name.replace(" ", "-").replace(",", "")
    shutil.copytree(seeded, data)
    saved = with_behaviour(old)
    engine = open_engine(data, library, threads)
    busy_before, started = machine_busy_s(), time.monotonic()
    row: dict[str, Any] = {"phase": name}
    try:
        call_tool(engine, "search", {"query": "warm up the model", "limit": 3})
        embedding = Embedding(engine) if embed else None
        if embedding:
            embedding.start()
        if search:
            latencies = search_loop(engine, args.searches, args.pace, args.seed)
            row.update(searches=len(latencies), p50_ms=round(statistics.median(latencies), 1),
                       p95_ms=percentile(latencies, 0.95), p99_ms=percentile(latencies, 0.99))
        elif embedding:
            wait(lambda: engine.vectors.state().embedded >= args.passages or finished(engine), 1800)
        if embedding:
            embedding.stop()
            embedded, rate = embedding.throughput()
            row.update(passages=embedded, passages_per_s=round(rate, 2))
    finally:
        engine.close()
        restore(saved)
        shutil.rmtree(data, ignore_errors=True)
    row["machine_busy_cpus"] = round((machine_busy_s() - busy_before) / (time.monotonic() - started), 2)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--passages", type=int, default=600, help="passages embedded in each throughput phase")
    parser.add_argument("--searches", type=int, default=150, help="searches in each search phase")
    parser.add_argument("--pace", type=float, default=0.25, help="seconds between searches (+-50 %%)")
    parser.add_argument("--seed-passages", type=int, default=300, help="passages embedded before the phases")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not (CORPUS / "MANIFEST.tsv").is_file():
        parser.error(f"the shared corpus is missing: expected it at {CORPUS}")
    embedding_rounds.PASSAGES_PER_ROUND = ROUND_PASSAGES
    root = Path(tempfile.mkdtemp(prefix="linkly-contention-", dir=args.workdir))
    cores = os.cpu_count() or 1
    try:
        library, seeded = prepare(root, args.seed_passages)
        phases = [
            run_phase("idle", root, library, seeded, args, embed=False, search=True),
            run_phase("old, alone", root, library, seeded, args, embed=True, search=False, old=True),
            run_phase("new, alone", root, library, seeded, args, embed=True, search=False),
            run_phase("new all cores, alone", root, library, seeded, args, embed=True, search=False, threads=cores),
            run_phase("old, with searches", root, library, seeded, args, embed=True, search=True, old=True),
            run_phase("new, with searches", root, library, seeded, args, embed=True, search=True),
        ]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps({"cores": cores, "phases": phases}, indent=2))
        return 0
    print(f"{'phase':24} {'searches':>8} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'passages':>8} "
          f"{'passages/s':>10} {'busy CPUs':>9}")
    for row in phases:
        print(f"{row['phase']:24} {row.get('searches', '-'):>8} {row.get('p50_ms', '-'):>7} {row.get('p95_ms', '-'):>7} "
              f"{row.get('p99_ms', '-'):>7} {row.get('passages', '-'):>8} {row.get('passages_per_s', '-'):>10} "
              f"{row['machine_busy_cpus']:>9}")
    idle = phases[0]["p95_ms"]
    by_name = {row["phase"]: row for row in phases}
    print(f"search p95 while embedding / idle: old {by_name['old, with searches']['p95_ms'] / idle:.2f}x, "
          f"new {by_name['new, with searches']['p95_ms'] / idle:.2f}x")
    old_rate = by_name["old, alone"]["passages_per_s"]
    if old_rate:
        print(f"embedding alone, new / old: {by_name['new, alone']['passages_per_s'] / old_rate:.2f}x "
              f"({cores - 1 or 1} of {cores} cores); with every core {by_name['new all cores, alone']['passages_per_s'] / old_rate:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
