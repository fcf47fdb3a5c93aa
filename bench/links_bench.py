#!/usr/bin/env python3
"""Links on a real documentation set: agreement with ripgrep, recall@10 of hidden links, LSP latency.

    .venv/bin/python bench/links_bench.py                          # both sets, every part
    .venv/bin/python bench/links_bench.py --parts agreement,recall --sets node-api
    .venv/bin/python bench/links_bench.py --parts latency --documents 40 --rebuild

1. The sets (`links_sets.py`) are fetched from their registries at pinned
   versions and checksums into the bench cache (default ~/.cache/linkly-bench/links).
2. agreement: the folder is indexed (`linkly index`), and per document the
   `links` tool's counts of links and backlinks are compared with ripgrep's
   (`links_agreement.py`), with the reason of every difference.
3. recall: a copy with the links hidden is indexed with `linkly index --wait`
   (every vector computed) and `related` is asked for every document that had
   links (`links_recall.py`).
4. latency: the 50k-chunk level of `search_build.py` is copied, the set is
   added with `linkly index --wait`, and `linkly-ls` is timed on it
   (`links_latency.py`).

Indexes are kept in the cache and reused while the set, the link extractor
and this bench's code that shapes them are unchanged (`--rebuild` to redo).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import MachineLoad  # noqa: E402
from links_agreement import compare  # noqa: E402
from links_recall import known_links, measure  # noqa: E402
from links_sets import DEFAULT_CACHE, SETS, FetchError, fetch, hide_links, markdown_files  # noqa: E402

from linkly_ls.core.config import Config  # noqa: E402
from linkly_ls.core.engine import Engine  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LIBRARY = "notes"
#: the files whose change changes what an index of a set holds
SHAPING = ["linkly_ls/core/extract/markdown_links.py", "linkly_ls/core/links/targets.py", "bench/links_sets.py"]


def environment(data_dir: Path) -> dict[str, str]:
    env = dict(os.environ, LINKLY_DATA_DIR=str(data_dir), LINKLY_CONFIG=str(data_dir.parent / "no-config.toml"))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def stamp(*parts: str) -> str:
    digest = hashlib.sha1("\n".join(parts).encode())
    for name in SHAPING:
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()


def linkly_index(folder: Path, data_dir: Path, wait: bool, library: str = LIBRARY) -> None:
    """`linkly index FOLDER --library LIBRARY [--wait]`; prints its wall and CPU time."""
    command = [str(BIN / "linkly"), "index", str(folder), "--library", library] + (["--wait"] if wait else [])
    started, before = time.monotonic(), os.times()
    load = MachineLoad()
    result = subprocess.run(command, env=environment(data_dir), capture_output=True, text=True)
    after = os.times()
    if result.returncode:
        raise SystemExit(f"`{' '.join(command)}` failed:\n{(result.stdout + result.stderr)[-2000:]}")
    cpu = after.children_user + after.children_system - before.children_user - before.children_system
    print(f"  linkly index{' --wait' if wait else ''}: {time.monotonic() - started:.0f} s wall, {cpu:.0f} CPU-s (linkly and the processes it reaped); {load.summary(cpu)}")


def cached_index(cache: Path, name: str, key: str, build, rebuild: bool) -> Path:
    """The data dir `cache/indexes/name`, built with `build(data_dir)` unless complete for `key`."""
    folder = cache / "indexes" / name
    marker = folder / "complete"
    if marker.exists() and marker.read_text().strip() == key and not rebuild:
        print(f"  reusing the index {folder}")
        return folder / "data"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    build(folder / "data")
    marker.write_text(key + "\n")
    return folder / "data"


def run_agreement(name: str, folder: Path, data_dir: Path) -> None:
    engine = Engine(Config(data_dir=data_dir))
    try:
        agreement = compare(engine, LIBRARY, folder)
    finally:
        engine.close()
    totals = agreement.totals()
    count = totals["documents"]
    print(f"  documents {count}; links linkly {totals['linkly_links']}, rg {totals['rg_links']}; "
          f"backlinks linkly {totals['linkly_backlinks']}, rg {totals['rg_backlinks']}")
    print(f"  same link count: {totals['links_agree']}/{count} ({totals['links_agree'] / count:.1%}); same backlink count: "
          f"{totals['backlinks_agree']}/{count} ({totals['backlinks_agree'] / count:.1%}); every difference explained: "
          f"{totals['explained']}/{count}")
    print(f"  links both count that lead to the same file: {agreement.resolution_agreed}/{agreement.resolution_checked}")
    for line in agreement.resolution_differences:
        print(f"    differs: {line}")
    differing = [d for d in agreement.documents if d.linkly_links != d.rg_links or d.linkly_backlinks != d.rg_backlinks]
    if differing:
        print("  documents that differ (links linkly/rg, backlinks linkly/rg: why):")
    for doc in differing:
        reasons = doc.reasons + doc.backlink_reasons
        why = ", ".join(f"{reason} x{count}" for reason, count in reasons.most_common())
        print(f"    {Path(doc.path).relative_to(folder)}: {doc.linkly_links}/{doc.rg_links}, "
              f"{doc.linkly_backlinks}/{doc.rg_backlinks}: {why or 'see the documents linking here'}")


def run_recall(name: str, folder: Path, original: Path, hidden_data: Path, hidden_folder: Path) -> None:
    engine = Engine(Config(data_dir=original))
    try:
        known = known_links(engine, LIBRARY, folder)
    finally:
        engine.close()
    sizes = sorted(len(targets) for targets in known.values())
    print(f"  documents with links to others of the set: {len(known)} of {len(markdown_files(folder))} "
          f"(targets per document: median {sizes[len(sizes) // 2] if sizes else 0}, max {max(sizes, default=0)})")
    load = MachineLoad()
    cpu = time.process_time()
    figures = measure(hidden_data, LIBRARY, hidden_folder, known)
    for mode in figures:
        print(f"  {mode.line()}")
    total = len(markdown_files(folder))
    print(f"  random ranking: recall@10 about {min(10 / max(total - 1, 1), 1):.3f}; links left in the hidden copy "
          f"that related excluded: {figures[0].excluded_links}")
    print(f"  {load.summary(time.process_time() - cpu)}")


def run_latency(args, folders: dict[str, Path], cache: Path) -> None:
    """The sets (each a library named after it) beside the 50k level, timed through `linkly-ls`."""
    from links_latency import LinkSession, Timings
    from lsp_client import RpcError
    from search_build import build_level

    level = build_level(args.search_cache, "50k", 50_000, False, args.corpus_chunks)

    def build(data_dir: Path) -> None:
        print(f"  copying the 50k level {level} ...")
        shutil.copytree(level, data_dir)
        for name, folder in folders.items():
            linkly_index(folder, data_dir, wait=True, library=name)

    versions = [f"{name} {SETS[name].version}" for name in folders]
    key = stamp(*versions, "latency", str(level), (level.parent / "complete").read_text())
    data_dir = cached_index(cache, "latency-" + "+".join(folders), key, build, args.rebuild)
    engine = Engine(Config(data_dir=data_dir))
    try:
        chunks, documents = engine.keyword.num_chunks(), engine.catalog.count()
        notes = {name: sorted(engine.catalog.documents_matching(name), key=lambda row: row[1]) for name in folders}
    finally:
        engine.close()
    size = sum(path.stat().st_size for path in data_dir.rglob("*") if path.is_file()) / 1e6
    print(f"  index: {chunks} chunks, {documents} documents ({', '.join(f'{n}: {len(d)}' for n, d in notes.items())}), "
          f"{size:.0f} MB on disk")
    rng = random.Random(args.seed)
    first = next(iter(folders.values()))
    session = LinkSession([str(BIN / "linkly-ls")], environment(data_dir), first, data_dir.parent)
    try:
        ready, slowest = session.wait_ready()
        print(f"  server ready after {ready:.1f} s (the slowest linkly/status answer meanwhile took {slowest:.1f} s)")
        warm_id, warm_path = next((doc_id, Path(path)) for doc_id, path in next(iter(notes.values())))
        started = time.monotonic()
        session.warm_up(warm_path, warm_id)
        print(f"  warm-up round (untimed; the first related loads the embedding model): {time.monotonic() - started:.1f} s")
        for name, rows in notes.items():
            linked = [(doc_id, Path(path)) for doc_id, path in rows if _has_links(Path(path))]
            chosen = rng.sample(linked, min(args.documents, len(linked)))
            session.timings = {kind: Timings() for kind in session.timings}
            load, cpu_before, bench_cpu = MachineLoad(), session.cpu_s(), time.process_time()
            for doc_id, path in chosen:
                session.document(path, doc_id, args.links_per_document, rng)
            own = session.cpu_s() - cpu_before + time.process_time() - bench_cpu
            print(f"  {name}: {len(chosen)} documents opened, up to {args.links_per_document} links asked in each")
            for kind, timing in session.timings.items():
                print(f"    {timing.line(kind)}")
            print(f"    {load.summary(own)}")
    except RpcError as error:
        raise SystemExit(f"language server: {error}") from None
    finally:
        session.close()


def _has_links(path: Path) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return "](" in text or "][" in text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated: {', '.join(SETS)}")
    parser.add_argument("--parts", default="agreement,recall,latency")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--search-cache", type=Path, default=Path.home() / ".cache" / "linkly-bench" / "search")
    parser.add_argument("--corpus-chunks", type=int, default=4000, help="the 50k level's corpus sample (search_build.py)")
    parser.add_argument("--documents", type=int, default=40, help="latency: documents opened per set")
    parser.add_argument("--links-per-document", type=int, default=4, help="latency: links asked per document")
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached indexes")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    names = [name for name in args.sets.split(",") if name]
    unknown = [name for name in names if name not in SETS] + sorted(parts - {"agreement", "recall", "latency"})
    if unknown:
        parser.error(f"unknown set or part: {', '.join(unknown)}")
    if shutil.which("rg") is None and "agreement" in parts:
        raise SystemExit("ripgrep (rg) is needed for the agreement part: apt-get install -y ripgrep")
    args.cache.mkdir(parents=True, exist_ok=True)
    for name in names:
        doc_set = SETS[name]
        try:
            folder = fetch(doc_set, args.cache)
        except FetchError as error:
            raise SystemExit(f"{name}: {error}") from None
        print(f"\n== {name}: {doc_set.description}; {len(markdown_files(folder))} Markdown files in {folder}")
        if parts & {"agreement", "recall"}:
            original = cached_index(args.cache, f"{name}-original", stamp(doc_set.version, "original"),
                                    lambda data_dir: linkly_index(folder, data_dir, wait=False), args.rebuild)
        if "agreement" in parts:
            print("-- agreement with ripgrep")
            run_agreement(name, folder, original)
        if "recall" in parts:
            print("-- recall@10 of hidden links")
            hidden = args.cache / "hidden" / name

            def build_hidden(data_dir: Path) -> None:
                print(f"  links hidden in the copy: {hide_links(folder, hidden)}")
                linkly_index(hidden, data_dir, wait=True)

            hidden_data = cached_index(args.cache, f"{name}-hidden", stamp(doc_set.version, "hidden"), build_hidden, args.rebuild)
            run_recall(name, folder, original, hidden_data, hidden)
    if "latency" in parts:
        print(f"\n== language-server latency: {', '.join(names)} beside filler (an index of about 50k chunks)")
        run_latency(args, {name: fetch(SETS[name], args.cache) for name in names}, args.cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
