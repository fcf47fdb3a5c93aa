"""Vector coverage: time until every chunk of a corpus has a vector, with search latency meanwhile.

Usage:
    python bench/vector_coverage.py                      # ../shared/corpus, full coverage
    python bench/vector_coverage.py --limit 1500         # stop after 1,500 chunks have vectors
    python bench/vector_coverage.py --copies 4           # 4 copies of the corpus (~60k chunks)
    python bench/vector_coverage.py --data-dir DIR       # start from an existing keyword index
    python bench/vector_coverage.py --first-pass         # the first vector pass on (linkly's default; off without
                                                         # the flag, to time the model alone): first-pass coverage too
    python bench/vector_coverage.py --first-pass --collection ../shared/ir/medline   # and search quality at each point

1. Keyword-indexes the corpus (`linkly index CORPUS`) into a temporary
   LINKLY_DATA_DIR, or copies the catalog and keyword index of `--data-dir`
   (never writing there) and drops any vectors it had.
2. Runs `linkly index --wait` (re-index, nothing changed, then embed every
   chunk with the default model: the same code `serve` runs in its background
   thread) and follows it: chunks with vectors (committed every few seconds),
   chunks/s, peak RSS of the process and of its process tree (sampled from
   /proc), CPU time (from wait4).
3. Meanwhile, from this process, runs a keyword and a hybrid search every
   `--search-every` seconds through the `search` tool on the same index and
   prints their latency p50/p95 (and the mode search actually used: hybrid
   falls back to keywords until vectors exist).

With `--collection DIR` (a labelled collection of `../shared/ir`) the library is
that collection instead of the corpus, and nDCG@10 is measured after keyword
indexing, when every chunk has a first-pass vector, and when every chunk is
refined, each with its time as a multiple of the keyword-indexing time
(`coverage_quality.py`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from coverage_quality import CollectionProbe  # the bench folder is the script's folder, first on sys.path
from figures import percentile

REPOSITORY = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPOSITORY.parent / "shared" / "corpus"
LINKLY = Path(sys.executable).parent / "linkly"
MODEL_ID = "linkly/all-MiniLM-L6-v2-int8"
QUERIES = [
    "how to configure a network interface",
    "memory allocation and garbage collection",
    "linear regression with several variables",
    "history of the winter olympics",
    "install packages from the command line",
    "file system hierarchy standard directories",
    "probability distribution of a random variable",
    "treatment of patients with heart disease",
]


@dataclass
class Samples:
    """What the watcher threads collected."""

    tree_rss_mb: float = 0.0
    process_rss_mb: float = 0.0
    progress: list[tuple[float, int]] = field(default_factory=list)
    #: (seconds, chunks with first-pass vectors)
    first_pass: list[tuple[float, int]] = field(default_factory=list)
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"keyword": [], "hybrid": []})
    modes: dict[str, set[str]] = field(default_factory=lambda: {"keyword": set(), "hybrid": set()})
    search_errors: list[str] = field(default_factory=list)


def environment(data_dir: Path, config: Path) -> dict[str, str]:
    env = dict(os.environ, LINKLY_DATA_DIR=str(data_dir), LINKLY_CONFIG=str(config))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPOSITORY), os.environ.get("PYTHONPATH")]))
    return env


def write_config(path: Path, threads: int | None, batch_tokens: int | None, first_pass: bool = False) -> None:
    lines = ["[embedding]", f"first_pass = {'true' if first_pass else 'false'}"]
    if threads:
        lines.append(f"threads = {threads}")
    if batch_tokens:
        lines.append(f"batch_tokens = {batch_tokens}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def keyword_index(corpus: Path, copies: int, workdir: Path, env: dict[str, str]) -> None:
    """`linkly index` of the corpus (and of its copies, each a library of its own)."""
    folders = [corpus]
    for number in range(1, copies):
        copy = workdir / f"corpus-copy{number}"
        if not copy.exists():
            shutil.copytree(corpus, copy, symlinks=True)
        folders.append(copy)
    for number, folder in enumerate(folders):
        started = time.monotonic()
        name = "corpus" if number == 0 else f"corpus-copy{number}"
        subprocess.run([str(LINKLY), "index", str(folder), "--library", name], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"keyword index of {folder}: {time.monotonic() - started:.1f} s", flush=True)


def copy_keyword_index(source: Path, target: Path) -> None:
    """The catalog and keyword index of an existing data dir, without its vectors."""
    if not (source / "catalog.sqlite3").is_file():
        raise SystemExit(f"error: {source} has no catalog.sqlite3 (not a linkly data dir)")
    from linkly_ls.core.store.catalog import Catalog
    from linkly_ls.core.store.schema import copy_database
    from linkly_ls.core.store.vector_rows import forget_all_vectors

    target.mkdir(parents=True, exist_ok=True)
    copy_database(source / "catalog.sqlite3", target / "catalog.sqlite3")
    shutil.copytree(source / "keyword", target / "keyword")
    catalog = Catalog(target / "catalog.sqlite3")
    try:
        forget_all_vectors(catalog)
    finally:
        catalog.close()


def count_chunks(data_dir: Path) -> int:
    """Passages the embedding has to cover: every document's, as VectorSync cuts them."""
    from linkly_ls.core.store.catalog import Catalog
    from linkly_ls.core.search.chunking import embedding_passages

    catalog = Catalog(data_dir / "catalog.sqlite3")
    try:
        doc_ids = catalog.doc_ids()
        records = catalog.get_many(doc_ids)
        return sum(
            len(embedding_passages(catalog.lines(doc_id), records[doc_id].outline, records[doc_id].page_starts))
            for doc_id in doc_ids
            if doc_id in records
        )
    finally:
        catalog.close()


