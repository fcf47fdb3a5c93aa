"""Incremental indexing of a library: find files, extract changed ones, write catalog and index.

A file is unchanged when its size and mtime match the catalog, or when its
content hash does (then only the mtime is updated). Broken files get one
clear error each and never stop the run. Files that disappeared are removed.

OCR runs in a second pass: the first pass indexes every file's text layer
(images by name, scanned pages by their marker, both marked "OCR pending")
and writes the keyword index, so every file is searchable early; the second
pass reads the pending files again with OCR. A run stopped before its OCR
pass leaves the files marked, and the next run reads them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from itertools import chain
from pathlib import Path

from linkly_ls.core.store.catalog import Catalog, LibraryRecord, SkippedCount
from linkly_ls.core.extract import EXTRACTOR_VERSIONS, MISNAMED_MARK, SIZE_LIMIT_MARKS, extractor_version
from linkly_ls.core.extract.base import READ_ERROR, ExtractLimits, ocr_pass_timeout_s
from linkly_ls.core.extract.ocr import NO_OCR_ENGINE, OCR_DISABLED, missing_packs_note, ocr_pending, ocr_unavailable_reason
from linkly_ls.core.search.keyword import KeywordIndex
from linkly_ls.core.indexing.document_store import DocumentStore, FlushCallback
from linkly_ls.core.indexing.nesting import Nesting
from linkly_ls.core.indexing.pdf_split import PdfSplitter, run_task
from linkly_ls.core.document import ExtractionError
from linkly_ls.core.indexing.preparation import PreparedFile, hash_file, one_line, prepare_file, prepare_here
from linkly_ls.core.indexing.report import IndexReport
from linkly_ls.core.indexing.twins import Twins, copies_read
from linkly_ls.core.indexing.skips import OTHER_LIBRARY, TOO_LARGE, UNREADABLE, SkipTally
from linkly_ls.core.indexing.reachability import is_under, keep_message, root_problem, unreadable_problem
from linkly_ls.core.indexing.walker import WalkRules, is_indexable, walk_library
from linkly_ls.core.indexing.work_plan import plan, quick_files, slowest_first, worker_preload
from linkly_ls.core.indexing.worker_deaths import marked_after_one_death
from linkly_ls.core.indexing.handover import RunInterrupted
from linkly_ls.core.indexing.workers import TaskOutcome, WorkerPool

__all__ = ["IndexReport", "Indexer", "PreparedFile", "prepare_file"]

ProgressCallback = Callable[[int, int, str], None]
#: documents read since the last flush that make the next one start at once: a bound on what a flush
#: holds when the files are small (time and text volume bound it otherwise). Each flush commits the
#: keyword index (about 40 ms, whatever it holds): at 64, a folder of 457 Markdown notes took 8 commits
FLUSH_EVERY_DOCS = 1024
FLUSH_EVERY_SECONDS = 3.0
#: characters of text read since the last flush that make the next one start at once: a long
#: document is written while the workers still read other files, not after the last of them
FLUSH_EVERY_CHARS = 2_000_000
#: bytes of touched files (same size, new mtime) a run hashes itself to find those whose content is
#: unchanged, so that a `touch` or a checkout that rewrote the same bytes does not start the workers
REHASH_HERE_BYTES = 64 * 1024 * 1024


class Indexer:
    def __init__(self, catalog: Catalog, keyword: KeywordIndex, limits: ExtractLimits, data_dir: Path) -> None:
        self.catalog = catalog
        self.keyword = keyword
        self.limits = limits
        self.data_dir = data_dir
        self._pool: WorkerPool | None = None
        self._interrupted = False
        self.documents = DocumentStore(catalog, keyword)
        #: "OCR" while the files left for OCR are read (what `status` says of a run's progress), else ""
        self.phase = ""

    @property
    def after_flush(self) -> list[FlushCallback]:
        """Called after each flush (`DocumentStore.after_flush`)."""
        return self.documents.after_flush

    def save_read_documents(self) -> None:
        self.documents.save_read_documents()

    def flush(self, wait_s: float = 30.0) -> None:
        """Make the keyword index match the catalog (`DocumentStore.flush`)."""
        self.documents.flush(wait_s=wait_s)

    def pool(self, paths: Iterable[str] = ()) -> WorkerPool:
        """The worker pool; its fork server, started by the first run, preloads the extractors of `paths`
        (`work_plan.worker_preload`)."""
        if self._pool is None:
            self._pool = WorkerPool(
                run_task,
                timeout_s=self.limits.extract_timeout_s,
                memory_mb=self.limits.extract_memory_mb,
                preload=worker_preload(paths),
            )
        return self._pool

    def interrupt(self) -> None:
        """End the run under way, if any, from another thread (`WorkerPool.interrupt`), and any run started
        after it, at its start: its caller gets `RunInterrupted`. For a writer that stops (its engine is
        about to close): what was stored stays, and the next open finishes the keyword-index work."""
        self._interrupted = True
        if self._pool is not None:
            self._pool.interrupt()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def index_library(
        self,
        library: LibraryRecord,
        progress: ProgressCallback | None = None,
        only_paths: list[Path] | None = None,
    ) -> IndexReport:
        """Bring the catalog in line with the library's folders (or just `only_paths` of it)."""
        started = time.monotonic()
        report = IndexReport(library=library.name)
        rules = WalkRules(
            include=library.include,
            exclude=library.exclude,
            skip_dirs=[self.data_dir],
            respect_ignore_files=library.respect_gitignore,
        )
        tally = SkipTally()
        nesting = Nesting.of(self.catalog, library)
        states = self.catalog.file_states(library.name, EXTRACTOR_VERSIONS)
        previous_errors = {error.path: error for error in self.catalog.errors(library.name)}
        unreadable: dict[str, str] = {}
        for root in library.paths:
            problem = root_problem(Path(root), states)
            if problem:
                unreadable[root] = problem
        if only_paths is None:
            found = self._walk(library, rules, unreadable, tally)
            scope = set(states) | set(previous_errors)
        else:
            found = []
            for path in only_paths:
                try:
                    if path.is_file() and self._in_library(path, library, rules):
                        found.append(path)
                except OSError as error:  # inside a folder that cannot be read (any more)
                    unreadable[str(path)] = unreadable_problem(error)
            scope = {str(p) for p in only_paths}
        for folder, problem in sorted(unreadable.items()):
            kept = {path for path in scope if is_under(path, folder)}
            scope -= kept
            report.errors.append((folder, keep_message(problem, len(kept & states.keys()))))
        seen: set[str] = set()
        work: list[tuple[str, tuple[str, str | None, ExtractLimits]]] = []
        sizes: list[tuple[Path, int]] = []
        first_pass = self._first_pass_limits()
        twins = Twins(self.catalog, states)
        rehash_budget = REHASH_HERE_BYTES
        for path in found:
            key = str(path)
            if nesting.in_inner_library(key):  # not seen: held here before the inner library was, it leaves
                tally.add(str(path.parent), OTHER_LIBRARY)
                continue
            seen.add(key)
            try:
                stat = path.stat()
            except OSError:
                continue
            too_large = stat.st_size > self.limits.max_file_bytes
            if too_large:  # still sent to a worker, for its error line (and to leave the index if it was in)
                tally.add(str(path.parent), TOO_LARGE)
            state = None if too_large else states.get(key)
            if state and state[1] == stat.st_size and state[2] == stat.st_mtime_ns:
                report.unchanged += 1
                continue
            if state and state[1] == stat.st_size and rehash_budget >= stat.st_size:
                rehash_budget -= stat.st_size
                if _same_content(path, state[3]):
                    self.catalog.touch_document(state[0], stat.st_mtime_ns)
                    report.unchanged += 1
                    continue
            failed_before = previous_errors.get(key)
            if (
                failed_before
                and failed_before.size == stat.st_size
                and failed_before.mtime_ns == stat.st_mtime_ns
                and failed_before.extractor >= extractor_version(path)
                and not marked_after_one_death(failed_before.message)
                and not any(mark in failed_before.message for mark in SIZE_LIMIT_MARKS)  # it may have been raised
                and not failed_before.message.startswith(READ_ERROR)  # access may have been given since
            ):
                report.failed += 1
                continue
            owner = self.catalog.by_path(key) if state is None else None
            if owner is not None and owner.library != library.name and not nesting.takes_over(key, owner.library):
                tally.add(str(path.parent), OTHER_LIBRARY)
                continue
            copied = twins.prepared(path, stat) if state is None and not too_large else None
            if copied is not None:  # moved or copied within the library: the stored document stands for it
                self.documents.store(copied, library.name)
                report.indexed += 1
                continue
            work.append((key, (key, state[3] if state else None, first_pass)))
            sizes.append((path, stat.st_size))
        if only_paths is None:
            report.skipped = tally.by_reason()
            self.catalog.replace_skipped(
                library.name,
                [SkippedCount(library.name, folder, reason, count) for (folder, reason), count in tally.by_folder.items()],
            )
        for path in set(previous_errors) & (scope - seen):
            self.catalog.remove_error(path)
        read_here, for_workers = plan(sizes, workers_up=self._pool is not None and self._pool.started)
        here, work = [work[index] for index in read_here], [work[index] for index in for_workers]
        ocr_later: list[str] = []
        self._run(work, library, states, report, progress, here, ocr_later, quick_files(sizes))
        self.save_read_documents()
        # files gone leave once the files found are in: a folder moved (a removal and an addition in one batch)
        # stays searchable, its old paths marked deleted, until its documents are read at their new place
        deleted = [states[path][0] for path in scope - seen if path in states]
        self.catalog.record_moves(twins.moves(deleted))  # first: a removal forgets the ids that led to it
        for doc_id in deleted:
            self.catalog.remove_document(doc_id)
        report.removed += len(deleted)
        self.flush()
        report.text_layer_seconds = time.monotonic() - started
        self._ocr_pass(library, ocr_later, report, progress)
        report.seconds = time.monotonic() - started
        return report

    def _first_pass_limits(self) -> ExtractLimits:
        """The limits of the first pass: OCR left for later whenever OCR can run at all."""
        if ocr_unavailable_reason(self.limits) is None:
            return replace(self.limits, ocr_deferred=True)
        return self.limits

    def _ocr_pass(
        self, library: LibraryRecord, ocr_later: list[str], report: IndexReport, progress: ProgressCallback | None
    ) -> None:
        """Read again, with OCR, the files the first pass (of this run or a stopped one) left pending."""
        paths = dict.fromkeys(ocr_later)
        paths.update(dict.fromkeys(self.catalog.ocr_pending_paths(library.name)))
        if ocr_unavailable_reason(self.limits) is None:  # images left unread while OCR was off or not installed
            paths.update(dict.fromkeys(self.catalog.ocr_unread_paths(library.name, (OCR_DISABLED, NO_OCR_ENGINE))))
        files: list[tuple[Path, int]] = []
        copies: list[tuple[str, str]] = []  # (path, the path of the same content read by OCR in its place)
        first_of: dict[str, str] = {}
        for key in paths:
            record = self.catalog.by_path(key)
            content = record.content_hash if record is not None else ""
            if content and content in first_of:  # one scan under two names is read once
                copies.append((key, first_of[content]))
                continue
            try:
                files.append((Path(key), Path(key).stat().st_size))
            except OSError:  # gone since it was found
                report.removed += 1 if self.documents.forget(key) else 0
                continue
            if content:
                first_of[content] = key
        if not files:
            return
        work = [(str(files[index][0]), (str(files[index][0]), None, self.limits)) for index in slowest_first(files)]
        report.ocr_files = len(work)
        if (note := missing_packs_note(self.limits)) is not None:
            report.notes.append(note)
        pool = self.pool(key for key, _ in work)
        pool.timeout_s, self.phase = ocr_pass_timeout_s(self.limits), "OCR"  # a long scan's pages take seconds each
        if progress:  # the pass starts at none of its files read, named as it is
            progress(0, len(work), "OCR")
        try:
            self._run(work, library, {}, report, progress, ocr_later=None)
        finally:
            pool.timeout_s, self.phase = self.limits.extract_timeout_s, ""
        self.save_read_documents()
        for prepared in copies_read(self.catalog, copies):
            self.documents.store(prepared, library.name)
        self.save_read_documents()
        self.flush()

    def _walk(
        self, library: LibraryRecord, rules: WalkRules, unreadable: dict[str, str], tally: SkipTally
    ) -> list[Path]:
        """The files of the library's roots not in `unreadable`; folders that cannot be listed are added to it."""

        def note(error: OSError) -> None:
            if error.filename:
                unreadable[str(error.filename)] = unreadable_problem(error)
                if str(error.filename) not in library.paths:  # a subfolder: kept in the skipped counts, with its name
                    tally.add(str(error.filename), UNREADABLE)

        files: list[Path] = []
        for root in library.paths:
            if root not in unreadable:
                files.extend(walk_library(Path(root), rules, on_unreadable=note, on_skipped=tally.add))
        return files

    def _in_library(self, path: Path, library: LibraryRecord, rules: WalkRules) -> bool:
        return any(is_indexable(path, Path(root), rules) for root in library.paths)

    def _run(
        self,
        work: list[tuple[str, tuple]],
        library: LibraryRecord,
        states: dict[str, tuple[str, int, int, str]],
        report: IndexReport,
        progress: ProgressCallback | None,
        here: list[tuple[str, tuple]] | None = None,
        ocr_later: list[str] | None = None,
        quick: set[str] | None = None,
    ) -> None:
        """Extract `work` in the workers and `here` in this process (first, while the workers start),
        and store the results. `ocr_later` collects files left for the OCR pass; None means this is
        the OCR pass, whose files are already in the catalog by their text layer. `quick`: the paths
        that may wait in a busy worker's pipe (`work_plan.quick_files`)."""
        if self._interrupted:  # a run waiting for the write lock while the writer stopped
            raise RunInterrupted
        here = here or []
        total = len(work) + len(here)
        outcomes: Iterable[TaskOutcome] = prepare_here(here)
        if not work:
            self._store_outcomes(outcomes, total, library, states, report, progress, ocr_later)
            return
        pool, splitter = self.pool(key for key, _ in work), PdfSplitter(self.data_dir)
        tasks = splitter.split(work, pool.size)
        from_workers = splitter.merge(pool.run(tasks, quick=quick.__contains__ if quick else None))  # the workers start now
        try:
            self._store_outcomes(chain(outcomes, from_workers), total, library, states, report, progress, ocr_later)
        finally:  # left early (an error while storing): no worker goes on, no part folder is left behind
            from_workers.close()
            splitter.discard()
            pool.stop_run()

    def _store_outcomes(
        self,
        outcomes: Iterable[TaskOutcome],
        total: int,
        library: LibraryRecord,
        states: dict[str, tuple[str, int, int, str]],
        report: IndexReport,
        progress: ProgressCallback | None,
        ocr_later: list[str] | None,
    ) -> None:
        """Store each outcome as it comes (see `_run`), flushing as the thresholds are reached."""
        done = 0
        last_flush = time.monotonic()
        since_flush = 0
        chars_since_flush = 0
        for outcome in outcomes:
            done += 1
            path = outcome.key
            prepared: PreparedFile | None = outcome.value
            if outcome.seconds > report.slowest_seconds:
                report.slowest_seconds, report.slowest_path = outcome.seconds, path
            if ocr_later is None and (prepared is None or prepared.error) and not os.path.lexists(path):
                if self.documents.forget(path):  # deleted while the OCR pass ran: gone, not an OCR failure
                    report.removed += 1
            elif ocr_later is None and (prepared is None or prepared.error):
                message = one_line((prepared.error if prepared else outcome.error) or "unknown error")
                self.documents.record_ocr_failure(path, message)
                report.ocr_errors.append((path, message))
            elif ocr_later is None:
                self.documents.store(prepared, library.name)
                report.add_capped(path, prepared.document.warnings)
                since_flush += 1
            elif (prepared is None or prepared.error) and not os.path.lexists(path):
                # moved or deleted while it was read (a burst of renames): gone, not failed
                if self.documents.forget(path):
                    report.removed += 1
            elif prepared is None or prepared.error:
                message = one_line((prepared.error if prepared else outcome.error) or "unknown error")
                if self.documents.record_error(path, library.name, message):
                    report.removed += 1  # a document that now fails (grown past `max_file_mb`) left the index
                report.failed += 1
                report.errors.append((path, message))
            elif prepared.unchanged:
                self.catalog.touch_document(states[path][0], prepared.mtime_ns)
                report.unchanged += 1
            else:
                self.documents.store(prepared, library.name)
                if ocr_pending(prepared.document.warnings):
                    ocr_later.append(path)
                report.indexed += 1
                report.add_capped(path, prepared.document.warnings)
                report.misnamed += [(path, warning) for warning in prepared.document.warnings if MISNAMED_MARK in warning]
                since_flush += 1
                chars_since_flush += sum(map(len, prepared.document.lines))
            if progress:
                progress(done, total, path)
            if (
                since_flush >= FLUSH_EVERY_DOCS
                or chars_since_flush >= FLUSH_EVERY_CHARS
                or time.monotonic() - last_flush > FLUSH_EVERY_SECONDS
            ):
                self.save_read_documents()
                self.flush()
                since_flush = chars_since_flush = 0
                last_flush = time.monotonic()


def _same_content(path: Path, known_hash: str) -> bool:
    try:
        return hash_file(path) == known_hash
    except (OSError, ExtractionError):  # a worker reads it again and reports the error
        return False
