#!/usr/bin/env python3
"""Where indexing's CPU seconds go, stage by stage, on the shared and the home-folder-like corpus.

Runs linkly's per-file work (`prepare_file`: hash, extract, language, keywords, chunks) on
every file of a corpus, one after the other in this process with OCR off, then stores the
results through the indexer's own path (`DocumentStore.store`, `Indexer.flush`: catalog rows and
the Tantivy keyword index) into a temporary data dir. Each stage's functions are wrapped
with a CPU timer (`time.process_time`, self time: a stage nested in another is taken out of
the outer one), so the figures hardly move on a busy machine. Also timed: starting a Python
process that imports what an extraction worker preloads, and pickling each prepared file
(what a worker sends back). `linkly index` runs the same code in worker processes, so the
sum here is close to its CPU time minus process start and waiting; one very long PDF is
read in page ranges by several workers there (each opens the file once more).

    .venv/bin/python bench/index_stages.py                  # --corpus both
    .venv/bin/python bench/index_stages.py --corpus home --runs 3
    PYTHONPATH=path/to/checkout .venv/bin/python bench/index_stages.py   # that checkout's code
"""

from __future__ import annotations

import argparse
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

from index_bench import SKIPPED_TOP_DIRS, SKIPPED_TOP_FILES, corpus_folders  # noqa: E402

STAGES = [
    "PDF open",
    "PDF text (MuPDF text page)",
    "PDF JSON and HTML parse",
    "PDF line building",
    "PDF links",
    "PDF outline and title",
    "PDF other",
    "other formats (HTML, DOCX, EPUB, PPTX, Markdown, text)",
    "file hash",
    "language detection",
    "keywords and word count",
    "chunking",
    "result pickling (worker -> indexer)",
    "catalog writes",
    "Tantivy",
    "prepare/store other",
]


