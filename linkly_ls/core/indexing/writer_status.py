"""What the index's writer is doing, published for the other processes: `<data_dir>/writer-status.json`.

Only the writer knows whether it is indexing, embedding or just watching, and how fast its vectors
come. While it holds the writer lock it rewrites this small file whenever that changes (checked
every second); `linkly status`, or an editor whose language server only reads the index, shows it.
A crash can leave the file behind, so readers trust it only when its pid is the lock holder's.
A process refused the role reads it to say what the holder does (`held_error`).
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkly_ls.core.errors import IndexHeldError

if TYPE_CHECKING:
    from linkly_ls.core.store.writer_lock import WriterLock

STATUS_FILE_NAME = "writer-status.json"
#: seconds between two samples of the embedded words, from which the time left is estimated
ETA_SAMPLE_S = 5.0

#: what a writer does: its first run has not begun, an index run, embedding passages, watching folders
STARTING, INDEXING, EMBEDDING, WATCHING, IDLE = "starting", "indexing", "embedding", "watching", "idle"
#: what kind of writer it is: one that keeps the index current (serve, watch, an editor), one that serves
#: without watching (`serve --no-watch`), or one command's run (`linkly index`, `remove-library`)
KEEPS_CURRENT, SERVES_UNWATCHED, ONE_RUN = "keeps_current", "serves_unwatched", "one_run"


@dataclass
class WriterActivity:
    pid: int
    activity: str
    #: the index run's library and files done of the files to read (changed ones only)
    library: str = ""
    done: int = 0
    total: int = 0
    #: while embedding: {"documents_done", "documents_total", "words_done", "words_total", "eta_seconds"}
    embedding: dict[str, Any] | None = None
    role: str = KEEPS_CURRENT
    updated_at: float = field(default_factory=time.time)
    #: what the watcher cannot follow live (`IndexStatus.watch_problem`), "" when it follows everything
    problem: str = ""
    #: the libraries it keeps current when not all of them (`linkly watch --library NAME`), else None
    libraries: list[str] | None = None
    #: "OCR" while an index run reads its files left for OCR (`done` and `total` count those), else ""
    phase: str = ""

    def same_as(self, other: WriterActivity | None) -> bool:
        return other is not None and {**asdict(self), "updated_at": 0} == {**asdict(other), "updated_at": 0}

    def describe(self) -> str:
        """`indexing notes: 12 of 40 files`, `embedding: 1,200 of 5,000 documents, about 4 min left`, ..."""
        if self.activity == INDEXING:
            progress = f": {self.done} of {self.total} files" if self.total else ""
            if self.phase:  # "1 of 1 files" read as done while a 300-page scan was OCRed for minutes
                progress = f": {self.phase} of {self.done} of {self.total} files" if self.total else f": {self.phase}"
            return f"indexing {self.library}{progress}".rstrip()
        if self.activity == EMBEDDING and self.embedding:
            embedding = self.embedding
            eta = embedding.get("eta_seconds")
            left = f", about {format_duration(eta)} left" if eta is not None else ""
            return (
                f"embedding: {embedding['documents_done']:,} of {embedding['documents_total']:,} documents{left}"
            )
        described = {STARTING: "starting", WATCHING: "watching for changes", IDLE: "idle"}.get(self.activity, self.activity)
        if self.libraries is not None:
            described += f" (only {only_libraries(self.libraries)})"
        return f"{described}; {self.problem}" if self.problem else described


@dataclass
class IndexStatus:
    """What the writer is doing, for the note tools add while the first indexing runs."""

    writer: bool = False
    initial_done: bool = False
    library: str = ""
    done: int = 0
    total: int = 0
    error: str | None = None
    #: what the watcher cannot follow live, and reads again instead (`watcher.watch_libraries`), else None
    watch_problem: str | None = None

    def note(self) -> str | None:
        """A sentence for the agent while results may be incomplete, else None."""
        if self.initial_done or not self.writer:
            return None
        if self.total:
            return (
                f"Indexing is still running ({self.library}: {self.done} of {self.total} changed files); "
                "results may be incomplete, call again shortly."
            )
        return "Indexing is starting; results may be incomplete, call again shortly."

    def meta(self) -> dict[str, object] | None:
        if self.initial_done or not self.writer:
            return None
        return {"library": self.library, "done": self.done, "total": self.total}


def only_libraries(names: list[str]) -> str:
    return ("library " if len(names) == 1 else "libraries ") + ", ".join(names)


def format_duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


class EmbeddingEta:
    """Seconds left of an embedding run, from the pace of embedded words since the run began."""

    def __init__(self) -> None:
        self._first: tuple[float, int] | None = None
        self._last_sample = 0.0
        self.eta: float | None = None

    def reset(self) -> None:
        self._first, self.eta = None, None

    def due(self, now: float) -> bool:
        return now - self._last_sample >= ETA_SAMPLE_S

    def sample(self, now: float, words_done: int, words_total: int) -> float | None:
        self._last_sample = now
        if self._first is None or words_done < self._first[1]:
            self._first = (now, words_done)
            return self.eta
        elapsed, gained = now - self._first[0], words_done - self._first[1]
        if elapsed > 0 and gained > 0:
            self.eta = max(0.0, (words_total - words_done) / (gained / elapsed))
        return self.eta


def status_file(data_dir: Path) -> Path:
    return data_dir / STATUS_FILE_NAME


def write_activity(data_dir: Path, activity: WriterActivity) -> None:
    """Write atomically (temp file + rename), so a reader never sees half a file."""
    descriptor, temporary = tempfile.mkstemp(prefix=".writer-status.", suffix=".json", dir=data_dir)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(asdict(activity), handle)
    os.replace(temporary, status_file(data_dir))


def remove_activity(data_dir: Path) -> None:
    """Remove the file if this process wrote it."""
    current = read_activity(data_dir)
    if current is not None and current.pid != os.getpid():
        return
    try:
        status_file(data_dir).unlink()
    except FileNotFoundError:
        pass


def read_activity(data_dir: Path, holder_pid: int | None = None) -> WriterActivity | None:
    """The published activity; with `holder_pid`, only when that process wrote it."""
    try:
        data = json.loads(status_file(data_dir).read_text(encoding="utf-8"))
        activity = WriterActivity(**data)
    except (OSError, ValueError, TypeError):
        return None
    if holder_pid is not None and activity.pid != holder_pid:
        return None
    return activity


def holder_text(lock: WriterLock) -> str:
    """" (pid N)" naming the process that holds the writer lock, when it wrote its pid."""
    pid = lock.holder_pid()
    return f" (pid {pid})" if pid else ""


#: how long a refused process waits for the writer's published role before assuming one that keeps the
#: index current (six `linkly index` runs started at once: one in eight rounds, a loser read no role yet)
ACTIVITY_WAIT_S = 1.0


def held_error(lock: WriterLock, advice: str = IndexHeldError.REINDEX_ADVICE) -> IndexHeldError:
    """The error for a process that is not the writer: naming the writer, and whether it watches (from the
    activity it publishes: a writer that does not watch is idle between runs)."""
    deadline = time.monotonic() + ACTIVITY_WAIT_S
    # a writer that has just won the lock publishes its activity next
    while (activity := read_activity(lock.path.parent, lock.holder_pid())) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    if activity is not None and activity.role == KEEPS_CURRENT and activity.libraries is not None:
        return IndexHeldError(
            f"another linkly process{holder_text(lock)} (`linkly watch --library`) keeps only "
            f"{only_libraries(activity.libraries)} current and watches no other; stop it to index or watch the "
            "others (`linkly serve` or `linkly watch` without --library keeps every library current)"
        )
    if activity is None:
        role = KEEPS_CURRENT
    elif activity.role == KEEPS_CURRENT and activity.activity == IDLE:  # published before roles were
        role = SERVES_UNWATCHED
    else:
        role = activity.role
    return IndexHeldError.naming(holder_text(lock), advice, role)
