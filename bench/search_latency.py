"""Search latency at about 5k, 50k, 500k and 1M chunks: p50/p95/max, query embedding share, peak RSS.

Usage:
    python bench/search_latency.py                       # all levels (builds missing ones first)
    python bench/search_latency.py --levels 5k,50k --rebuild
    python bench/search_latency.py --cache DIR --json

Indexes are built by `search_build.py` in the bench cache (default
~/.cache/linkly-bench/search) and reused by later runs. Each level is then
searched in a fresh process: one warm-up search per mode, then every query of
the query set once, keyword-only and hybrid, through the `search` tool function
that the MCP server, the language server and the CLI call (default limit).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_build import IR_COLLECTIONS, SHARED, build_level, log  # noqa: E402

LEVELS = {"5k": 5_000, "50k": 50_000, "500k": 500_000, "1m": 1_000_000}
#: p95 goals in ms (keyword, hybrid) and the peak-RSS goal in MB, per level
GOALS = {
    "5k": (50.0, 150.0, 500.0),
    "50k": (50.0, 150.0, 500.0),
    "500k": (100.0, 300.0, None),
    "1m": (100.0, 300.0, 1500.0),
}
IR_QUERIES_PER_COLLECTION = 20
#: LISA's requests (paragraphs of 30-100 words) are not indexed here; they time queries of several sentences,
#: each sentence embedded and searched as a view of its own (core/search/query_views.py)
LONG_REQUESTS = ("lisa", 10)
CORPUS_QUERIES = [
    ("short", "ownership"),
    ("short", "borrow checker"),
    ("short", "apt sources.list"),
    ("short", "regression"),
    ("short", "TLS handshake"),
    ("long", "how do I deploy an astro site with server side rendering to a node adapter and configure the output"),
    ("long", "which command shows the packages that depend on a given package and how are conflicts resolved"),
    ("long", "what is the difference between a vector and a slice when passing data to a function in rust"),
    ("phrase", '"error handling"'),
    ("phrase", '"linear model"'),
    ("phrase", '"content collections"'),
    ("non-English", "Komponenten und Seiten erstellen"),
    ("non-English", "installer les dépendances du projet"),
    ("non-English", "软件包管理"),
    ("non-English", "Grundgruppe und Überlagerung"),
    ("no-match", "zqxjv vlorbfast quuxification"),
    ("no-match", "xylophone marmalade submarine"),
]
WARM_UP = "getting started"


def query_set(shared: Path) -> list[tuple[str, str]]:
    """(kind, text): every k-th IR query of each collection, then the corpus-style queries."""
    queries: list[tuple[str, str]] = []
    for name in IR_COLLECTIONS:
        lines = (shared / "ir" / name / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        texts = [json.loads(line)["text"] for line in lines if line.strip()]
        step = max(1, len(texts) // IR_QUERIES_PER_COLLECTION)
        queries.extend((f"ir-{name}", text) for text in texts[::step][:IR_QUERIES_PER_COLLECTION])
    name, count = LONG_REQUESTS
    requests = shared / "ir" / name / "queries.jsonl"
    if requests.exists():
        texts = [json.loads(line)["text"] for line in requests.read_text(encoding="utf-8").splitlines() if line.strip()]
        queries.extend(("several sentences", text) for text in texts[:: max(1, len(texts) // count)][:count])
    return queries + CORPUS_QUERIES


def measure(data_dir: Path, shared: Path) -> dict:
    """In this (fresh) process: time every query in both modes; returns the figures."""
    from linkly_ls.core.config import Config
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools.search import search

    opened = time.perf_counter()
    engine = Engine(Config(data_dir=data_dir))
    open_ms = (time.perf_counter() - opened) * 1000
    embedder = engine.vectors.provider.current()
    embed_ms: list[float] = []
    if embedder is not None:
        real_embed = embedder.embed_query

        def timed_embed(text: str):
            started = time.perf_counter()
            try:
                return real_embed(text)
            finally:
                embed_ms.append((time.perf_counter() - started) * 1000)

        embedder.embed_query = timed_embed  # type: ignore[method-assign]
    queries = query_set(shared)
    figures: dict = {"open_ms": open_ms, "queries": len(queries), "modes": {}}
    for mode in ("keyword", "hybrid"):
        engine.search_mode = mode
        warm = time.perf_counter()
        search(engine, query=WARM_UP)
        warm_ms = (time.perf_counter() - warm) * 1000
        embed_ms.clear()
        wall, cpu, modes, by_kind = [], [], set(), {}
        for kind, text in queries:
            started, started_cpu = time.perf_counter(), time.process_time()
            result = search(engine, query=text)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
            modes.add(result.mode)
            by_kind.setdefault(kind, []).append(wall[-1])
        figures["modes"][mode] = {
            "warm_up_ms": warm_ms,
            "wall_ms": wall,
            "cpu_ms": cpu,
            "embed_ms": list(embed_ms),
            "modes_seen": sorted(modes),
            "by_kind_p50": {kind: statistics.median(values) for kind, values in by_kind.items()},
        }
    figures["peak_rss_mb"] = peak_rss_mb()
    figures["chunks"] = engine.keyword.num_chunks()
    figures["documents"] = engine.catalog.count()
    engine.close()
    return figures


def peak_rss_mb() -> float:
    """This process's peak RSS. `ru_maxrss` keeps the peak of the process that started it (Linux carries it
    across exec), which is the level's build when it ran in the same command; `VmHWM` is this program's own."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def disk_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_blocks * 512 / 1e6
    return sum(p.stat().st_blocks * 512 for p in path.rglob("*") if p.is_file()) / 1e6 if path.exists() else 0.0


