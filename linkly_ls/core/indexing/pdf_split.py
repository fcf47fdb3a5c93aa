"""A long PDF read in page ranges by several workers, then assembled once.

Reading pages (`read_page`) is most of the cost of a PDF; a 2,400-page manual
in one task keeps one core busy for seconds after the other has run out of
work. A PDF expected to take longer than the whole run's share per worker
is therefore handed out as one part task per worker (measured: more parts
cost more than they save, and a long PDF among plenty of other work is best
left whole, as the other workers are busy meanwhile). Each part opens the
PDF, reads its share of the pages (the share is fixed by the page count,
which only the workers know) and saves them to a scratch folder of the data dir. The part that finds every share saved - the last to
finish - assembles the document from them, exactly as a whole-file
extraction does, and returns it; the other parts return nothing. The
indexing process only hands out the parts and waits for all of them: one
failed part (a timeout, a crash, the memory cap) is the file's error.
Each part has the per-file time limit, the assembling part included.
"""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.indexing.scratch import clear_abandoned, scratch_folder
from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract.source import OpenedSource
from linkly_ls.core.indexing.preparation import PreparedFile, hash_file, prepare_file
from linkly_ls.core.indexing.work_plan import estimated_seconds
from linkly_ls.core.indexing.workers import TaskOutcome

if TYPE_CHECKING:
    from linkly_ls.core.extract.pdf import PageReading

#: a PDF expected to take at least this long (work_plan's estimate) is read in parts
SPLIT_MIN_SECONDS = 3.0
#: expected seconds of one part; at most one part per worker: each part opens the PDF and
#: loads its fonts again (about 0.2 s for R-fullrefman), and more parts measured slower
SECONDS_PER_PART = 2.0
#: a part reads at least this many pages: each part pays for opening the PDF again
MIN_PAGES_PER_PART = 300


@dataclass(frozen=True)
class PdfPartTask:
    """Read share `part` of `parts` of a PDF's pages into `folder`; the last part to finish assembles."""

    path: str
    known_hash: str | None
    limits: ExtractLimits
    part: int
    parts: int
    folder: str


def run_task(task: Any) -> PreparedFile | None:
    """What the extraction workers run: a whole file, or one part of a long PDF."""
    if isinstance(task, PdfPartTask):
        return prepare_pdf_part(task)
    return prepare_file(task)


