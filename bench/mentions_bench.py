#!/usr/bin/env python3
"""Unlinked mentions (`links` with `mentions=true`): latency, and what the keyword candidates miss.

Indexes folders (default: the shared corpus's notes and books) into a
temporary data directory, then for every document:

- times the `links` tool with `mentions=true` (what the CLI, MCP and the
  editors' commands call), warm, and prints p50 / p95 / max;
- finds the same mentions by brute force, every line of every other document
  matched against the names, and counts the mentions the keyword index's
  candidates lost (there should be none: a name's terms are in every chunk
  that holds the name).

    .venv/bin/python bench/mentions_bench.py
    .venv/bin/python bench/mentions_bench.py ~/notes --limit-docs 200
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from linkly_ls.core.config import Config, LibraryConfig  # noqa: E402
from linkly_ls.core.engine import Engine  # noqa: E402
from linkly_ls.core.links import mentions as mention_search  # noqa: E402
from linkly_ls.core.links.resolver import LinkResolver  # noqa: E402
from linkly_ls.core.tools import call_tool  # noqa: E402

SHARED = REPO.parent / "shared" / "corpus"
DEFAULT_FOLDERS = [SHARED / "notes", SHARED / "books"]


def brute_force(engine: Engine, record, excluded: set[str]) -> int:
    """Mentions found by matching every line of every other document (no keyword candidates)."""
    names = mention_search.mention_names(record)
    excluded = excluded | {record.doc_id} | set(engine.catalog.documents_with_hash(record.content_hash))
    found = 0
    for other in engine.catalog.all_documents():
        if other.doc_id in excluded or other.total_lines == 0:
            continue
        spans = {(1, other.total_lines)}
        found += len(mention_search._confirm(engine.catalog, other.doc_id, other.path, spans, names))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folders", nargs="*", type=Path, default=DEFAULT_FOLDERS)
    parser.add_argument("--limit-docs", type=int, default=0, help="time only the first N documents (0: all)")
    parser.add_argument("--no-brute-force", action="store_true", help="skip the brute-force comparison")
    args = parser.parse_args()
    missing = [folder for folder in args.folders if not folder.is_dir()]
    if missing:
        sys.exit(f"not a folder: {', '.join(map(str, missing))} (the shared corpus belongs at {SHARED})")
    with tempfile.TemporaryDirectory(prefix="linkly-mentions-") as data:
        config = Config(
            data_dir=Path(data),
            libraries=[LibraryConfig(name="bench", paths=[folder.resolve() for folder in args.folders])],
            raw={"embedding": {"model": "none"}},
        )
        engine = Engine(config)
        started = time.perf_counter()
        engine.index()
        records = engine.catalog.all_documents()
        chunks = engine.keyword.num_chunks()
        print(f"indexed {len(records)} documents ({chunks} chunks) in {time.perf_counter() - started:.1f} s")
        if args.limit_docs:
            records = records[: args.limit_docs]
        timings: list[float] = []
        total = lost = truncated = 0
        for record in records:
            begun = time.perf_counter()
            answer = call_tool(engine, "links", {"doc_id": record.doc_id, "mentions": True, "direction": "in"}).to_json()
            timings.append((time.perf_counter() - begun) * 1000)
            count = answer["counts"]["mentions"]
            total += count
            truncated += bool(answer.get("mentions_truncated"))
            if not args.no_brute_force:
                linking = {link.source_id for link in LinkResolver(engine.catalog).backlinks(record)}
                lost += max(0, brute_force(engine, record, linking) - count)
        engine.close()
    timings.sort()
    p95 = timings[min(len(timings) - 1, int(0.95 * len(timings)))]
    print(
        f"links(mentions=true) over {len(timings)} documents: p50 {statistics.median(timings):.1f} ms, "
        f"p95 {p95:.1f} ms, max {timings[-1]:.1f} ms"
    )
    print(f"mentions found: {total} lines; answers truncated: {truncated}")
    if not args.no_brute_force:
        print(f"mentions the keyword candidates lost against a scan of every line: {lost}")


if __name__ == "__main__":
    main()