def index_sizes(data_dir: Path) -> dict[str, float]:
    catalog = sum(disk_mb(p) for p in data_dir.glob("catalog.sqlite3*"))
    return {"catalog": catalog, "keyword": disk_mb(data_dir / "keyword"), "vectors": disk_mb(data_dir / "vectors")}


def run_level(data_dir: Path, shared: Path) -> dict:
    """Measure one level in a fresh child process."""
    command = [sys.executable, __file__, "--measure", str(data_dir), "--shared", str(shared)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode != 0:
        raise SystemExit(f"measuring {data_dir} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def report(name: str, figures: dict, sizes: dict[str, float]) -> list[str]:
    keyword_goal, hybrid_goal, rss_goal = GOALS[name]
    lines = [
        f"== {name}: {figures['chunks']:,} chunks, {figures['documents']:,} documents, {figures['queries']} queries; "
        f"open {figures['open_ms']:.0f} ms; peak RSS {figures['peak_rss_mb']:.0f} MB"
        + (f" (goal <= {rss_goal:.0f}: {'PASS' if figures['peak_rss_mb'] <= rss_goal else 'FAIL'})" if rss_goal else ""),
        f"   on disk: catalog {sizes['catalog']:.1f} MB, keyword {sizes['keyword']:.1f} MB, vectors {sizes['vectors']:.1f} MB",
        f"   {'mode':<8} {'p50':>7} {'p95':>7} {'max':>7} {'cpu p50':>8} {'cpu p95':>8} {'embed p50':>10} {'embed share':>12}"
        "  goal p95 (wall)",
    ]
    for mode, goal in (("keyword", keyword_goal), ("hybrid", hybrid_goal)):
        data = figures["modes"][mode]
        wall, embed = data["wall_ms"], data["embed_ms"]
        p95 = percentile(wall, 0.95)
        share = sum(embed) / sum(wall) if embed else 0.0
        embed_p50 = f"{statistics.median(embed):.1f}" if embed else "-"
        lines.append(
            f"   {mode:<8} {statistics.median(wall):7.1f} {p95:7.1f} {max(wall):7.1f} {statistics.median(data['cpu_ms']):8.1f} "
            f"{percentile(data['cpu_ms'], 0.95):8.1f} "
            f"{embed_p50:>10} {share:11.0%}   <= {goal:.0f} {'PASS' if p95 <= goal else 'FAIL'}"
            + ("" if data["modes_seen"] == [mode] else f"  (ranked as {','.join(data['modes_seen'])}!)")
        )
        kinds = ", ".join(f"{kind} {ms:.0f}" for kind, ms in data["by_kind_p50"].items())
        lines.append(f"            p50 by query kind (ms): {kinds}")
    return lines


def growth(first: str, last: str, figures: dict[str, dict], sizes: dict[str, dict[str, float]]) -> list[str]:
    """How p95 latency, peak RSS and size on disk grew from one level to another."""
    a, b = figures[first], figures[last]
    lines = [f"== growth {first} -> {last}: chunks x{b['chunks'] / a['chunks']:.1f}"]
    for mode in ("keyword", "hybrid"):
        before, after = percentile(a["modes"][mode]["wall_ms"], 0.95), percentile(b["modes"][mode]["wall_ms"], 0.95)
        lines.append(f"   {mode} p95 {before:.1f} -> {after:.1f} ms (x{after / before:.2f})")
    lines.append(f"   peak RSS {a['peak_rss_mb']:.0f} -> {b['peak_rss_mb']:.0f} MB (x{b['peak_rss_mb'] / a['peak_rss_mb']:.2f})")
    on_disk = {name: sum(level.values()) for name, level in sizes.items()}
    lines.append(f"   on disk {on_disk[first]:.0f} -> {on_disk[last]:.0f} MB (x{on_disk[last] / on_disk[first]:.1f})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--levels", default=",".join(LEVELS), help="comma-separated, smallest first: 5k,50k,500k,1m")
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "linkly-bench" / "search")
    parser.add_argument("--shared", type=Path, default=SHARED, help="folder holding ir/ and corpus/")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the levels' indexes")
    parser.add_argument(
        "--corpus-chunks",
        type=int,
        help="copy only about this many chunks' worth of the corpus (fewer distinct passages to embed); default: all",
    )
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--json", action="store_true", help="also print the raw figures as JSON")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.shared)))
        return
    names = [name.strip() for name in args.levels.split(",") if name.strip()]
    unknown = [name for name in names if name not in LEVELS]
    if unknown:
        parser.error(f"unknown level(s) {', '.join(unknown)}; known: {', '.join(LEVELS)}")
    if not (args.shared / "ir").is_dir() or not (args.shared / "corpus").is_dir():
        parser.error(f"{args.shared} has no ir/ and corpus/ folders; pass --shared")
    data_dirs = {}
    for name in names:
        started = time.monotonic()
        data_dirs[name] = build_level(args.cache, name, LEVELS[name], args.rebuild, args.corpus_chunks)
        log(f"{name}: index ready in {data_dirs[name]} ({time.monotonic() - started:.0f} s)")
    if args.build_only:
        return
    collected, sizes = {}, {}
    for name in names:
        figures = run_level(data_dirs[name], args.shared)
        collected[name], sizes[name] = figures, index_sizes(data_dirs[name])
        print("\n".join(report(name, figures, sizes[name])), flush=True)
    if len(names) > 1:
        print("\n".join(growth(names[0], names[-1], collected, sizes)), flush=True)
    if args.json:
        print(json.dumps(collected))


if __name__ == "__main__":
    main()