def page_share(page_count: int, part: int, parts: int) -> tuple[int, int]:
    """Pages [start, stop) of share `part`; fewer shares than `parts` when the PDF is short, the rest empty."""
    shares = max(1, min(parts, page_count // MIN_PAGES_PER_PART))
    if part >= shares:
        return 0, 0
    return page_count * part // shares, page_count * (part + 1) // shares


def prepare_pdf_part(task: PdfPartTask) -> PreparedFile | None:
    """Worker side: read this part's pages; assemble and prepare the file when all parts are read."""
    from linkly_ls.core.extract.pdf import open_pdf, read_pages

    folder = Path(task.folder)
    reading = None
    doc = None
    if not _unchanged(task):  # an unchanged file is not read again; the assembling part notes it
        try:
            with OpenedSource(Path(task.path)) as source:  # never through a link, as prepare_file reads it
                doc = open_pdf(source.read_path)
        except Exception:  # noqa: BLE001 - not a readable PDF: the assembling part reads the file whole and says why
            doc = None
    if doc is not None:
        try:
            reading = read_pages(doc, *page_share(doc.page_count, task.part, task.parts))
        finally:
            doc.close()
    saved = folder / f"part-{task.part}.pickle"
    with open(f"{saved}.tmp", "wb") as handle:
        pickle.dump(reading, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(f"{saved}.tmp", saved)  # each part saves before it looks, so the last one sees all
    if not all((folder / f"part-{part}.pickle").exists() for part in range(task.parts)):
        return None
    try:
        os.close(os.open(folder / "assembling", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:  # two parts finished together; the other one assembles
        return None
    return prepare_file((task.path, task.known_hash, task.limits), _join(folder, task.parts))


def _unchanged(task: PdfPartTask) -> bool:
    if task.known_hash is None:
        return False
    try:
        return hash_file(Path(task.path)) == task.known_hash
    except (OSError, ExtractionError):
        return False


def _join(folder: Path, parts: int) -> PageReading | None:
    """The saved shares as one reading of the whole PDF, or None when a part could not open it."""
    readings = []
    for part in range(parts):
        with open(folder / f"part-{part}.pickle", "rb") as handle:
            readings.append(pickle.load(handle))
    if any(reading is None for reading in readings):
        return None
    whole = readings[0]
    for reading in readings[1:]:
        if reading.pages:
            whole.pages.extend(reading.pages)
            whole.unreadable.extend(reading.unreadable)
    return whole


@dataclass
class _SplitFile:
    folder: str
    parts: int
    outcomes: list[TaskOutcome] = field(default_factory=list)


class PdfSplitter:
    """Indexing-process side: replaces long PDFs' tasks by part tasks, and their outcomes by one per file."""

    def __init__(self, data_dir: Path) -> None:
        self._data_dir = data_dir
        self._files: dict[str, _SplitFile] = {}
        clear_abandoned(data_dir)

    def split(self, work: list[tuple[str, tuple]], workers: int) -> list[tuple[Any, Any]]:
        """`work`: (path, (path, known hash, limits)) tasks, slowest first.

        A long PDF is split only when it would keep one worker busy longer than the whole run
        needs per worker: otherwise the other workers have enough to do meanwhile, and the
        parts' extra cost (each opens the PDF and loads its fonts again) would only add time.
        """
        if workers < 2:
            return work
        estimates = [_estimate(Path(key)) for key, _ in work]
        share = sum(estimates) / workers
        tasks: list[tuple[Any, Any]] = []
        for (key, task), seconds in zip(work, estimates):
            parts = min(workers, max(2, round(seconds / SECONDS_PER_PART)))
            if Path(key).suffix.lower() != ".pdf" or seconds < SPLIT_MIN_SECONDS or seconds <= share:
                tasks.append((key, task))
                continue
            folder = str(scratch_folder(self._data_dir, "pdf-parts"))
            self._files[key] = _SplitFile(folder=folder, parts=parts)
            path, known_hash, limits = task
            tasks.extend(
                ((key, part), PdfPartTask(path, known_hash, limits, part, parts, folder)) for part in range(parts)
            )
        return tasks

    def merge(self, outcomes: Iterator[TaskOutcome]) -> Iterator[TaskOutcome]:
        """Pass whole-file outcomes on; give one outcome per split file once all its parts are in."""
        try:
            for outcome in outcomes:
                if not isinstance(outcome.key, tuple):
                    yield outcome
                    continue
                key = outcome.key[0]
                split = self._files[key]
                split.outcomes.append(outcome)
                if len(split.outcomes) == split.parts:
                    del self._files[key]
                    shutil.rmtree(split.folder, ignore_errors=True)
                    yield _file_outcome(key, split.outcomes)
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the temporary folders of split files whose parts are not all in (a run stopped early)."""
        for split in self._files.values():
            shutil.rmtree(split.folder, ignore_errors=True)
        self._files.clear()


def _estimate(path: Path) -> float:
    try:
        return estimated_seconds(path, path.stat().st_size)
    except OSError:
        return 0.0


def _file_outcome(key: str, outcomes: list[TaskOutcome]) -> TaskOutcome:
    """One failed part fails the file; otherwise the assembling part's value is the file's."""
    seconds = sum(outcome.seconds for outcome in outcomes)
    failed = next((outcome for outcome in outcomes if outcome.error), None)
    if failed is not None:
        return TaskOutcome(key=key, error=failed.error, seconds=seconds)
    value = next((outcome.value for outcome in outcomes if outcome.value is not None), None)
    if value is None:
        return TaskOutcome(key=key, error="the parts of this PDF were read but none assembled it", seconds=seconds)
    return TaskOutcome(key=key, value=value, seconds=seconds)
