"""`status`: how complete the index is and what its writer is doing, for `linkly status` and the editors.

Per library: documents, files skipped (and why), failed, awaiting OCR, vector coverage. Then the
writer: this process (`writer` given and holding the role: its live activity), another process (the
lock holder's pid and the activity it publishes, see indexing/writer_status.py), or none. The faces add
what only they know, such as the address of a running MCP server.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkly_ls import __version__
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.reachability import root_problem
from linkly_ls.core.indexing.skips import describe
from linkly_ls.core.indexing.unfinished_runs import read_unfinished
from linkly_ls.core.indexing.writer_status import EMBEDDING, INDEXING, WriterActivity, format_duration, read_activity
from linkly_ls.core.indexing.vector_sync import coverage_text
from linkly_ls.core.tools.common import iso_utc
from linkly_ls.core.tools.libraries import LibraryInfo, list_libraries
from linkly_ls.core.tools.render import path_text

if TYPE_CHECKING:
    from linkly_ls.core.indexing.writer import IndexWriter
    from linkly_ls.core.store.records import ErrorRecord, LibraryRecord


@dataclass
class WriterInfo:
    #: None when no process holds the writer lock
    pid: int | None
    this_process: bool
    activity: WriterActivity | None

    def to_json(self) -> dict[str, Any]:
        activity = self.activity
        return {
            "pid": self.pid,
            "this_process": self.this_process,
            "activity": activity.activity if activity else ("unknown" if self.pid else "none"),
            "description": activity.describe() if activity else None,
            "library": activity.library if activity else "",
            "done": activity.done if activity else 0,
            "total": activity.total if activity else 0,
        }


#: failed files the text lists (the JSON lists up to MAX_FAILED_FILES; `failed` counts them all)
SHOWN_FAILED_FILES = 20
MAX_FAILED_FILES = 1000


@dataclass
class StatusResult:
    data_dir: str
    libraries: list[LibraryInfo]
    writer: WriterInfo
    mcp_url: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: the files that could not be indexed, with why (the first MAX_FAILED_FILES, by library and path)
    failed_files: list[ErrorRecord] = field(default_factory=list)
    #: (library, folder, why) for each library folder that cannot be walked now (missing, unreadable)
    folder_problems: list[tuple[str, str, str]] = field(default_factory=list)
    #: why the config file cannot be read now, when it cannot (the index is described all the same)
    config_problem: str | None = None
    #: the config file LINKLY_CONFIG names when there is no such file (no config file is read)
    missing_config: str | None = None
    #: (library, when its run started) for each run that began and did not end, and does not run now
    unfinished_runs: list[tuple[str, float]] = field(default_factory=list)

    @property
    def embedding(self) -> dict[str, Any] | None:
        activity = self.writer.activity
        return activity.embedding if activity and activity.activity == EMBEDDING else None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": __version__,
            "data_dir": self.data_dir,
            "documents": sum(library.document_count for library in self.libraries),
            "skipped": sum(library.skipped_count for library in self.libraries),
            "failed": sum(library.failed_count for library in self.libraries),
            "ocr_pending": sum(library.ocr_pending_count for library in self.libraries),
            "failed_files": [
                {"library": failure.library, "path": failure.path, "message": failure.message} for failure in self.failed_files
            ],
            "folder_problems": [
                {"library": library, "path": folder, "problem": problem} for library, folder, problem in self.folder_problems
            ],
            "vector_coverage": self.vector_coverage(),
            "embedding": self.embedding,
            "writer": self.writer.to_json(),
            "mcp_url": self.mcp_url,
            **({"config_error": self.config_problem} if self.config_problem else {}),
            **({"config_missing": self.missing_config} if self.missing_config else {}),
            "unfinished_runs": [{"library": name, "started_at": iso_utc(started)} for name, started in self.unfinished_runs],
            "libraries": [
                {
                    key: value
                    for key, value in library.to_json().items()
                    if key not in ("description", "include", "exclude")
                }
                for library in self.libraries
            ],
            **self.extra,
        }

    def vector_coverage(self) -> float | None:
        """The libraries' vector coverage weighted by their document counts (None when embeddings are off)."""
        covered = [library for library in self.libraries if library.vector_coverage is not None]
        if not covered:
            return None
        words = sum(library.document_count for library in covered)
        if not words:
            return 1.0
        return round(sum(library.vector_coverage * library.document_count for library in covered) / words, 4)

    def to_markdown(self) -> str:
        data = self.to_json()
        out = [
            f"## linkly status ({data['documents']} documents in {len(self.libraries)} "
            f"{'library' if len(self.libraries) == 1 else 'libraries'})",
            "",
            f"- index: {self.data_dir}",
            f"- writer: {self._writer_line()}",
        ]
        if self.config_problem:
            out.append(
                f"- config: {self.config_problem} (the libraries below are the index's; a running server keeps "
                "the config it read, and a `data_dir` set in the file is not known here)"
            )
        if self.missing_config:
            out.append(f"- config: LINKLY_CONFIG names {self.missing_config}, which does not exist (no config file is read)")
        embedding = self.embedding
        if embedding:
            eta = embedding.get("eta_seconds")
            left = f", about {format_duration(eta)} left" if eta is not None else ", estimating the time left"
            out.append(
                f"- embedding: {embedding['documents_done']:,} of {embedding['documents_total']:,} documents{left}"
            )
        out.append(f"- MCP: {self.mcp_url or 'no server running'}")
        if not self.libraries:
            out += ["", "No libraries yet. Add one with `linkly index PATH --library NAME`."]
            return "\n".join(out)
        out += ["", "| library | documents | skipped | failed | OCR pending | vectors |", "|---|---|---|---|---|---|"]
        for library in self.libraries:
            skipped = str(library.skipped_count)
            if library.skipped:
                skipped += f" ({describe(library.skipped)})"
            vectors = "off" if library.vector_coverage is None else coverage_text(library.vector_coverage)
            out.append(
                f"| {library.record.name} | {library.document_count} | {skipped} | {library.failed_count} | "
                f"{library.ocr_pending_count} | {vectors} |"
            )
        if self.unfinished_runs:
            out += ["", "### Index runs that did not finish", ""]
            out += [
                f"- {name}: the run started {iso_utc(started)} was stopped or killed before its end; the files it "
                "had not read are missing from the index until the next run (`linkly index`, or a server's start)"
                for name, started in self.unfinished_runs
            ]
        if self.folder_problems:
            out += ["", "### Library folders that cannot be read now", ""]
            out += [f"- {library}: {folder}: {problem}" for library, folder, problem in self.folder_problems]
        if self.failed_files:
            out += ["", "### Failed files", ""]
            out += [f"- {path_text(failure.path)}: {failure.message}" for failure in self.failed_files[:SHOWN_FAILED_FILES]]
            more = data["failed"] - SHOWN_FAILED_FILES
            if more > 0:
                out.append(f"- … and {more} more (`linkly status --json` lists up to {MAX_FAILED_FILES:,})")
        return "\n".join(out)

    def _writer_line(self) -> str:
        writer = self.writer
        if writer.pid is None and not writer.this_process:
            return "none (nothing keeps the index current; `linkly watch` or `linkly serve` would)"
        who = "this process" if writer.this_process else f"pid {writer.pid}"
        what = writer.activity.describe() if writer.activity else "activity not published"
        return f"{who}, {what}"


