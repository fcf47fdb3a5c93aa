#!/usr/bin/env python3
"""Crash recovery: kill -9 `linkly index` and `linkly watch` at random points, restart, compare.

    .venv/bin/python bench/crash_recovery.py                # 20 kill points
    .venv/bin/python bench/crash_recovery.py --kills 5 --json

A library of 38 real corpus files (Markdown, HTML, DOCX, EPUB, PPTX,
PDF and one broken DOCX) is indexed cleanly once for reference. Then, for
each kill point (a deterministic seed chooses it):

- `index`: `linkly index` runs and its whole process group (main process,
  forkserver, extraction workers) gets SIGKILL after N files of progress or
  after a random fraction of the measured clean-run time;
- `watch`: `linkly watch` runs while a fixed script adds, changes, renames and
  deletes files and folders, and is killed during its first indexing or in the
  middle of the script (which then finishes without a watcher).

After the kill, opening the index (as any `linkly` command does) must leave the
catalog and the keyword index in agreement (`linkly_ls.core.indexing.integrity`). Then
the same command runs again to the end, and the result must hold the same
content as a clean index of the same files: the catalog's documents and
errors, every document's chunks in the keyword index, and the documents that
a dozen searches find. Embeddings are off (`[embedding] model = "none"`).

Whether the searches also rank identically (order and relevance numbers) is
counted but not required: Tantivy keeps deleted chunks in its BM25 statistics
until segments merge, so an index that replaced or deleted documents ranks
near-ties a little differently from a fresh one, crash or no crash. A control
run of each scenario without any kill shows how much of that to expect.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crash_support import (  # noqa: E402
    SEARCH_LIMIT,
    Workspace,
    apply_changes,
    kill_group,
    restore_library,
    run_linkly,
    snapshot,
    start_linkly,
)

from linkly_ls.core.search.ranking import KEYWORD_CANDIDATE_CHUNKS  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
#: seconds between the steps of the watch scenario's change script
CHANGE_PACE_S = 0.4


@dataclass
class KillPoint:
    number: int
    scenario: str
    trigger: str
    killed: bool = False
    seconds: float = 0.0
    consistent_after_kill: bool = False
    identical: bool = False
    same_ranking: bool = False
    differences: list[str] = field(default_factory=list)


def hit_documents(hits: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return sorted((hit["doc_id"], hit["path"], hit["title"]) for hit in hits)


def compare(reference: dict[str, Any], got: dict[str, Any]) -> list[str]:
    """How the content of two snapshots differs: documents, errors, keyword chunks, documents found."""
    differences = [f"after restart: {problem}" for problem in got["integrity"]]
    for key in ("documents", "errors", "chunks"):
        if got[key] != reference[key]:
            missing = [item for item in reference[key] if item not in got[key]]
            extra = [item for item in got[key] if item not in reference[key]]
            differences.append(f"{key} differ: missing {missing[:3]}, extra {extra[:3]}")
    for query, hits in reference["search"].items():
        if hit_documents(got["search"].get(query, [])) != hit_documents(hits):
            differences.append(f"search {query!r} finds other documents")
    return differences


def same_ranking(reference: dict[str, Any], got: dict[str, Any]) -> bool:
    """Search results equal in every field, order and relevance included."""
    return got["search"] == reference["search"]


def run_index_point(workspace: Workspace, point: KillPoint, rng: random.Random, full_run_s: float) -> None:
    restore_library(workspace)
    data_dir = workspace.fresh_data_dir(f"index-{point.number}")
    if rng.random() < 0.5:
        files = rng.randrange(0, workspace.file_count)
        point.trigger = f"after {files} file(s) of progress"
        running = start_linkly(workspace, data_dir, "index")
        point.killed = running.kill_after_progress(files, timeout_s=max(60.0, 4 * full_run_s))
    else:
        delay = rng.uniform(0.0, 0.9) * full_run_s  # the clean run's time includes its exit: stay inside it
        point.trigger = f"after {delay:.2f} s"
        running = start_linkly(workspace, data_dir, "index")
        point.killed = running.kill_after(delay)
    after_kill = snapshot(workspace, data_dir)
    point.consistent_after_kill = not after_kill["integrity"]
    point.differences += [f"after kill and reopen: {problem}" for problem in after_kill["integrity"]]
    result = run_linkly(workspace, data_dir, "index")
    if result.returncode != 0:
        point.differences.append(f"restarted index failed: {result.stderr.strip()[-300:]}")
    finish(point, workspace.reference["index"], snapshot(workspace, data_dir))


def run_watch_point(workspace: Workspace, point: KillPoint, rng: random.Random, full_run_s: float) -> None:
    restore_library(workspace)
    data_dir = workspace.fresh_data_dir(f"watch-{point.number}")
    running = start_linkly(workspace, data_dir, "watch")
    if rng.random() < 0.4:
        files = rng.randrange(0, workspace.file_count)
        point.trigger = f"during the first indexing, after {files} file(s) of progress"
        point.killed = running.kill_after_progress(files, timeout_s=max(60.0, 4 * full_run_s))
        apply_changes(workspace, CHANGE_PACE_S / 4)
    else:
        if not running.wait_for_output("watching", timeout_s=max(60.0, 4 * full_run_s)):
            point.differences.append("watch never started watching")
        delay = rng.uniform(0.0, 1.0) * workspace.change_script_s(CHANGE_PACE_S)
        point.trigger = f"{delay:.2f} s into the change script"
        changer = workspace.changes_in_background(CHANGE_PACE_S)
        point.killed = running.kill_after(delay)
        changer.join()
    after_kill = snapshot(workspace, data_dir)
    point.consistent_after_kill = not after_kill["integrity"]
    point.differences += [f"after kill and reopen: {problem}" for problem in after_kill["integrity"]]
    restarted = start_linkly(workspace, data_dir, "watch")
    if not restarted.wait_for_output("watching", timeout_s=max(60.0, 4 * full_run_s)):
        point.differences.append(f"restarted watch never started watching: {restarted.output()[-300:]}")
    kill_group(restarted.process)
    finish(point, workspace.reference["watch"], snapshot(workspace, data_dir))


def finish(point: KillPoint, reference: dict[str, Any], got: dict[str, Any]) -> None:
    point.differences += compare(reference, got)
    point.identical = not point.differences
    point.same_ranking = same_ranking(reference, got)


def control_runs(workspace: Workspace) -> dict[str, dict[str, Any]]:
    """Both scenarios without a kill: does the finished index match the clean one, and rank the same?"""
    restore_library(workspace)
    data_dir = workspace.fresh_data_dir("control-index")
    run_linkly(workspace, data_dir, "index")
    index_snapshot = snapshot(workspace, data_dir)
    restore_library(workspace)
    data_dir = workspace.fresh_data_dir("control-watch")
    running = start_linkly(workspace, data_dir, "watch")
    running.wait_for_output("watching", timeout_s=120)
    apply_changes(workspace, CHANGE_PACE_S)
    time.sleep(2.0)
    kill_group(running.process)
    watch_snapshot = snapshot(workspace, data_dir)
    outcomes: dict[str, dict[str, Any]] = {}
    for name, got in (("index", index_snapshot), ("watch", watch_snapshot)):
        differences = compare(workspace.reference[name], got)
        outcomes[name] = {"identical": not differences, "same_ranking": same_ranking(workspace.reference[name], got),
                          "differences": differences}
    return outcomes


def build_references(workspace: Workspace) -> float:
    """Clean indexes of the initial and of the final (changed) library; returns the clean run's seconds."""
    restore_library(workspace)
    data_dir = workspace.fresh_data_dir("reference-index")
    started = time.monotonic()
    result = run_linkly(workspace, data_dir, "index")
    full_run_s = time.monotonic() - started
    if result.returncode != 0:
        raise SystemExit(f"the clean reference index failed: {result.stderr}")
    workspace.reference["index"] = snapshot(workspace, data_dir)
    apply_changes(workspace, 0.0)
    data_dir = workspace.fresh_data_dir("reference-watch")
    if run_linkly(workspace, data_dir, "index").returncode != 0:
        raise SystemExit("the clean reference index of the changed library failed")
    workspace.reference["watch"] = snapshot(workspace, data_dir)
    for name, reference in workspace.reference.items():
        if reference["integrity"]:
            raise SystemExit(f"the clean {name} reference is itself inconsistent: {reference['integrity']}")
        for query, hits in reference["search"].items():
            if len(hits) >= SEARCH_LIMIT or reference["matching_chunks"][query] > KEYWORD_CANDIDATE_CHUNKS:
                raise SystemExit(f"query {query!r} is too broad: which documents it returns depends on ranking")
    return full_run_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=20, help="kill points, alternating index and watch (default 20)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--workdir", type=Path, help="where the temporary folder goes")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--no-control", dest="control", action="store_false",
                        help="skip the two runs without a kill")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        print(f"corpus not found: {args.corpus}", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="linkly-crash-", dir=args.workdir))
    started = time.monotonic()
    points: list[KillPoint] = []
    try:
        workspace = Workspace.create(root, args.corpus)
        full_run_s = build_references(workspace)
        for number in range(args.kills):
            rng = random.Random(args.seed * 1000 + number)
            point = KillPoint(number=number, scenario="index" if number % 2 == 0 else "watch", trigger="")
            point_started = time.monotonic()
            if point.scenario == "index":
                run_index_point(workspace, point, rng, full_run_s)
            else:
                run_watch_point(workspace, point, rng, full_run_s)
            point.seconds = round(time.monotonic() - point_started, 2)
            points.append(point)
            if not args.json:
                state = "identical" if point.identical else "DIFFERENT: " + "; ".join(point.differences[:3])
                ranking = "same ranking" if point.same_ranking else "ranking differs"
                print(f"{point.number:2d} {point.scenario:5s} killed={point.killed!s:5s} {point.trigger}: "
                      f"{state} ({ranking})", flush=True)
        control = control_runs(workspace) if args.control else {}
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    summary = {
        "kill_points": len(points),
        "killed": sum(point.killed for point in points),
        "consistent_after_kill": sum(point.consistent_after_kill for point in points),
        "recovered_identical": sum(point.identical for point in points),
        "same_ranking": sum(point.same_ranking for point in points),
        "control_without_kill": control,
        "clean_run_seconds": round(full_run_s, 2),
        "seconds": round(time.monotonic() - started, 1),
        "library_files": workspace.file_count,
        "points": [asdict(point) for point in points],
    }
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(
            f"kill points: {summary['kill_points']}, killed mid-run: {summary['killed']}, "
            f"consistent right after reopening: {summary['consistent_after_kill']}, "
            f"identical to a clean index after restart: {summary['recovered_identical']}, "
            f"of which ranked identically too: {summary['same_ranking']} "
            f"(clean run {summary['clean_run_seconds']} s, total {summary['seconds']} s)"
        )
        for name, outcome in control.items():
            print(f"control, {name} without a kill: identical={outcome['identical']}, "
                  f"same ranking={outcome['same_ranking']}"
                  + "".join(f"\n  {difference}" for difference in outcome["differences"][:5]))
    return 0 if summary["recovered_identical"] == len(points) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
