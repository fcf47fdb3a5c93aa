#!/usr/bin/env python3
"""Language-server start: process spawn -> initialize result -> first answered workspace/symbol.

    /work/venv/bin/python bench/lsp_start.py                      # builds an index of the corpus
    /work/venv/bin/python bench/lsp_start.py --index /tmp/idx     # reuse (or build once into) a data dir
    /work/venv/bin/python bench/lsp_start.py --runs 5 --sidecar off --variants sequential

An index of the corpus (default ../shared/corpus; `linkly index`, then
vectors for `--embed-seconds`) is built once in a data dir; then, for every variant and
sidecar setting, `linkly-ls` is spawned `--runs` times over stdio with the
corpus as its workspace folder and timed as an editor sees it:

- sequential: initialize, wait for its result, initialized, workspace/symbol;
- pipelined: initialize, initialized and workspace/symbol written at once,
  right after spawn.

A workspace/symbol answer that is empty is asked again until one is not. The
script prints p50/p95/min of spawn -> initialize result and spawn -> first
non-empty workspace/symbol answer, and a `-X importtime` summary of what the
server imported before its first answer.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_client import LspProcess, RpcError, StderrLine, initialize_params  # noqa: E402
from figures import percentile  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: ../shared/corpus beside the repository (or beside the folder holding this working copy)
CORPUS = next((c for c in (REPO.parent / "shared/corpus", REPO.parent.parent / "shared/corpus") if c.is_dir()),
              REPO.parent / "shared/corpus")
BIN = Path(sys.executable).parent
VARIANTS = ("sequential", "pipelined")
ANSWER_TIMEOUT_S = 60.0
IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


@dataclass
class StartTiming:
    initialize_s: float
    first_answer_s: float
    answers: int  # how many workspace/symbol requests it took to get a non-empty answer
    results: int
    cpu_s: float  # the server's CPU time (user + system) when the first answer arrived


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process, from /proc (0 where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def environment(data_dir: Path, code: Path = REPO, importtime: bool = False) -> dict[str, str]:
    """The server's environment: this index, no config file, `code`'s linkly_ls first on the path.

    Bytecode caching stays on, as in an installed copy (compiling every module at each
    start would add a third to the start time).
    """
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["LINKLY_DATA_DIR"] = str(data_dir)
    env["LINKLY_CONFIG"] = str(data_dir.parent / "no-config.toml")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH", "")]))
    if importtime:
        env["PYTHONPROFILEIMPORTTIME"] = "1"
    return env


def build_index(corpus: Path, data_dir: Path, embed_s: float) -> None:
    """`linkly index CORPUS`, then `linkly index --wait` for at most `embed_s` seconds, once.

    Some vectors are enough for what is measured (search is hybrid as soon as any
    exist, so the first query would need the model); embedding the whole corpus takes
    tens of CPU-minutes. Interrupted embedding keeps what it computed. An existing
    catalog is reused as it is.
    """
    if (data_dir / "catalog.sqlite3").exists():
        print(f"reusing the index in {data_dir}")
        return
    print(f"indexing {corpus} into {data_dir} ...", flush=True)
    started = time.perf_counter()
    env = environment(data_dir)
    linkly = str(BIN / "linkly")
    subprocess.run([linkly, "index", str(corpus), "--library", "corpus"], env=env, check=True, stdout=subprocess.DEVNULL)
    print(f"indexed in {time.perf_counter() - started:.0f} s; computing vectors for up to {embed_s:.0f} s", flush=True)
    if embed_s > 0:
        embedding = subprocess.Popen([linkly, "index", "--wait"], env=env, stdout=subprocess.DEVNULL)
        try:
            embedding.wait(embed_s)
        except subprocess.TimeoutExpired:
            embedding.send_signal(signal.SIGINT)  # Ctrl-C: stops after the model call under way
            try:
                embedding.wait(30)
            except subprocess.TimeoutExpired:  # a long model call: kill it (what it saved stays consistent)
                embedding.kill()
                embedding.wait()


def start_once(
    data_dir: Path, corpus: Path, query: str, variant: str, sidecar: bool, code: Path = REPO, importtime: bool = False
) -> tuple[StartTiming, list[StderrLine]]:
    options = {"mcp": {"enabled": sidecar, "port": 0}}
    env = environment(data_dir, code, importtime)
    server = LspProcess([str(BIN / "linkly-ls")], env, keep_stderr=importtime, cwd=data_dir.parent)
    try:
        init_id = server.request("initialize", initialize_params(corpus, options))
        symbol_params = {"query": query}
        if variant == "pipelined":
            server.notify("initialized", {})
            symbol_id = server.request("workspace/symbol", symbol_params)
            init = server.wait(init_id, ANSWER_TIMEOUT_S)
        else:
            init = server.wait(init_id, ANSWER_TIMEOUT_S)
            server.notify("initialized", {})
            symbol_id = server.request("workspace/symbol", symbol_params)
        asked = 1
        while True:
            answer = server.wait(symbol_id, ANSWER_TIMEOUT_S)
            results = answer.body.get("result") or []
            if results:
                cpu_s = process_cpu_s(server.process.pid)
                break
            if answer.arrived - server.spawned > ANSWER_TIMEOUT_S:
                raise RpcError(f"workspace/symbol {query!r} stayed empty: {answer.body}")
            asked += 1
            symbol_id = server.request("workspace/symbol", symbol_params)
        timing = StartTiming(
            init.arrived - server.spawned, answer.arrived - server.spawned, asked, len(results), cpu_s
        )
        cutoff = answer.arrived
    finally:
        server.close()
    lines = [line for line in server.stderr_lines if line.arrived <= cutoff]
    return timing, lines


def describe(values: list[float]) -> str:
    return (
        f"p50 {statistics.median(values):6.3f}  p95 {percentile(values, 0.95):6.3f}  "
        f"min {min(values):6.3f}  max {max(values):6.3f}"
    )


def importtime_summary(lines: list[StderrLine], top: int) -> None:
    """Top-level imports by cumulative time, and self time summed per top-level package."""
    entries = []
    for line in lines:
        match = IMPORT_LINE.match(line.text)
        if match:
            self_us, cumulative_us, indent, name = match.groups()
            entries.append((int(self_us), int(cumulative_us), len(indent) // 2, name))
    if not entries:
        print("  (no -X importtime lines before the first answer)")
        return
    total = sum(entry[0] for entry in entries)
    print(f"  {len(entries)} modules imported before the first answer, {total / 1e6:.3f} s of import time")
    print("  top-level imports by cumulative time (s):")
    for self_us, cumulative_us, _, name in sorted((e for e in entries if e[2] == 0), key=lambda e: -e[1])[:top]:
        print(f"    {cumulative_us / 1e6:7.3f}  {name}")
    per_package: dict[str, int] = defaultdict(int)
    for self_us, _, _, name in entries:
        per_package[name.split(".")[0]] += self_us
    print("  self time per package (s):")
    for name, self_us in sorted(per_package.items(), key=lambda item: -item[1])[:top]:
        print(f"    {self_us / 1e6:7.3f}  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--index", type=Path, help="data dir to reuse (built there first when empty)")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--embed-seconds", type=float, default=60.0, help="when building: compute vectors this long (0: none)"
    )
    parser.add_argument("--query", default="kernel", help="workspace/symbol query (must match something)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="sequential,pipelined")
    parser.add_argument("--sidecar", choices=["on", "off", "both"], default="both")
    parser.add_argument("--top", type=int, default=12, help="rows in the import summary")
    parser.add_argument("--no-importtime", dest="importtime", action="store_false")
    parser.add_argument(
        "--code", type=Path, default=REPO, help="run linkly_ls from this working copy (default: this one), to compare"
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    corpus = args.corpus.resolve()
    if not corpus.is_dir():
        parser.error(f"{corpus} is not a folder")
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if not set(variants) <= set(VARIANTS):
        parser.error(f"--variants: choose from {', '.join(VARIANTS)}")
    sidecars = {"on": [True], "off": [False], "both": [True, False]}[args.sidecar]
    scratch = Path(tempfile.mkdtemp(prefix="linkly-lsp-start-"))
    data_dir = (args.index or scratch / "data").resolve()
    try:
        return run(args, corpus, data_dir, variants, sidecars)
    except (RpcError, subprocess.CalledProcessError) as error:
        print(f"lsp_start: {error}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(args: argparse.Namespace, corpus: Path, data_dir: Path, variants: list[str], sidecars: list[bool]) -> int:
    build_index(corpus, data_dir, args.embed_seconds)
    code = args.code.resolve()
    start_once(data_dir, corpus, args.query, "sequential", False, code)  # warm-up: disk cache, bytecode
    print(f"\nlinkly_ls from {code}")
    print(f"spawn -> initialize result / first non-empty workspace/symbol {args.query!r} (seconds, {args.runs} runs)")
    for variant in variants:
        for sidecar in sidecars:
            timings = []
            for _ in range(args.runs):
                timing, _ = start_once(data_dir, corpus, args.query, variant, sidecar, code)
                timings.append(timing)
            label = f"{variant}, sidecar {'on' if sidecar else 'off'}"
            print(f"{label:<24} initialize   {describe([t.initialize_s for t in timings])}")
            print(f"{'':<24} first answer {describe([t.first_answer_s for t in timings])}"
                  f"  (requests needed: max {max(t.answers for t in timings)}; results {timings[-1].results})")
            print(f"{'':<24} server CPU   {describe([t.cpu_s for t in timings])}  (at the first answer)")
    if args.importtime:
        timing, lines = start_once(data_dir, corpus, args.query, "sequential", sidecars[0], code, importtime=True)
        print(f"\n-X importtime, one sequential run (first answer at {timing.first_answer_s:.3f} s with the "
              "import profiler on):")
        importtime_summary(lines, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