def vector_rows(database: Path, model_id: str = MODEL_ID) -> int:
    from linkly_ls.core.store.catalog import Catalog, StoreError
    from linkly_ls.core.store.vector_rows import VectorRows

    try:
        catalog = Catalog(database, read_only=True)
        try:
            return VectorRows(catalog, model_id).count()
        finally:
            catalog.close()
    except StoreError:
        return 0


def process_tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    tree, stack = [], [root]
    while stack:
        pid = stack.pop()
        tree.append(pid)
        stack.extend(children.get(pid, []))
    return tree


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def watch_memory(pid: int, samples: Samples, stop: threading.Event) -> None:
    while not stop.wait(0.2):
        own = rss_mb(pid)
        samples.process_rss_mb = max(samples.process_rss_mb, own)
        samples.tree_rss_mb = max(samples.tree_rss_mb, sum(rss_mb(p) for p in process_tree(pid)))


def watch_progress(database: Path, started: float, target: int, samples: Samples, stop: threading.Event,
                   reached: threading.Event, total: int, first_pass_on: bool,
                   on_first_pass: Callable[[float], None] | None = None) -> None:
    """Samples coverage each second (the first pass's, when on, each 0.1 s until it is complete);
    `on_first_pass(seconds)` runs once, when all `total` chunks have first-pass vectors."""
    from linkly_ls.core.embedding.static import STATIC_MODEL_ID

    last_print, last_sample, first_pending = 0.0, -1.0, first_pass_on
    while not stop.wait(0.1 if first_pending else 1.0):
        now = time.monotonic() - started
        if first_pending:
            first_pass = vector_rows(database, STATIC_MODEL_ID)
            samples.first_pass.append((now, first_pass))
            first_pending = first_pass < total
            if not first_pending and on_first_pass is not None:
                on_first_pass(now)
            if now - last_sample < 1.0 and first_pending:
                continue
        last_sample = now
        rows = vector_rows(database)
        samples.progress.append((now, rows))
        if rows >= target:
            reached.set()
        if now - last_print >= 10 or rows >= target:
            last_print = now
            recent = [point for point in samples.progress if point[0] >= now - 30]
            window = (recent[-1][1] - recent[0][1]) / max(recent[-1][0] - recent[0][0], 1e-9) if len(recent) > 1 else 0
            print(f"  {now:6.0f} s  {rows:>6}/{target} chunks  {rows / max(now, 1e-9):5.1f}/s overall  "
                  f"{window:5.1f}/s last 30 s  rss {samples.process_rss_mb:.0f} MB", flush=True)


def run_searches(data_dir: Path, config: Path, every: float, samples: Samples, stop: threading.Event) -> None:
    """Keyword and hybrid searches through the `search` tool, from this process, while embedding runs."""
    os.environ["LINKLY_DATA_DIR"], os.environ["LINKLY_CONFIG"] = str(data_dir), str(config)
    from linkly_ls.core.config import load_config
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools.search import search

    engine = Engine(load_config())
    number = 0
    while not stop.wait(every):
        query = QUERIES[number % len(QUERIES)]
        number += 1
        for mode in ("keyword", "hybrid"):
            engine.search_mode = mode if mode == "keyword" else "auto"
            started = time.perf_counter()
            try:
                result = search(engine, query=query, limit=10)
            except Exception as error:  # a failed search is a finding: keep measuring the others
                samples.search_errors.append(f"{mode} {query!r}: {type(error).__name__}: {error}")
                continue
            samples.latencies[mode].append((time.perf_counter() - started) * 1000)
            samples.modes[mode].add(result.mode)
    engine.close()


