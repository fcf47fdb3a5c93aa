"""In which order, and where, the files of one indexing run are extracted.

Workers take tasks in list order, so the files expected to take longest go
first: a 2,400-page PDF or an image that needs OCR started last would keep
one core busy long after the other has run out of work.

A run with only a few small plain-text files (the usual incremental run after
an edit) is extracted in the indexing process itself: starting the worker
processes costs more than reading the files. In a larger run, the indexing
process reads some small plain-text files itself while the workers start
(their fork server imports the extractors, a few tenths of a second in which
the indexing process would wait). Only formats whose readers are plain Python
over a size-capped file qualify, so no hostile file can hang the indexer or
exhaust its memory there.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from linkly_ls.core.extract import doc_type_for, extractor_module, extractor_modules, sniff

MB = 1024 * 1024
#: rough extraction cost per MB by document type (measured on the shared corpus, one core)
SECONDS_PER_MB = {"pdf": 0.5, "image": 1.0, "docx": 0.9, "epub": 0.6, "pptx": 0.3, "html": 0.6}
DEFAULT_SECONDS_PER_MB = 0.5
#: fixed cost per file: an OCR run of tesseract, whatever the file size
FIXED_SECONDS = {"image": 1.5}

#: document types read in-process when only a few small files changed
IN_PROCESS_TYPES = frozenset({"md", "mdx", "txt"})
IN_PROCESS_MAX_FILES = 8
IN_PROCESS_MAX_BYTES = 1 * MB
#: estimated seconds of small plain-text files the indexing process reads while its workers start,
#: and the cost of a small file beyond its size (measured: 1-2 ms for a Markdown file of a few KB)
HEAD_START_SECONDS = 0.3
HEAD_START_SECONDS_PER_FILE = 0.002
#: estimated seconds of a file that may wait behind another in a worker's pipe (`quick_files`): about
#: four times the 5 ms a hand-over through the indexing process's threads can take
QUICK_SECONDS = 0.02
#: what the workers' fork server imports in every run, before the extractors of the run's files
WORKER_PRELOAD = "linkly_ls.core.extract.preload"


def estimated_seconds(path: Path, size: int) -> float:
    """A guess of how long extracting this file takes, good enough to order files by."""
    doc_type = doc_type_for(path) or ""
    rate = SECONDS_PER_MB.get(doc_type, DEFAULT_SECONDS_PER_MB)
    return FIXED_SECONDS.get(doc_type, 0.0) + rate * size / MB


def quick_files(files: list[tuple[Path, int]]) -> set[str]:
    """The paths of `files` ((path, size) pairs) expected to take at most QUICK_SECONDS: such a file may
    wait in a busy worker's pipe (`WorkerPool.run`'s `quick`), where it can hold the run up by no more
    than its own time, while handing it over later can cost it as much again."""
    return {str(path) for path, size in files if estimated_seconds(path, size) <= QUICK_SECONDS}


def slowest_first(files: list[tuple[Path, int]]) -> list[int]:
    """Indexes into `files` ((path, size) pairs), the longest expected extraction first."""
    return sorted(range(len(files)), key=lambda index: -estimated_seconds(*files[index]))


def fits_in_process(files: list[tuple[Path, int]]) -> bool:
    """True for a handful of small plain-text files: cheaper to read here than to start workers."""
    return 0 < len(files) <= IN_PROCESS_MAX_FILES and all(_plain_and_small(path, size) for path, size in files)


def plan(files: list[tuple[Path, int]], workers_up: bool) -> tuple[list[int], list[int]]:
    """Indexes into `files` ((path, size) pairs) read in-process, then those for the workers, each
    in extraction order. `workers_up`: the worker processes already run (no head start then)."""
    order = slowest_first(files)
    if fits_in_process(files):
        return order, []
    if workers_up:
        return [], order
    ahead = set(head_start([files[index] for index in order]))
    here = [index for position, index in enumerate(order) if position in ahead]
    return here, [index for position, index in enumerate(order) if position not in ahead]


def head_start(files: list[tuple[Path, int]]) -> list[int]:
    """Indexes into `files` (in extraction order) of small plain-text files to read in-process while the
    workers start: taken from the end (the quickest files), up to `HEAD_START_SECONDS` of estimated work."""
    chosen: list[int] = []
    budget = HEAD_START_SECONDS
    for index in range(len(files) - 1, -1, -1):
        path, size = files[index]
        cost = estimated_seconds(path, size) + HEAD_START_SECONDS_PER_FILE
        if cost <= budget and _plain_and_small(path, size):
            chosen.append(index)
            budget -= cost
    return chosen


def _plain_and_small(path: Path, size: int) -> bool:
    if doc_type_for(path) not in IN_PROCESS_TYPES or size > IN_PROCESS_MAX_BYTES:
        return False
    try:
        content_type = sniff(path)  # a .txt that is really a PDF or a zip goes to a worker
    except OSError:
        return False
    return content_type is None or content_type in IN_PROCESS_TYPES


def worker_preload(paths: Iterable[str | Path]) -> tuple[str, ...]:
    """The modules the workers' fork server imports for a run that reads `paths`: `WORKER_PRELOAD`
    and the extractor of each of their document types. A folder of PDFs starts its workers without
    the Office, EPUB and HTML readers (about half of the 0.4 CPU-s that importing every extractor
    costs, while a core waits); a type that turns up in a later run of the same pool is imported by
    each worker when it first reads one."""
    types = {doc_type_for(Path(path)) for path in paths}
    return (WORKER_PRELOAD, *sorted({extractor_module(doc_type) for doc_type in types if doc_type}))


def every_extractor_preload() -> tuple[str, ...]:
    """`WORKER_PRELOAD` and every extractor: what a fork server started before the run's files are known
    imports (`cli_launch`)."""
    return (WORKER_PRELOAD, *extractor_modules())
