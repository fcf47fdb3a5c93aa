#!/usr/bin/env python3
"""Crash recovery of the vectors: kill -9 `linkly index --wait` while it embeds, restart, compare.

    /work/venv/bin/python bench/crash_embedding.py                # 20 kill points
    /work/venv/bin/python bench/crash_embedding.py --kills 3 --json

A library of 200 small notes cut from Markdown/MDX files of the shared corpus
(four embedding rounds of up to 64 documents; the run saves the vector index
and commits rows between rounds every 5 s, and at the end) is indexed with the bundled embedding model. A clean `linkly index --wait`
gives the reference. Then, for each kill point (a seed chooses it), a fresh data
dir is indexed by `linkly index --wait` whose whole process group gets SIGKILL
in the embedding phase: after N documents of embedding progress, or after a
random delay once the keyword phase printed its summary.

Right after the kill, the saved usearch file must hold every key that the
catalog's `vector_chunks` rows name (rows are committed after the file is saved).
Then `linkly index --wait` runs again to the end, and:

- every catalog document has exactly one vector row per chunk (the chunks that
  chunking its stored lines gives, same numbers and line ranges), and its
  `vector_docs` row names its current content hash and that chunk count;
- the saved usearch file holds exactly the keys of those rows (no orphans), and
  the first pass's index holds none (it is emptied once every document is
  refined);
- hybrid searches find the same documents as in the clean build.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from crash_support import Running, kill_group, run_linkly, start_linkly  # noqa: E402

from linkly_ls.core.config import Config  # noqa: E402
from linkly_ls.core.engine import Engine  # noqa: E402
from linkly_ls.core.extract.base import ExtractLimits  # noqa: E402
from linkly_ls.core.search.chunking import embedding_passages  # noqa: E402
from linkly_ls.core.search.vectors import _usearch  # noqa: E402
from linkly_ls.core.store.catalog import Catalog, StoreError  # noqa: E402
from linkly_ls.core.store.vector_rows import stored_vector_rows  # noqa: E402
from linkly_ls.core.tools import call_tool  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO_ROOT.parent / "shared" / "corpus"
QUERIES = [
    "who owns a value when it is moved", "pattern matching on enum variants", "mutable references rules",
    "printing to the terminal", "storing data in a struct", "integer types and overflow", "loops that repeat code",
]
SEARCH_LIMIT = 10
#: characters of each note (paragraphs up to at least this many): about one chunk
SECTION_CHARS = 600
_CONFIG = """[embedding]
model = "bundled"

[limits]
ocr = false

