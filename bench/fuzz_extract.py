#!/usr/bin/env python3
"""Fuzz the extractors through the real indexing path: hostile files must fail alone, clearly.

    .venv/bin/python bench/fuzz_extract.py              # 1,000 mutants
    .venv/bin/python bench/fuzz_extract.py --quick      # 60 mutants (the test suite's run)
    .venv/bin/python bench/fuzz_extract.py --count 3000 --seed 7 --json

Derives mutants (see fuzz_mutations.py) from the corpus's PDF, DOCX, EPUB,
PPTX, HTML and Markdown files (`../shared/corpus` from the repository root,
without `odd/` and files over `--max-source-kb`), puts copies of a few real
files beside them as a control set, and indexes everything with
`Engine.index` in a temporary library: extraction in worker processes, each
file under `--timeout` seconds and `--memory-mb` of address space.

It reports files, indexed, failed, crashes (a worker died, by signal or
otherwise), hangs (the time limit stopped a worker), the longest time one file
took, and the largest worker RSS (VmHWM of every process under this one,
sampled every 0.1 s). It exits 1 when a file has no outcome, a failure has no
clear one-line error, a zip bomb was not refused by the zip guard, a control
file is not indexed, or the catalog and the keyword index disagree.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fuzz_mutations import SOURCE_SUFFIXES, Mutant, make_mutants  # noqa: E402

from linkly_ls.core.config import Config, LibraryConfig  # noqa: E402
from linkly_ls.core.engine import Engine  # noqa: E402
from linkly_ls.core.extract.base import ExtractLimits  # noqa: E402
from linkly_ls.core.indexing.integrity import check_integrity, keyword_chunk_counts  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
QUICK_COUNT = 60
CONTROL_FILES = [
    "notes/learning-rust/ch04-01-what-is-ownership.md",
    "web/debian-handbook/en-US/sect.apt-get.html",
    "papers/latex/pdflatex-outline.pdf",
    "documents/work/dpkg cheat sheet.docx",
    "books/epub/sample-ebook.epub",
    "slides/rust ownership - lunch and learn.pptx",
]
MAX_ERROR_CHARS = 500
#: "KeyError: 'x'": an exception that escaped the extractors' own error handling
BARE_EXCEPTION = re.compile(r"^[A-Z]\w*(Error|Exception|Warning): ")


class RssSampler(threading.Thread):
    """Peak resident memory (VmHWM) of every process below this one, sampled from /proc."""

    def __init__(self, interval_s: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.interval_s = interval_s
        self.peak_kb = 0
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(self.interval_s):
            self.sample()

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
        self.sample()

    def sample(self) -> None:
        parents: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
        me = os.getpid()
        for pid in parents:
            ancestor, hops = parents.get(pid), 0
            while ancestor not in (None, 0, 1, me) and hops < 64:
                ancestor, hops = parents.get(ancestor), hops + 1
            if ancestor == me:
                self.peak_kb = max(self.peak_kb, _vm_hwm_kb(pid))


def _vm_hwm_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def find_sources(corpus: Path, max_bytes: int) -> list[Path]:
    return sorted(
        path for path in corpus.rglob("*")
        if path.is_file() and path.suffix.lower() in SOURCE_SUFFIXES
        and path.relative_to(corpus).parts[0] != "odd" and path.name != "README.md"
        and path.stat().st_size <= max_bytes
    )


def unclear(message: str) -> str | None:
    """Why an error message is not one clear line, or None when it is."""
    if not message.strip() or message == "unknown error":
        return "empty"
    if "\n" in message or "\r" in message:
        return "more than one line"
    if "Traceback" in message:
        return "a traceback"
    if BARE_EXCEPTION.match(message):
        return "a bare Python exception, without saying what kind of file failed"
    if len(message) > MAX_ERROR_CHARS:
        return f"longer than {MAX_ERROR_CHARS} characters"
    return None


def classify(message: str) -> str:
    if "extractor crashed" in message or "extractor process died" in message:
        return "crash"
    if "took longer than" in message:
        return "hang"
    return "failed"


def evaluate(engine: Engine, mutants: list[Mutant], controls: list[Path]) -> dict[str, Any]:
    by_kind: dict[str, Counter[str]] = {}
    problems: list[str] = []
    for mutant in mutants:
        counts = by_kind.setdefault(mutant.kind, Counter())
        counts["files"] += 1
        record = engine.catalog.by_path(str(mutant.path))
        error = engine.catalog.error_for(str(mutant.path))
        if record is not None:
            counts["indexed"] += 1
            if mutant.expected_refusal:
                problems.append(f"{mutant.path.name} ({mutant.kind}) was indexed; the zip guard should refuse it")
            continue
        if error is None:
            problems.append(f"{mutant.path.name} ({mutant.kind}): neither indexed nor failed")
            continue
        outcome = classify(error.message)
        counts["failed"] += 1
        if outcome == "crash":
            counts["crashes"] += 1
        elif outcome == "hang":
            counts["hangs"] += 1
        why = unclear(error.message)
        if why:
            problems.append(f"{mutant.path.name} ({mutant.kind}): error is {why}: {error.message[:200]!r}")
        if mutant.expected_refusal and mutant.expected_refusal not in error.message:
            problems.append(f"{mutant.path.name} ({mutant.kind}): not refused by the zip guard: {error.message}")
    chunks = keyword_chunk_counts(engine.keyword)
    for control in controls:
        record = engine.catalog.by_path(str(control))
        if record is None or not chunks.get(record.doc_id):
            problems.append(f"control file {control.name} is not indexed with its chunks")
    integrity = check_integrity(engine.catalog, engine.keyword)
    problems += [f"integrity: {problem}" for problem in integrity.problems()]
    totals: Counter[str] = Counter()
    for counts in by_kind.values():
        totals.update(counts)
    return {"totals": totals, "by_kind": by_kind, "problems": problems}


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    library = root / "library"
    started = time.monotonic()
    sources = find_sources(args.corpus, args.max_source_kb * 1024)
    mutants = make_mutants(sources, args.corpus, args.count, args.seed, library / "mutants")
    controls = []
    for relative in CONTROL_FILES:
        target = library / "control" / Path(relative).name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(args.corpus / relative, target)
        controls.append(target)
    generated_s = time.monotonic() - started
    limits = ExtractLimits(ocr=args.ocr, extract_timeout_s=args.timeout, extract_memory_mb=args.memory_mb)
    config = Config(
        data_dir=root / "data", libraries=[LibraryConfig(name="fuzz", paths=[library])],
        limits=limits, raw={"embedding": {"model": "none"}},
    )
    engine = Engine(config)
    sampler = RssSampler()
    sampler.start()
    indexing_started = time.monotonic()
    try:
        (report,) = engine.index(progress=None if args.json else _progress)
        sampler.stop()
        evaluation = evaluate(engine, mutants, controls)
    finally:
        engine.close()
    totals = evaluation["totals"]
    return {
        "files": totals["files"],
        "indexed": totals["indexed"],
        "failed": totals["failed"],
        "crashes": totals["crashes"],
        "hangs": totals["hangs"],
        "max_file_seconds": round(report.slowest_seconds, 2),
        "slowest_file": Path(report.slowest_path).name,
        "max_worker_rss_mb": round(sampler.peak_kb / 1024, 1),
        "control_files": len(controls),
        "sources": len(sources),
        "seed": args.seed,
        "timeout_s": args.timeout,
        "memory_mb": args.memory_mb,
        "generate_seconds": round(generated_s, 1),
        "index_seconds": round(time.monotonic() - indexing_started, 1),
        "by_kind": {kind: dict(counts) for kind, counts in sorted(evaluation["by_kind"].items())},
        "problems": evaluation["problems"],
    }


def _progress(done: int, total: int, path: str) -> None:
    if done % 100 == 0 or done == total:
        print(f"  {done}/{total} files", file=sys.stderr, flush=True)


def print_summary(result: dict[str, Any]) -> None:
    print(f"{result['files']} mutants from {result['sources']} corpus files (seed {result['seed']}), "
          f"timeout {result['timeout_s']:g} s, memory cap {result['memory_mb']} MB per worker")
    print(f"indexed {result['indexed']}, failed {result['failed']} (crashes {result['crashes']}, "
          f"hangs {result['hangs']}); control files {result['control_files']}")
    print(f"longest file {result['max_file_seconds']} s ({result['slowest_file']}); "
          f"largest worker RSS {result['max_worker_rss_mb']} MB; "
          f"generating {result['generate_seconds']} s, indexing {result['index_seconds']} s")
    print(f"\n{'kind':26s} {'files':>6s} {'indexed':>8s} {'failed':>7s} {'crashes':>8s} {'hangs':>6s}")
    for kind, counts in result["by_kind"].items():
        print(f"{kind:26s} {counts.get('files', 0):6d} {counts.get('indexed', 0):8d} {counts.get('failed', 0):7d} "
              f"{counts.get('crashes', 0):8d} {counts.get('hangs', 0):6d}")
    if result["problems"]:
        print(f"\n{len(result['problems'])} problem(s):")
        for problem in result["problems"]:
            print(f"  - {problem}")
    else:
        print("\nevery file has an outcome, every failure one clear line; bombs refused; controls indexed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=1000, help="mutants, deep-nesting set included (default 1000)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_COUNT} mutants")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0, help="seconds per file (default 20)")
    parser.add_argument("--memory-mb", type=int, default=3072, help="address-space cap per worker (default 3072)")
    parser.add_argument("--max-source-kb", type=int, default=2048, help="skip larger corpus files (default 2048)")
    parser.add_argument("--ocr", action="store_true", help="run OCR on pages without text (off: it is slow)")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--workdir", type=Path, help="where the temporary folder goes")
    parser.add_argument("--keep", action="store_true", help="keep the mutants and the index")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    if args.quick:
        args.count = QUICK_COUNT
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="linkly-fuzz-", dir=args.workdir))
    try:
        result = run(args, root)
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_summary(result)
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