def embed(data_dir: Path, config: Path, env: dict[str, str], limit: int | None, every: float,
          probe: CollectionProbe | None = None, first_pass_on: bool = False) -> None:
    total = count_chunks(data_dir)
    target = min(total, limit) if limit else total
    print(f"chunks to embed: {total}" + (f" (stopping at {target})" if limit else ""), flush=True)
    samples, stop, reached = Samples(), threading.Event(), threading.Event()
    database = data_dir / "catalog.sqlite3"
    log = (data_dir.parent / "index-wait.log").open("w")
    started = time.monotonic()
    process = subprocess.Popen([str(LINKLY), "index", "--wait"], env=env, stdout=log, stderr=subprocess.STDOUT)
    on_first_pass = None
    if probe is not None:
        def on_first_pass(seconds: float) -> None:
            probe.score_paused("first pass", process.pid, probe.keyword_seconds + seconds, data_dir, config)
    threads = [
        threading.Thread(target=watch_memory, args=(process.pid, samples, stop), daemon=True),
        threading.Thread(target=watch_progress, args=(database, started, target, samples, stop, reached, total, first_pass_on, on_first_pass),
                         daemon=True),
        threading.Thread(target=run_searches, args=(data_dir, config, every, samples, stop), daemon=True),
    ]
    for thread in threads:
        thread.start()
    stopped_early = False
    while True:  # wait4, not Popen.poll: it reaps the process without giving its rusage
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if limit and reached.is_set():
            stopped_early = True
            process.send_signal(signal.SIGTERM)
            _, status, usage = os.wait4(process.pid, 0)
            break
        time.sleep(0.2)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - started
    stop.set()
    for thread in threads:
        thread.join(timeout=60)
    log.close()
    rows = vector_rows(database)
    samples.progress.append((wall, rows))  # the sampler may have stopped between its last poll and the exit
    reached_at = next((at for at, count in samples.progress if count >= target), None)
    first_at = next((at for at, count in samples.first_pass if count >= total), None)
    cpu = usage.ru_utime + usage.ru_stime
    print()
    print(f"chunks with vectors: {rows}/{total}" + ("  (stopped at --limit)" if stopped_early else ""))
    if reached_at is not None:
        print(f"time to {target} chunks: {reached_at:.1f} s ({target / reached_at:.1f} chunks/s)")
    else:
        print(f"coverage NOT reached; see {data_dir.parent / 'index-wait.log'} (exit status {status})")
    if first_at is not None:
        print(f"time to all {total} chunks with first-pass vectors: {first_at:.1f} s (sampled every 0.1 s)")
    print(f"linkly index --wait: wall {wall:.1f} s, CPU {cpu:.1f} s ({cpu / max(rows, 1) * 1000:.1f} CPU-ms/chunk, "
          f"{cpu / wall:.2f} cores)")
    print(f"peak RSS: process {usage.ru_maxrss / 1024:.0f} MB (wait4), sampled {samples.process_rss_mb:.0f} MB; "
          f"process tree {samples.tree_rss_mb:.0f} MB")
    print("search latency while embedding (this process, `search` tool, limit 10):")
    for mode, values in samples.latencies.items():
        used = ",".join(sorted(samples.modes[mode])) or "-"
        print(f"  {mode:<8} n={len(values):<4} p50 {percentile(values, 0.5):7.1f} ms  p95 {percentile(values, 0.95):7.1f} ms"
              f"  max {max(values, default=float('nan')):7.1f} ms  (modes used: {used})")
    for error in samples.search_errors[:5]:
        print(f"  search error: {error}")
    if probe is not None and reached_at is not None:
        print(f"(the refining process was stopped {probe.paused_seconds:.1f} s while the first pass was scored; "
              "the refined point leaves that out)")
        probe.score("refined", "hybrid", probe.keyword_seconds + reached_at - probe.paused_seconds, data_dir, config)
        print("\n".join(probe.report()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--data-dir", type=Path, help="copy the keyword index from this data dir instead of indexing")
    parser.add_argument("--copies", type=int, default=1, help="index the corpus this many times (as libraries)")
    parser.add_argument("--limit", type=int, help="stop once this many chunks have vectors")
    parser.add_argument("--search-every", type=float, default=3.0, help="seconds between searches")
    parser.add_argument("--threads", type=int, help="[embedding] threads (default: every core)")
    parser.add_argument("--batch-tokens", type=int, help="[embedding] batch_tokens")
    parser.add_argument("--workdir", type=Path, help="where the temporary folder goes")
    parser.add_argument("--first-pass", action="store_true",
                        help="[embedding] first_pass = true, linkly's default (without it the bench turns the first "
                             "pass off, to time the model alone)")
    parser.add_argument("--collection", type=Path,
                        help="a labelled collection (a folder of ../shared/ir) as the library: search quality at each point")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    if args.collection and not (args.collection / "qrels.tsv").is_file():
        print(f"error: {args.collection} is not a labelled collection (no qrels.tsv)", file=sys.stderr)
        return 2
    if args.data_dir is None and args.collection is None and not args.corpus.is_dir():
        print(f"error: corpus folder {args.corpus} not found", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="vector-coverage-", dir=args.workdir))
    try:
        data_dir, config = workdir / "data", workdir / "config.toml"
        write_config(config, args.threads, args.batch_tokens, args.first_pass)
        env = environment(data_dir, config)
        probe = None
        if args.collection:
            probe = CollectionProbe(args.collection, workdir / "library")
            probe.keyword_index(LINKLY, env)
            probe.score("keyword", "keyword", probe.keyword_seconds, data_dir, config)
        elif args.data_dir:
            copy_keyword_index(args.data_dir, data_dir)
        else:
            keyword_index(args.corpus, max(1, args.copies), workdir, env)
        embed(data_dir, config, env, args.limit, args.search_every, probe, args.first_pass)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