[[library]]
name = "vectors"
paths = ["{library}"]
"""


@dataclass
class KillPoint:
    number: int
    trigger: str
    killed: bool = False
    in_embedding: bool = False
    seconds: float = 0.0
    rows_saved_after_kill: bool = False
    consistent: bool = False
    identical: bool = False
    same_ranking: bool = False
    vectors_after_kill: int = 0
    differences: list[str] = field(default_factory=list)


@dataclass
class EmbeddingWorkspace:
    root: Path
    library: Path
    config: Path

    @classmethod
    def create(cls, root: Path, corpus: Path, documents: int = 200) -> EmbeddingWorkspace:
        """`documents` small notes (runs of paragraphs of corpus Markdown files): several embedding
        rounds of 64 documents, so a run saves the vector index and commits rows more than once."""
        library = root / "library"
        sources = sorted((corpus / "notes/learning-rust").glob("*.md")) + sorted((corpus / "notes/web-dev/astro-docs").rglob("*.mdx"))
        written = 0
        for source in sources:
            text = source.read_text(encoding="utf-8", errors="replace")
            pieces, current = [], ""
            for paragraph in re.split(r"\n\s*\n", text):
                current = f"{current}\n\n{paragraph}" if current else paragraph
                if len(current) >= SECTION_CHARS:
                    pieces.append(current[: SECTION_CHARS * 2])
                    current = ""
            for number, piece in enumerate(pieces):
                if written >= documents:
                    break
                target = library / source.stem / f"{number:02d}.md"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(f"# {source.stem} part {number}\n\n{piece.strip()}\n", encoding="utf-8")
                written += 1
        config = root / "config.toml"
        config.write_text(_CONFIG.format(library=library), encoding="utf-8")
        return cls(root, library, config)

    # the crash_support helpers take any object with env()
    def env(self, data_dir: Path) -> dict[str, str]:
        return {**os.environ, "LINKLY_DATA_DIR": str(data_dir), "LINKLY_CONFIG": str(self.config)}


def saved_keys(data_dir: Path) -> dict[str, set[int]]:
    """model directory -> keys in the saved usearch file (read as a plain file, as no writer opens it)."""
    found: dict[str, set[int]] = {}
    for path in sorted((data_dir / "vectors").glob("*/index.usearch")):
        index = _usearch().restore(str(path), view=True)
        found[path.parent.name] = {int(key) for key in index.keys} if len(index) else set()
    return found


def vector_rows(data_dir: Path) -> tuple[dict[str, list[tuple[int, int, int, int]]], dict[str, tuple[str, int]], str | None]:
    """(doc_id -> sorted (chunk, start, end, key), doc_id -> (content hash, chunks), model) from the catalog."""
    path = data_dir / "catalog.sqlite3"
    if not path.exists():
        return {}, {}, None
    catalog = Catalog(path, read_only=True)  # read-only: the check must not change what it checks
    try:
        stored = stored_vector_rows(catalog)
    finally:
        catalog.close()
    if stored is None:
        return {}, {}, None
    chunk_rows, doc_rows = stored
    models = list(dict.fromkeys(model for model, _, _, _ in doc_rows))
    chunks: dict[str, list[tuple[int, int, int, int]]] = {}
    for _, key, doc_id, chunk, start, end, _ in chunk_rows:
        chunks.setdefault(doc_id, []).append((chunk, start, end, key))
    docs = {doc_id: (content_hash, count) for _, doc_id, content_hash, count in doc_rows}
    return {d: sorted(c) for d, c in chunks.items()}, docs, (models[0] if models else None)


def all_row_keys(data_dir: Path) -> set[int]:
    rows, _, _ = vector_rows(data_dir)
    return {entry[3] for found in rows.values() for entry in found}


def committed_rows(data_dir: Path) -> bool:
    """Whether a checkpoint has committed vector rows yet (the catalog may be mid-write)."""
    try:
        return bool(all_row_keys(data_dir))
    except StoreError:
        return False


def check_vectors(data_dir: Path) -> tuple[list[str], dict[str, Any]]:
    """Problems with the vectors of a finished run, and what search finds."""
    problems: list[str] = []
    rows, docs, _ = vector_rows(data_dir)
    files = {name: keys for name, keys in saved_keys(data_dir).items() if keys}
    if len(files) != 1:  # the first pass's index is emptied once the model has refined every document
        problems.append(f"{len(files)} vector index files with vectors: {sorted(files)}")
    file_keys = set().union(*files.values()) if files else set()
    row_keys = [entry[3] for found in rows.values() for entry in found]
    if len(row_keys) != len(set(row_keys)):
        problems.append(f"{len(row_keys) - len(set(row_keys))} duplicate keys in vector_chunks")
    orphans = file_keys - set(row_keys)
    missing = set(row_keys) - file_keys
    if orphans:
        problems.append(f"{len(orphans)} orphan key(s) in the usearch file (no row)")
    if missing:
        problems.append(f"{len(missing)} row key(s) missing from the usearch file")
    config = Config(data_dir=data_dir, limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "bundled"}})
    engine = Engine(config)
    try:
        records = engine.catalog.all_documents()
        known = {record.doc_id for record in records}
        for doc_id in sorted(set(rows) | set(docs)):
            if doc_id not in known:
                problems.append(f"{doc_id}: vectors of a document the catalog does not know")
        chunk_total = 0
        for record in records:
            chunks = embedding_passages(engine.catalog.lines(record.doc_id), record.outline, record.page_starts)
            chunk_total += len(chunks)
            expected = [(c.number, c.start_line, c.end_line) for c in chunks]
            held = [entry[:3] for entry in rows.get(record.doc_id, [])]
            if held != expected:
                problems.append(f"{record.path}: {len(expected)} passage(s), {len(held)} vector row(s) (or other ranges)")
            doc = docs.get(record.doc_id)
            if doc is None:
                problems.append(f"{record.path}: no vector_docs row")
            elif doc != (record.content_hash, len(expected)):
                problems.append(f"{record.path}: vector_docs says {doc}, catalog {record.content_hash} with {len(expected)} passages")
        search = {}
        for query in QUERIES:
            payload = call_tool(engine, "search", {"query": query, "limit": SEARCH_LIMIT}).to_json()
            search[query] = [[hit["path"], round(float(hit["relevance"]), 3)]
                             for hit in payload["results"]]
            if payload.get("mode") != "hybrid":
                problems.append(f"search {query!r} is not hybrid: {payload.get('mode')} ({payload.get('mode_reason')})")
        summary = {"documents": len(records), "chunks": chunk_total, "rows": len(row_keys), "keys": len(file_keys),
                   "search": search}
    finally:
        engine.close()
    return problems, summary


def doc_sets(search: dict[str, list]) -> dict[str, list[str]]:
    return {query: sorted(path for path, _ in hits) for query, hits in search.items()}


def wait_for_embedding_phase(running: Running, timeout_s: float) -> int | None:
    """Offset in the output where the embedding phase begins (after the keyword summary line)."""
    found = running._wait(lambda: b" indexed, " in running._output and b" removed in " in running._output, timeout_s)
    if not found:
        return None
    output = bytes(running._output)
    return output.index(b"\n", output.index(b" removed in ")) + 1 if b"\n" in output[output.index(b" removed in "):] else len(output)


def embedding_progress(running: Running, offset: int) -> int:
    found = re.findall(rb"\] (\d+)/(\d+) ", bytes(running._output)[offset:])
    return int(found[-1][0]) if found else 0


def run_kill_point(workspace: EmbeddingWorkspace, point: KillPoint, documents: int, reference: dict[str, Any]) -> None:
    data_dir = workspace.root / "data" / f"kill-{point.number}"
    started = time.monotonic()
    running = start_linkly(workspace, data_dir, "index", "--wait")  # type: ignore[arg-type]
    offset = wait_for_embedding_phase(running, 300)
    if offset is None:
        point.killed = kill_group(running.process)
        point.differences.append("the keyword phase did not finish")
        return
    point.in_embedding = True
    if point.trigger.startswith("progress"):
        target = int(point.trigger.split(":")[1])
        running._wait(lambda: embedding_progress(running, offset) >= target, 300)
        point.killed = kill_group(running.process)
    elif point.trigger == "committed":
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and running.process.poll() is None and not committed_rows(data_dir):
            time.sleep(0.05)
        point.killed = kill_group(running.process)
    else:
        delay = float(point.trigger.split(":")[1])
        point.killed = running.kill_after(delay)
    # right after the kill: every committed row's key is in the saved file
    keys = set().union(*saved_keys(data_dir).values()) if saved_keys(data_dir) else set()
    rows = all_row_keys(data_dir)
    point.vectors_after_kill = len(rows)
    point.rows_saved_after_kill = rows <= keys
    if not point.rows_saved_after_kill:
        point.differences.append(f"after the kill, {len(rows - keys)} committed row(s) have no vector in the saved file")
    rerun = run_linkly(workspace, data_dir, "index", "--wait")  # type: ignore[arg-type]
    point.seconds = round(time.monotonic() - started, 1)
    if rerun.returncode != 0:
        point.differences.append(f"restart failed ({rerun.returncode}): {rerun.stdout[-500:]} {rerun.stderr[-500:]}")
        return
    problems, summary = check_vectors(data_dir)
    point.differences.extend(problems)
    point.consistent = not problems and point.rows_saved_after_kill
    if summary["documents"] != documents:
        point.differences.append(f"{summary['documents']} documents, {documents} expected")
    point.identical = doc_sets(summary["search"]) == doc_sets(reference["search"]) and summary["chunks"] == reference["chunks"]
    if not point.identical:
        for query in QUERIES:
            if doc_sets(summary["search"])[query] != doc_sets(reference["search"])[query]:
                point.differences.append(f"search {query!r}: {doc_sets(summary['search'])[query]} != clean")
    point.same_ranking = summary["search"] == reference["search"]
    shutil.rmtree(data_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--documents", type=int, default=200, help="small notes in the library (64 a round)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="linkly-crash-embedding-", dir=args.workdir))
    workspace = EmbeddingWorkspace.create(root, args.corpus, args.documents)
    documents = sum(1 for path in workspace.library.rglob("*") if path.is_file())
    clean_dir = root / "data" / "clean"
    started = time.monotonic()
    running = start_linkly(workspace, clean_dir, "index", "--wait")  # type: ignore[arg-type]
    offset = wait_for_embedding_phase(running, 300)
    embedding_started = time.monotonic()
    running.process.wait(600)
    running._reader.join(5)
    embed_s = time.monotonic() - embedding_started
    clean_s = time.monotonic() - started
    if running.process.returncode != 0 or offset is None:
        print(f"clean run failed: {running.output()[-2000:]}", file=sys.stderr)
        return 2
    problems, reference = check_vectors(clean_dir)
    if problems:
        print(f"the clean build is not consistent: {problems}", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    points: list[KillPoint] = []
    for number in range(args.kills):
        # progress in the first round of 64 documents (nothing committed yet), right after the first
        # checkpoint committed rows (how many documents that takes depends on the machine's speed),
        # or a random delay into the embedding phase
        if number % 3 == 0:
            trigger = f"progress:{rng.randint(1, min(64, documents))}"
        elif number % 3 == 1:
            trigger = "committed"
        else:
            trigger = f"delay:{round(rng.uniform(0.0, embed_s * 0.9), 2)}"
        point = KillPoint(number, trigger)
        run_kill_point(workspace, point, documents, reference)
        points.append(point)
        if not args.json:
            print(f"#{number:2} {trigger:14} killed={point.killed} rows-after-kill={point.vectors_after_kill:4} "
                  f"consistent={point.consistent} identical={point.identical} ranking={point.same_ranking} "
                  f"{point.seconds:5.1f} s {'; '.join(point.differences[:3])}", flush=True)
    summary = {
        "documents": documents,
        "chunks": reference["chunks"],
        "clean_run_s": round(clean_s, 1),
        "clean_embedding_s": round(embed_s, 1),
        "kill_points": len(points),
        "killed": sum(point.killed for point in points),
        "killed_with_vectors_committed": sum(point.killed and point.vectors_after_kill > 0 for point in points),
        "consistent": sum(point.consistent for point in points),
        "identical": sum(point.identical for point in points),
        "same_ranking": sum(point.same_ranking for point in points),
        "points": [asdict(point) for point in points],
    }
    shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"{summary['documents']} documents, {summary['chunks']} chunks; clean run {summary['clean_run_s']} s "
              f"(embedding {summary['clean_embedding_s']} s)")
        print(f"kill points {summary['kill_points']}: killed {summary['killed']} "
              f"({summary['killed_with_vectors_committed']} with vectors already committed), "
              f"consistent {summary['consistent']}, identical doc sets {summary['identical']}, "
              f"same ranking {summary['same_ranking']}")
    ok = summary["consistent"] == len(points) and summary["identical"] == len(points)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
