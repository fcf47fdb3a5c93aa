"""Recall@10 of hidden links: does `related` find the documents a document links to, once the links are gone?

The links are known from the index of the original folder (every resolved
link to another document of the set). The copy with the links hidden
(`links_sets.hide_links`: a link becomes its visible text, reference
definitions are dropped) is indexed with vectors; for every document that had
links, the `related` tool (limit 10) runs on its copy, with vectors and with
keywords only (the same index opened with `[embedding] model = "none"`), and
a baseline searches the copy's title and first words with `search` in keyword
mode (BM25), its own hit left out. Recall@10 = linked targets in the top 10 /
linked targets, averaged over documents (macro) and over all links (micro).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.tools import call_tool

TOP = 10
#: words of the document's text the baseline query takes after its title
BASELINE_WORDS = 150


@dataclass
class ModeFigures:
    name: str
    recalls: list[float] = field(default_factory=list)
    found: int = 0
    targets: int = 0
    any_found: int = 0
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    modes: set[str] = field(default_factory=set)
    excluded_links: int = 0

    def add(self, results: list[str], targets: set[str], wall: float, cpu: float) -> None:
        hits = len(set(results[:TOP]) & targets)
        self.recalls.append(hits / len(targets))
        self.found += hits
        self.targets += len(targets)
        self.any_found += hits > 0
        self.wall_ms.append(wall)
        self.cpu_ms.append(cpu)

    def line(self) -> str:
        macro = statistics.mean(self.recalls) if self.recalls else float("nan")
        micro = self.found / self.targets if self.targets else float("nan")
        share = self.any_found / len(self.recalls) if self.recalls else float("nan")
        return (
            f"{self.name:<22} recall@10 {macro:.3f} (micro {micro:.3f}, {self.found}/{self.targets} links)"
            f"  >=1 found {share:.0%}  p50 {statistics.median(self.wall_ms):.0f} ms wall, "
            f"{statistics.median(self.cpu_ms):.0f} ms CPU  mode {','.join(sorted(self.modes)) or '-'}"
        )


def known_links(engine: Engine, library: str, folder: Path) -> dict[str, set[str]]:
    """Relative path -> relative paths of the other documents of the set it links to."""
    resolver = LinkResolver(engine.catalog)
    known: dict[str, set[str]] = {}
    for doc_id, path in engine.catalog.documents_matching(library):
        record = engine.catalog.get(doc_id)
        if record is None:
            continue
        targets = {
            str(Path(link.path).relative_to(folder))
            for link in resolver.links_of(record)
            if link.doc_id and link.doc_id != doc_id and link.path and link.path.startswith(str(folder) + "/")
        }
        if targets:
            known[str(Path(path).relative_to(folder))] = targets
    return known


def measure(data_dir: Path, library: str, folder: Path, known: dict[str, set[str]]) -> list[ModeFigures]:
    """Related (vectors), related (keywords only) and the BM25 baseline over the hidden copy in `folder`."""
    vector_engine = Engine(Config(data_dir=data_dir))
    keyword_engine = Engine(Config(data_dir=data_dir, raw={"embedding": {"model": "none"}}))
    figures = [ModeFigures("related, vectors"), ModeFigures("related, keywords only"), ModeFigures("baseline: search BM25")]
    try:
        by_path = {str(Path(path).relative_to(folder)): doc_id for doc_id, path in vector_engine.catalog.documents_matching(library)}
        relative = {doc_id: path for path, doc_id in by_path.items()}
        for engine in (vector_engine, keyword_engine):  # warm: the model and the first reads
            call_tool(engine, "related", {"doc_id": next(iter(by_path.values())), "limit": TOP})
        for source, targets in sorted(known.items()):
            doc_id = by_path.get(source)
            wanted = {target for target in targets if target in by_path}
            if doc_id is None or not wanted:
                continue
            for engine, mode in ((vector_engine, figures[0]), (keyword_engine, figures[1])):
                started, cpu = time.perf_counter(), time.process_time()
                answer = call_tool(engine, "related", {"doc_id": doc_id, "limit": TOP}).to_json()
                wall_ms, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
                mode.modes.add(answer["mode"])
                mode.excluded_links += answer["excluded_links"]
                mode.add([relative.get(hit["doc_id"], "") for hit in answer["results"]], wanted, wall_ms, cpu_ms)
            query = _baseline_query(vector_engine, doc_id)
            started, cpu = time.perf_counter(), time.process_time()
            answer = call_tool(vector_engine, "search", {"query": query, "limit": TOP + 1, "mode": "keyword", "library": library})
            wall_ms, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
            hits = [relative.get(hit.doc_id, "") for hit in answer.results if hit.doc_id != doc_id][:TOP]
            figures[2].modes.add(answer.mode)
            figures[2].add(hits, wanted, wall_ms, cpu_ms)
    finally:
        vector_engine.close()
        keyword_engine.close()
    return figures


def _baseline_query(engine: Engine, doc_id: str) -> str:
    record = engine.catalog.get(doc_id, with_outline=False)
    words: list[str] = []
    for line in engine.catalog.lines(doc_id):
        words.extend(line.split())
        if len(words) >= BASELINE_WORDS:
            break
    return f"{record.title if record else ''} {' '.join(words[:BASELINE_WORDS])}".strip()
