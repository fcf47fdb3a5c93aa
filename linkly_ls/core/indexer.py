"""Incremental indexing of a library: find files, extract changed ones, write catalog and index.

A file is unchanged when its size and mtime match the catalog, or when its
content hash does (then only the mtime is updated). Broken files get one
clear error each and never stop the run. Files that disappeared are removed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from linkly_ls.core.analysis import count_words, detect_language, extract_keywords
from linkly_ls.core.catalog import Catalog, DocumentRecord, ErrorRecord, LibraryRecord, make_doc_id
from linkly_ls.core.document import ExtractedDocument, ExtractionError, OutlineNode
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.index.chunking import Chunk, chunk_document
from linkly_ls.core.index.keyword import IndexedChunks, KeywordIndex
from linkly_ls.core.reachability import is_under, keep_message, root_problem, unreadable_problem
from linkly_ls.core.walker import WalkRules, is_indexable, walk_library
from linkly_ls.core.work_plan import fits_in_process, slowest_first
from linkly_ls.core.workers import TaskOutcome, WorkerPool

ProgressCallback = Callable[[int, int, str], None]
FLUSH_EVERY_DOCS = 64
FLUSH_EVERY_SECONDS = 3.0
#: modules the workers' fork server loads once for all workers
WORKER_PRELOAD = ("linkly_ls.core.extract.preload",)


@dataclass
class PreparedFile:
    """A file read by a worker: its document and derived data, or why it failed."""

    path: str
    size: int
    mtime_ns: int
    content_hash: str
    unchanged: bool = False
    document: ExtractedDocument | None = None
    word_count: int = 0
    keywords: list[str] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    error: str | None = None


@dataclass
class IndexReport:
    library: str
    indexed: int = 0
    unchanged: int = 0
    failed: int = 0
    removed: int = 0
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: (path, warning) for indexed files that a `[limits]` cap cut or wrapped
    capped: list[tuple[str, str]] = field(default_factory=list)
    #: the longest one file spent in a worker (extraction, analysis, chunking), and which file
    slowest_seconds: float = 0.0
    slowest_path: str = ""

    def summary(self) -> str:
        return (
            f"{self.library}: {self.indexed} indexed, {self.unchanged} unchanged, {self.failed} failed, "
            f"{self.removed} removed in {self.seconds:.1f} s"
        )


def hash_file(path: Path) -> str:
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def one_line(message: str, limit: int = 500) -> str:
    """An error message as one line (whitespace runs, newlines included, become one space), clipped."""
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _outline_titles(nodes: list[OutlineNode]) -> list[str]:
    titles: list[str] = []
    for node in nodes:
        titles.append(node.title)
        titles.extend(_outline_titles(node.children))
    return titles


def prepare_file(task: tuple[str, str | None, ExtractLimits]) -> PreparedFile:
    """Worker side: hash, and when the content changed, extract, analyse and chunk."""
    path_text, known_hash, limits = task
    path = Path(path_text)
    stat = path.stat()
    prepared = PreparedFile(path=path_text, size=stat.st_size, mtime_ns=stat.st_mtime_ns, content_hash="")
    try:
        prepared.content_hash = hash_file(path)
    except OSError as error:
        prepared.error = f"cannot read file: {error.strerror or error}"
        return prepared
    if known_hash is not None and known_hash == prepared.content_hash:
        prepared.unchanged = True
        return prepared
    try:
        document = extract_file(path, limits)
    except ExtractionError as error:
        prepared.error = str(error)
        return prepared
    document.language = document.language or detect_language(document.lines)
    prepared.document = document
    prepared.word_count = count_words(document.lines)
    prepared.keywords = extract_keywords(document.title, document.lines, _outline_titles(document.outline))
    prepared.chunks = chunk_document(document.lines, document.outline, document.page_starts)
    return prepared


def _prepare_here(work: list[tuple[str, tuple]]) -> Iterator[TaskOutcome]:
    """Run `prepare_file` in this process (for a few small plain-text files; see work_plan)."""
    for key, task in work:
        started = time.monotonic()
        outcome = TaskOutcome(key=key)
        try:
            outcome.value = prepare_file(task)
        except Exception as error:  # reported per file, as a worker would
            outcome.error = f"{type(error).__name__}: {error}"
        outcome.seconds = time.monotonic() - started
        yield outcome


class Indexer:
    def __init__(self, catalog: Catalog, keyword: KeywordIndex, limits: ExtractLimits, data_dir: Path) -> None:
        self.catalog = catalog
        self.keyword = keyword
        self.limits = limits
        self.data_dir = data_dir
        self._pool: WorkerPool | None = None
        self._chunk_cache: dict[str, IndexedChunks] = {}
        #: documents read but not yet in the catalog: written in one transaction by the next flush
        self._unsaved: list[tuple[DocumentRecord, list[str]]] = []
        self.after_flush: list[Callable[[list[str], list[str]], None]] = []

    def pool(self) -> WorkerPool:
        if self._pool is None:
            self._pool = WorkerPool(
                prepare_file,
                timeout_s=self.limits.extract_timeout_s,
                memory_mb=self.limits.extract_memory_mb,
                preload=WORKER_PRELOAD,
            )
        return self._pool

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
        rules = WalkRules(include=library.include, exclude=library.exclude, skip_dirs=[self.data_dir])
        states = self.catalog.file_states(library.name)
        previous_errors = {error.path: error for error in self.catalog.errors(library.name)}
        unreadable: dict[str, str] = {}
        for root in library.paths:
            problem = root_problem(Path(root), states)
            if problem:
                unreadable[root] = problem
        if only_paths is None:
            found = self._walk(library, rules, unreadable)
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
        for path in found:
            key = str(path)
            seen.add(key)
            try:
                stat = path.stat()
            except OSError:
                continue
            state = states.get(key)
            if state and state[1] == stat.st_size and state[2] == stat.st_mtime_ns:
                report.unchanged += 1
                continue
            failed_before = previous_errors.get(key)
            if failed_before and failed_before.size == stat.st_size and failed_before.mtime_ns == stat.st_mtime_ns:
                report.failed += 1
                continue
            owner = self.catalog.by_path(key) if state is None else None
            if owner is not None and owner.library != library.name:
                continue
            work.append((key, (key, state[3] if state else None, self.limits)))
            sizes.append((path, stat.st_size))
        deleted = [states[path][0] for path in scope - seen if path in states]
        for doc_id in deleted:
            self.catalog.remove_document(doc_id)
        report.removed = len(deleted)
        for path in set(previous_errors) & (scope - seen):
            self.catalog.remove_error(path)
        in_process = fits_in_process(sizes)
        work = [work[index] for index in slowest_first(sizes)]
        self._run(work, library, states, report, progress, in_process)
        self.save_read_documents()
        self.flush()
        report.seconds = time.monotonic() - started
        return report

    def _walk(self, library: LibraryRecord, rules: WalkRules, unreadable: dict[str, str]) -> list[Path]:
        """The files of the library's roots not in `unreadable`; folders that cannot be listed are added to it."""

        def note(error: OSError) -> None:
            if error.filename:
                unreadable[str(error.filename)] = unreadable_problem(error)

        files: list[Path] = []
        for root in library.paths:
            if root not in unreadable:
                files.extend(walk_library(Path(root), rules, on_unreadable=note))
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
        in_process: bool = False,
    ) -> None:
        if not work:
            return
        total = len(work)
        done = 0
        last_flush = time.monotonic()
        since_flush = 0
        outcomes = _prepare_here(work) if in_process else self.pool().run(work)
        for outcome in outcomes:
            done += 1
            path = outcome.key
            prepared: PreparedFile | None = outcome.value
            if outcome.seconds > report.slowest_seconds:
                report.slowest_seconds, report.slowest_path = outcome.seconds, path
            if prepared is None or prepared.error:
                message = one_line((prepared.error if prepared else outcome.error) or "unknown error")
                self._record_error(path, library.name, message, prepared)
                report.failed += 1
                report.errors.append((path, message))
            elif prepared.unchanged:
                self.catalog.touch_document(states[path][0], prepared.mtime_ns)
                report.unchanged += 1
            else:
                self._store(prepared, library.name)
                report.indexed += 1
                report.capped += [(path, warning) for warning in prepared.document.warnings if "[limits]" in warning]
                since_flush += 1
            if progress:
                progress(done, total, path)
            if since_flush >= FLUSH_EVERY_DOCS or time.monotonic() - last_flush > FLUSH_EVERY_SECONDS:
                self.save_read_documents()
                self.flush()
                since_flush = 0
                last_flush = time.monotonic()

    def _record_error(self, path: str, library: str, message: str, prepared: PreparedFile | None) -> None:
        try:
            stat = Path(path).stat()
            size, mtime_ns = stat.st_size, stat.st_mtime_ns
        except OSError:
            size, mtime_ns = 0, 0
        existing = self.catalog.by_path(path)
        if existing is not None:
            self.catalog.remove_document(existing.doc_id)
        self.catalog.put_error(ErrorRecord(path=path, library=library, message=message, size=size, mtime_ns=mtime_ns))

    def _store(self, prepared: PreparedFile, library: str) -> None:
        document = prepared.document
        assert document is not None
        record = DocumentRecord(
            doc_id=make_doc_id(prepared.path),
            library=library,
            path=prepared.path,
            doc_type=document.doc_type,
            title=document.title,
            size=prepared.size,
            mtime_ns=prepared.mtime_ns,
            content_hash=prepared.content_hash,
            word_count=prepared.word_count,
            total_lines=len(document.lines),
            has_outline=bool(document.outline),
            language=document.language,
            keywords=prepared.keywords,
            outline=document.outline,
            page_starts=document.page_starts,
            warnings=document.warnings,
            text_missing_reason=document.text_missing_reason,
            indexed_at=time.time(),
        )
        self._unsaved.append((record, document.lines))
        self._chunk_cache[record.doc_id] = IndexedChunks(
            doc_id=record.doc_id,
            title=record.title,
            path=record.path,
            language=record.language,
            chunks=prepared.chunks,
        )

    def save_read_documents(self) -> None:
        """Write the documents read since the last save to the catalog, in one transaction."""
        unsaved, self._unsaved = self._unsaved, []
        try:
            self.catalog.put_documents(unsaved)
        except Exception:
            for record, _ in unsaved:  # not in the catalog: the next run reads these files again
                self._chunk_cache.pop(record.doc_id, None)
            raise

    def flush(self, wait_s: float = 30.0) -> None:
        """Make the keyword index match the catalog: add pending documents, drop tombstones."""
        self.save_read_documents()
        pending, tombstones = self.catalog.pending_keyword_work()
        if not pending and not tombstones:
            return
        documents: list[IndexedChunks] = []
        records = self.catalog.get_many([doc_id for doc_id in pending if doc_id not in self._chunk_cache])
        for doc_id in pending:
            chunks = self._chunk_cache.pop(doc_id, None)
            if chunks is None:
                record = records.get(doc_id)
                if record is None:
                    continue
                chunks = IndexedChunks(
                    doc_id=doc_id,
                    title=record.title,
                    path=record.path,
                    language=record.language,
                    chunks=chunk_document(self.catalog.lines(doc_id), record.outline, record.page_starts),
                )
            documents.append(chunks)
        self.keyword.replace(documents, tombstones, wait_s=wait_s)
        self.catalog.mark_keyword_done(pending, tombstones)
        for callback in self.after_flush:
            callback(pending, tombstones)