def status(engine: Engine, writer: IndexWriter | None = None, mcp_url: str | None = None) -> StatusResult:
    """The index's state; `writer`: this process's writer role, when it has one."""
    libraries = list_libraries(engine).libraries
    if writer is not None and writer.held:
        activity = writer.activity()
        info = WriterInfo(pid=activity.pid, this_process=True, activity=activity)
    elif (elsewhere := _writer_elsewhere(engine)) is not None:
        info = elsewhere
    else:
        info = WriterInfo(pid=None, this_process=False, activity=None)
    failed = [failure for library in libraries if library.failed_count for failure in engine.catalog.errors(library.record.name)]
    return StatusResult(
        data_dir=str(engine.data_dir), libraries=libraries, writer=info, mcp_url=mcp_url, failed_files=failed[:MAX_FAILED_FILES],
        folder_problems=_folder_problems(engine, [library.record for library in libraries]),
        unfinished_runs=_unfinished_runs(engine, [library.record.name for library in libraries], info.activity),
        missing_config=str(engine.config.missing_named_file) if engine.config.missing_named_file else None,
    )


def indexing_elsewhere(engine: Engine) -> str | None:
    """What another process indexing this index is doing (`indexing notes: 60 of 180 files`), when it is
    reading files: a search meanwhile may miss the files it has not reached. None otherwise."""
    writer = _writer_elsewhere(engine)
    if writer is None or writer.activity is None or writer.activity.activity != INDEXING:
        return None
    return f"another linkly process (pid {writer.pid}) is {writer.activity.describe()}: results may be incomplete"


def _writer_elsewhere(engine: Engine) -> WriterInfo | None:
    """The process holding the index's writer role, when it is another one, with what it publishes doing."""
    if not engine.writer_lock.held_elsewhere():
        return None
    pid = engine.writer_lock.holder_pid()
    return WriterInfo(pid=pid, this_process=False, activity=read_activity(engine.data_dir, pid) if pid else None)


def _unfinished_runs(engine: Engine, names: list[str], activity: WriterActivity | None) -> list[tuple[str, float]]:
    """The recorded runs that did not end, but the one the writer says it is doing now."""
    running = activity.library if activity is not None and activity.activity == INDEXING else None
    return [
        (name, started) for name, started in sorted(read_unfinished(engine.data_dir).items())
        if name in names and name != running
    ]


def _folder_problems(engine: Engine, libraries: list[LibraryRecord]) -> list[tuple[str, str, str]]:
    """Each library folder that cannot be walked now: the documents indexed from it are kept, and the run
    that found it said so only in its own output."""
    problems = []
    for library in libraries:
        for root in library.paths:
            problem = root_problem(Path(root), _indexed_paths(engine, library.name))
            if problem:
                problems.append((library.name, root, problem))
    return problems


def _indexed_paths(engine: Engine, library: str) -> Iterator[str]:
    """The library's indexed paths, read from the catalog only if iterated (for an empty folder)."""
    yield from engine.catalog.file_states(library)
