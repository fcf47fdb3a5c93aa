#!/usr/bin/env python3
"""`grep` and `read` speed on one large document, beside ripgrep on the same text.

Indexes a document (default: the 2,415-page R reference manual of the shared
corpus) or a folder (then its document with the most lines is used) into a
temporary LINKLY_DATA_DIR, writes the document's extracted lines to a text
file, and times:

- the core `grep` tool function (what the CLI, MCP and LSP faces call), result
  rendered as markdown, for a set of patterns, each beside `rg` on the text
  file with comparable flags; match counts are compared and any disagreement
  is printed loudly;
- `read` of 500 lines at the start, middle and end, and of a page range (read
  takes line offsets; the page's first line comes from the catalog's page
  starts);

each warm (repeated calls in one process) and cold (the first call in a fresh
process right after opening the index; the OS page cache stays warm).

    .venv/bin/python bench/grep_read_bench.py
    .venv/bin/python bench/grep_read_bench.py --runs 50 --cold-runs 10
    .venv/bin/python bench/grep_read_bench.py ~/Documents/big.pdf --keep
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
#: the shared corpus sits beside the repository (or beside the folder of its worktrees)
DEFAULT_DOCUMENT = next(
    (
        root / "shared" / "corpus" / "books" / "R" / "R-fullrefman.pdf"
        for root in (REPO_ROOT.parent, REPO_ROOT.parent.parent)
        if (root / "shared" / "corpus").is_dir()
    ),
    REPO_ROOT.parent / "shared" / "corpus" / "books" / "R" / "R-fullrefman.pdf",
)
LIBRARY = "bench"
READ_LIMIT = 500
#: "wall" (default) or "cpu": CPU time of the calling process (for rg: of the rg process)
CLOCK = os.environ.get("GREP_READ_BENCH_CLOCK", "wall")


def _clock() -> float:
    return time.process_time() if CLOCK == "cpu" else time.perf_counter()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass
class GrepCase:
    name: str
    arguments: dict[str, Any]
    rg_flags: list[str]
    #: patterns that can match across a line break in linkly (a space, \s) count differently in rg
    note: str = ""


GREP_CASES = [
    GrepCase("rare literal", {"pattern": "mahalanobis"}, []),
    GrepCase("common word", {"pattern": "the"}, []),
    GrepCase("case-insensitive", {"pattern": "regression", "case_insensitive": True}, ["-i"]),
    GrepCase("regex", {"pattern": r"\b[a-z]+\.[a-z]+\("}, []),
    GrepCase("no match", {"pattern": "zqxjkv"}, []),
    GrepCase("line-anchored", {"pattern": "^Usage"}, []),
    GrepCase("context 2/10", {"pattern": "Usage", "before": 2, "after": 10}, ["-B", "2", "-A", "10"]),
    GrepCase("max results 100", {"pattern": "Examples", "limit": 100}, ["-m", "100"]),
    GrepCase("count mode", {"pattern": "the", "output_mode": "count"}, ["-c"]),
]


@dataclass
class Timing:
    samples_ms: list[float] = field(default_factory=list)

    def summary(self) -> str:
        if not self.samples_ms:
            return f"{'-':>8} {'-':>8} {'-':>8}"
        ordered = sorted(self.samples_ms)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return f"{statistics.median(ordered):8.2f} {p95:8.2f} {ordered[0]:8.2f}"

    @property
    def median(self) -> float:
        return statistics.median(self.samples_ms) if self.samples_ms else float("nan")


def read_cases(total_lines: int, page_starts: list[int]) -> dict[str, dict[str, Any]]:
    middle = max(1, total_lines // 2 - READ_LIMIT // 2)
    cases = {
        "start (lines 1-500)": {"offset": 1, "limit": READ_LIMIT},
        f"middle (from {middle})": {"offset": middle, "limit": READ_LIMIT},
        f"end (from {max(1, total_lines - READ_LIMIT + 1)})": {
            "offset": max(1, total_lines - READ_LIMIT + 1),
            "limit": READ_LIMIT,
        },
    }
    if len(page_starts) >= 10:
        first_page = len(page_starts) // 2
        last_page = min(len(page_starts), first_page + 4)
        start = page_starts[first_page - 1]
        end = page_starts[last_page] - 1 if last_page < len(page_starts) else total_lines
        cases[f"pages {first_page}-{last_page}"] = {"offset": start, "limit": max(1, min(READ_LIMIT, end - start + 1))}
    return cases


# --------------------------------------------------------------------------- in-process calls


def _call(engine: Any, tool: str, doc_id: str, arguments: dict[str, Any]) -> tuple[float, Any]:
    from linkly_ls.core.tools import call_tool

    started = _clock()
    result = call_tool(engine, tool, {"doc_id": doc_id, **arguments})
    result.to_markdown()
    return (_clock() - started) * 1000, result


def _cold_main(argv: list[str]) -> int:
    """`grep_read_bench.py __cold__ TOOL DOC_ID ARGUMENTS_JSON`: open the index, time one call."""
    from linkly_ls.core.engine import Engine

    tool, doc_id, arguments = argv[0], argv[1], json.loads(argv[2])
    engine = Engine()
    elapsed_ms, _ = _call(engine, tool, doc_id, arguments)
    print(json.dumps({"ms": elapsed_ms}))
    return 0


def cold_timing(env: dict[str, str], tool: str, doc_id: str, arguments: dict[str, Any], runs: int) -> Timing:
    timing = Timing()
    for _ in range(runs):
        output = subprocess.run(
            [sys.executable, __file__, "__cold__", tool, doc_id, json.dumps(arguments)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        timing.samples_ms.append(json.loads(output.stdout.strip().splitlines()[-1])["ms"])
    return timing


# --------------------------------------------------------------------------- ripgrep


def rg_run(text_file: Path, pattern: str, flags: list[str]) -> tuple[float, str]:
    """One `rg` run with its output captured through a pipe (as a caller would read it)."""
    started, started_cpu = time.perf_counter(), _children_cpu()
    output = subprocess.run(
        ["rg", "--no-config", "--no-filename", "-n", *flags, "--", pattern, str(text_file)],
        capture_output=True,
        text=True,
    )
    elapsed = ((_children_cpu() - started_cpu) if CLOCK == "cpu" else (time.perf_counter() - started)) * 1000
    if output.returncode not in (0, 1):
        raise RuntimeError(f"rg failed: {output.stderr.strip()}")
    return elapsed, output.stdout


def rg_count(text_file: Path, pattern: str, case_insensitive: bool) -> int:
    flags = ["-c"] + (["-i"] if case_insensitive else [])
    _, out = rg_run(text_file, pattern, flags)
    return int(out.strip() or 0)


# --------------------------------------------------------------------------- setup


def index(target: Path, env: dict[str, str]) -> None:
    linkly = Path(sys.executable).parent / "linkly"
    command = [str(linkly), "index", str(target), "--library", LIBRARY]
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"indexing failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}")
    print(f"indexed {target} in {time.perf_counter() - started:.1f} s: {done.stdout.strip()}")


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", nargs="?", type=Path, default=DEFAULT_DOCUMENT, help="a document or a folder")
    parser.add_argument("--runs", type=int, default=30, help="warm calls per case (default 30)")
    parser.add_argument("--cold-runs", type=int, default=5, help="fresh processes per case (default 5)")
    parser.add_argument("--rg-runs", type=int, default=10, help="rg runs per case (default 10)")
    parser.add_argument("--no-rg", action="store_true", help="do not run ripgrep")
    parser.add_argument("--workdir", type=Path, help="where the temporary folder goes")
    parser.add_argument("--keep", action="store_true", help="keep the temporary index and text file")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="report CPU time instead of wall time (steadier on a busy machine; rg: its process's CPU time)",
    )
    return parser.parse_args()


def main() -> int:
    global CLOCK
    args = parse_args()
    if args.cpu:
        CLOCK = os.environ["GREP_READ_BENCH_CLOCK"] = "cpu"
    target = args.target.expanduser().resolve()
    if not target.exists():
        print(f"error: {target} does not exist", file=sys.stderr)
        return 2
    has_rg = shutil.which("rg") is not None and not args.no_rg
    if not has_rg and not args.no_rg:
        print("note: ripgrep (rg) is not installed (apt-get install -y ripgrep); timing linkly alone")
    workdir = Path(tempfile.mkdtemp(prefix="linkly-grepread-", dir=args.workdir))
    try:
        env = dict(os.environ)
        env["LINKLY_DATA_DIR"] = str(workdir / "data")
        env["LINKLY_CONFIG"] = str(workdir / "no-config.toml")
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
        os.environ.update({key: env[key] for key in ("LINKLY_DATA_DIR", "LINKLY_CONFIG")})
        index(target, env)
        run(args, env, workdir, has_rg)
    finally:
        if args.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


def run(args: argparse.Namespace, env: dict[str, str], workdir: Path, has_rg: bool) -> None:
    sys.path.insert(0, str(REPO_ROOT))
    from linkly_ls.core.engine import Engine

    engine = Engine()
    documents = engine.catalog.all_documents()
    if not documents:
        raise SystemExit("nothing was indexed")
    record = max(documents, key=lambda doc: doc.total_lines)
    text_file = workdir / "extracted.txt"
    lines = engine.catalog.lines(record.doc_id)
    text_file.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    print(
        f"document {record.doc_id} {record.title!r}: {record.total_lines} lines, {len(record.page_starts)} pages, "
        f"{text_file.stat().st_size / 1e6:.1f} MB of text ({text_file})"
    )
    print(f"warm: {args.runs} calls after one untimed call; cold: first call in {args.cold_runs} fresh processes")
    print(
        f"{CLOCK} times in ms (p50 p95 min); rg: whole process, output read through a pipe, {args.rg_runs} runs\n"
    )
    header = f"{'grep case':22} {'matches':>8} | {'warm p50':>8} {'p95':>8} {'min':>8} | {'cold p50':>8} {'p95':>8} {'min':>8}"
    if has_rg:
        header += f" | {'rg p50':>8} {'p95':>8} {'min':>8} | warm/rg"
    print(header)
    print("-" * len(header))
    disagreements: list[str] = []
    from linkly_ls.core.tools import ToolError

    for case in GREP_CASES:
        try:
            _, result = _call(engine, "grep", record.doc_id, case.arguments)
            warm = Timing([_call(engine, "grep", record.doc_id, case.arguments)[0] for _ in range(args.runs)])
            cold = cold_timing(env, "grep", record.doc_id, case.arguments, args.cold_runs)
        except (ToolError, subprocess.CalledProcessError) as error:
            message = getattr(error, "stderr", None) or str(error)
            print(f"{case.name:22} FAILED: {message.strip().splitlines()[-1]}")
            disagreements.append(f"{case.name}: linkly failed")
            continue
        row = f"{case.name:22} {result.total_matches:8} | {warm.summary()} | {cold.summary()}"
        if has_rg:
            pattern = case.arguments["pattern"]
            peer = Timing([rg_run(text_file, pattern, case.rg_flags)[0] for _ in range(args.rg_runs)])
            row += f" | {peer.summary()} | {warm.median / peer.median:7.2f}"
            disagreements += compare(case, result, text_file)
        print(row)
    print()
    header = f"{'read case':26} {'lines':>6} | {'warm p50':>8} {'p95':>8} {'min':>8} | {'cold p50':>8} {'p95':>8} {'min':>8}"
    print(header)
    print("-" * len(header))
    for name, arguments in read_cases(record.total_lines, record.page_starts).items():
        _, result = _call(engine, "read", record.doc_id, arguments)
        warm = Timing([_call(engine, "read", record.doc_id, arguments)[0] for _ in range(args.runs)])
        cold = cold_timing(env, "read", record.doc_id, arguments, args.cold_runs)
        print(f"{name:26} {len(result.lines):6} | {warm.summary()} | {cold.summary()}")
    print()
    if disagreements:
        print("!" * 72)
        for line in disagreements:
            print("DISAGREEMENT: " + line)
        print("!" * 72)
    elif has_rg:
        print("linkly grep and rg agree on every match count.")


def compare(case: GrepCase, result: Any, text_file: Path) -> list[str]:
    """Match counts (matching lines) of linkly and rg; lines shown when limited."""
    pattern = case.arguments["pattern"]
    case_insensitive = bool(case.arguments.get("case_insensitive"))
    expected = rg_count(text_file, pattern, case_insensitive)
    problems = []
    if result.total_matches != expected:
        problems.append(f"{case.name} ({pattern!r}): linkly {result.total_matches} matching lines, rg {expected}")
    if result.output_mode == "content":
        limit = case.arguments.get("limit", 20)
        _, out = rg_run(text_file, pattern, ["-m", str(limit)] + (["-i"] if case_insensitive else []))
        rg_lines = [int(line.split(":", 1)[0]) for line in out.splitlines() if line]
        shown = [match.line for match in result.matches]
        if shown != rg_lines[: len(shown)] or len(shown) != min(limit, expected):
            problems.append(f"{case.name} ({pattern!r}): lines shown {shown[:5]}... vs rg {rg_lines[:5]}...")
    return problems


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "__cold__":
        sys.exit(_cold_main(sys.argv[2:]))
    sys.exit(main())