class StageClock:
    """Self CPU time per stage: a wrapped call charges its stage and is taken out of its caller's."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._stack: list[list[float]] = []

    def wrap(self, stage: str, function: Callable) -> Callable:
        def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            frame = [time.process_time(), 0.0]
            self._stack.append(frame)
            try:
                return function(*args, **kwargs)
            finally:
                self._stack.pop()
                spent = time.process_time() - frame[0]
                self.seconds[stage] += spent - frame[1]
                if self._stack:
                    self._stack[-1][1] += spent

        return timed

    def patch(self, owner: object, name: str, stage: str) -> None:
        """Wrap `owner.name` if it exists (an older working copy, benchmarked with PYTHONPATH, may lack it)."""
        if getattr(owner, name, None) is not None:
            setattr(owner, name, self.wrap(stage, getattr(owner, name)))


def instrument(clock: StageClock) -> None:
    import pymupdf

    from linkly_ls.core.extract import pdf, pdf_text
    from linkly_ls.core.indexing import document_store, indexer, preparation
    from linkly_ls.core.search.keyword import KeywordIndex
    from linkly_ls.core.store.catalog import Catalog

    other_formats = "other formats (HTML, DOCX, EPUB, PPTX, Markdown, text)"
    places: dict[str, list[tuple[object, str]]] = {
        "prepare/store other": [
            (preparation, "prepare_file"), (document_store.DocumentStore, "store"), (indexer.Indexer, "flush")
        ],
        "file hash": [(preparation, "hash_file")],
        other_formats: [(preparation, "extract_file")],
        "language detection": [(preparation, "detect_language")],
        "keywords and word count": [(preparation, "words_and_keywords")],
        "chunking": [(preparation, "chunk_document")],
        "PDF other": [(pdf, "extract")],
        "PDF open": [(pdf, "open_pdf")],
        "PDF line building": [(pdf, "read_page"), (pdf, "_write_pages")],
        "PDF links": [(pdf, "page_links"), (pdf, "read_links")],
        "PDF outline and title": [
            (pdf, name) for name in ("read_bookmarks", "has_bookmarks", "bookmark_headings", "font_headings", "_title")
        ],
        "PDF text (MuPDF text page)": [
            (pymupdf.Page, "get_textpage"), (pymupdf.Page, "get_text"), (pdf_text, "_print_json"),
            (pdf_text, "_print_html"),
        ],
        "PDF JSON and HTML parse": [(pdf_text, "_html_line_spans")],
        "catalog writes": [
            (Catalog, "put_documents"), (Catalog, "pending_keyword_work"), (Catalog, "mark_keyword_done")
        ],
        "Tantivy": [(KeywordIndex, "replace")],
    }
    for stage, owners in places.items():
        for owner, name in owners:
            clock.patch(owner, name, stage)
    pdf_text.json = SimpleNamespace(loads=clock.wrap("PDF JSON and HTML parse", pdf_text.json.loads))
    if hasattr(pdf_text, "_json_page"):  # checkouts that read the JSON into typed structures
        clock.patch(pdf_text, "_json_page", "PDF JSON and HTML parse")


def corpus_files(root: Path) -> list[Path]:
    from linkly_ls.core.extract import is_supported

    files: list[Path] = []
    for directory, dirnames, filenames in os.walk(root):
        top = Path(directory) == root
        dirnames[:] = sorted(d for d in dirnames if not (top and d in SKIPPED_TOP_DIRS))
        files += [Path(directory) / f for f in sorted(filenames) if not (top and f in SKIPPED_TOP_FILES)]
    return [path for path in files if is_supported(path)]


def every_extractor_preloaded() -> tuple[str, ...]:
    """What the workers' fork server imports for a run of every document type (older checkouts: their
    one preload module, which imported every extractor)."""
    try:
        from linkly_ls.core.indexing.work_plan import worker_preload
    except ImportError:
        return ("linkly_ls.core.extract.preload",)
    from linkly_ls.core.extract import DOC_TYPES

    return worker_preload(f"file{suffix}" for suffix in DOC_TYPES)


def process_start_cpu(module: str) -> float:
    """CPU seconds of a fresh Python process that imports `module` (what each process pays at start;
    several modules: comma-separated)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def one_run(root: Path, clock: StageClock) -> tuple[int, float]:
    from linkly_ls.core.config import Config
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ExtractLimits
    from linkly_ls.core.indexing import preparation
    from linkly_ls.core.indexing.indexer import FLUSH_EVERY_CHARS, FLUSH_EVERY_DOCS

    files = corpus_files(root)
    limits = ExtractLimits(ocr=False)
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="linkly-stages-") as data:
        engine = Engine(Config(data_dir=Path(data)))
        try:
            engine.add_library([root], name="bench")
            indexer = engine.indexer
            documents = chars = 0
            for path in files:
                prepared = preparation.prepare_file((str(path), None, limits))
                pickling = time.process_time()
                pickle.loads(pickle.dumps(prepared, protocol=pickle.HIGHEST_PROTOCOL))
                clock.seconds["result pickling (worker -> indexer)"] += time.process_time() - pickling
                if prepared.document is None:
                    continue
                indexer.documents.store(prepared, "bench")
                documents, chars = documents + 1, chars + sum(map(len, prepared.document.lines))
                if documents >= FLUSH_EVERY_DOCS or chars >= FLUSH_EVERY_CHARS:  # as `linkly index` flushes
                    indexer.flush()
                    documents = chars = 0
            indexer.flush()
        finally:
            engine.close()
    return len(files), time.process_time() - started


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="CPU seconds per indexing stage (OCR off), in this process.")
    parser.add_argument("--corpus", default="both", help="shared, home, both (default), pdfs, papers, notes, notes-x10 or a folder")
    parser.add_argument("--runs", type=int, default=1, help="runs per corpus; the table shows the median (default 1)")
    args = parser.parse_args(argv)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    clock = StageClock()
    instrument(clock)
    one_run(Path(__file__).resolve().parent.parent / "fixtures" / "notes", clock)  # warm-up: imports, first-use tables
    worker_start = process_start_cpu(", ".join(every_extractor_preloaded()))
    columns: list[tuple[str, dict[str, float], float, int]] = []
    for root in corpus_folders(args.corpus):
        runs: list[tuple[dict[str, float], float]] = []
        count = 0
        for _ in range(args.runs):
            clock.seconds.clear()
            count, total = one_run(root, clock)
            runs.append((dict(clock.seconds), total))
        middle = sorted(runs, key=lambda run: run[1])[len(runs) // 2]
        label = {corpus_folders("shared")[0]: "shared", corpus_folders("home")[0]: "home"}.get(root, root.name)
        columns.append((label, middle[0], middle[1], count))
    print(f"CPU seconds per stage (median of {args.runs} run(s), OCR off, one process; "
          f"a worker process start with every extractor's imports: {worker_start:.2f} s)")
    print(f"| stage | " + " | ".join(f"{name} ({count} files)" for name, _, _, count in columns) + " |")
    print("| --- |" + " ---: |" * len(columns))
    for stage in STAGES:
        cells = [f"{seconds.get(stage, 0.0):.2f} ({100 * seconds.get(stage, 0.0) / total:.0f} %)"
                 for _, seconds, total, _ in columns]
        print(f"| {stage} | " + " | ".join(cells) + " |")
    print("| total | " + " | ".join(f"{total:.2f}" for _, _, total, _ in columns) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
