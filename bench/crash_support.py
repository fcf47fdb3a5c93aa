"""The pieces of `crash_recovery.py`: a library to index, a change script, killable runs, snapshots.

Runs of `linkly` get a pseudo-terminal as stdout, so they print per-file
progress that a kill can be timed against, and their own session, so that
SIGKILL reaches the whole process group: the main process, the forkserver and
every extraction worker, as in a power cut or an OOM kill of the tree.
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.indexing.integrity import check_integrity, keyword_chunks
from linkly_ls.core.tools import call_tool
from linkly_ls.core.search.ranking import KEYWORD_CANDIDATE_CHUNKS
from linkly_ls.core.store.writer_lock import WriterLock

#: corpus files of the library (relative to the corpus); the last is broken on purpose
LIBRARY_FILES = [
    *(f"notes/learning-rust/{name}" for name in (
        "ch03-01-variables-and-mutability.md", "ch03-02-data-types.md", "ch03-03-how-functions-work.md",
        "ch03-04-comments.md", "ch03-05-control-flow.md", "ch04-00-understanding-ownership.md",
        "ch04-01-what-is-ownership.md", "ch04-02-references-and-borrowing.md", "ch04-03-slices.md",
        "ch05-00-structs.md", "ch05-01-defining-structs.md", "ch05-02-example-structs.md",
        "ch05-03-method-syntax.md", "ch06-00-enums.md", "ch06-01-defining-an-enum.md", "ch06-02-match.md",
        "ch06-03-if-let.md", "ch02-00-guessing-game-tutorial.md", "ch01-02-hello-world.md",
    )),
    *(f"web/debian-handbook/en-US/{name}" for name in (
        "sect.backup.html", "sect.firewall-packet-filtering.html", "sect.network-config.html",
        "sect.http-web-server.html", "sect.apt-get.html",
    )),
    "web/python-3.11-docs/howto/logging.html",
    "web/python-3.11-docs/library/pathlib.html",
    "documents/work/dpkg cheat sheet.docx",
    "documents/drafts/AutoGen paper draft.docx",
    "books/epub/sample-ebook.epub",
    "books/epub/live-manual.en.epub",
    "slides/rust ownership - lunch and learn.pptx",
    "papers/latex/pdflatex-outline.pdf",
    "papers/latex/multicolumn.pdf",
    "papers/autogen-multi-agent.pdf",
    "papers/standards/fhs-3.0.pdf",
    "papers/debian/maint-guide.en.pdf",
    "books/R/R-intro.pdf",
    "odd/report-truncated.docx",
]
#: files the watch scenario's change script adds
EXTRA_FILES = [
    "notes/web-dev/astro-docs/en/getting-started.mdx",
    "notes/web-dev/astro-docs/en/basics/layouts.mdx",
    "reference/man/ls.1.txt",
    "reference/man/grep.1.txt",
    "reference/debian/social-contract.txt",
]
#: queries that find fewer documents than the result limit in fewer chunks than search ranks, so every
#: matching document is returned whatever the BM25 statistics (checked against the clean references)
QUERIES = [
    "ownership borrowing", "firewall packet filtering", "logging handler", "pathlib path", "conversable agent",
    "filesystem hierarchy", "trait object", "debhelper", "lb config", "guessing game", "apache virtual host",
    "dpkg", "zeppelin airship hydrogen", "social contract",
]
SEARCH_LIMIT = 20
#: changed files get mtimes from here on, so every run of the script leaves identical files
REFERENCE_MTIME = 1_750_000_000
_PROGRESS = re.compile(rb"\] (\d+)/(\d+) ")
_CONFIG = """[embedding]
model = "none"

[limits]
ocr = false

[[library]]
name = "crash"
paths = ["{library}"]
"""


@dataclass
class Workspace:
    root: Path
    pristine: Path
    library: Path
    extras: Path
    config: Path
    file_count: int
    reference: dict[str, dict[str, Any]] = field(default_factory=dict)

    @classmethod
    def create(cls, root: Path, corpus: Path) -> Workspace:
        pristine, extras = root / "pristine", root / "extras"
        for relative in LIBRARY_FILES:
            target = pristine / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(corpus / relative, target)
        extras.mkdir()
        for relative in EXTRA_FILES:
            shutil.copy2(corpus / relative, extras / Path(relative).name)
        library = root / "library"
        config = root / "config.toml"
        config.write_text(_CONFIG.format(library=library), encoding="utf-8")
        return cls(root, pristine, library, extras, config, len(LIBRARY_FILES))

    def fresh_data_dir(self, name: str) -> Path:
        return self.root / "data" / name

    def env(self, data_dir: Path) -> dict[str, str]:
        return {**os.environ, "LINKLY_DATA_DIR": str(data_dir), "LINKLY_CONFIG": str(self.config)}

    def change_script_s(self, pace_s: float) -> float:
        return len(change_steps(self)) * pace_s

    def changes_in_background(self, pace_s: float) -> threading.Thread:
        thread = threading.Thread(target=apply_changes, args=(self, pace_s), daemon=True)
        thread.start()
        return thread


def restore_library(workspace: Workspace) -> None:
    """The library as it was first copied: same files, same mtimes."""
    shutil.rmtree(workspace.library, ignore_errors=True)
    shutil.copytree(workspace.pristine, workspace.library)


def _stamp(path: Path, step: int) -> None:
    os.utime(path, (REFERENCE_MTIME + step, REFERENCE_MTIME + step))


def _add(workspace: Workspace, names: list[str], folder: str, step: int) -> None:
    target = workspace.library / folder
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(workspace.extras / name, target / name)
        _stamp(target / name, step)


def _append(path: Path, text: str, step: int) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)
    _stamp(path, step)


def change_steps(workspace: Workspace) -> list[Callable[[int], None]]:
    """Adds, edits, renames and deletes of files and folders; each step gets its number (for mtimes)."""
    library = workspace.library
    rust = library / "notes" / "learning-rust"

    def add_a_folder(step: int) -> None:
        _add(workspace, ["getting-started.mdx", "ls.1.txt"], "added", step)

    def edit_two_notes(step: int) -> None:
        _append(rust / "ch04-01-what-is-ownership.md", "\n\nZeppelin airship paragraph.\n", step)
        _append(rust / "ch05-01-defining-structs.md", "\n\nAnother airship line.\n", step)

    def delete_two_files(step: int) -> None:
        (library / "web/debian-handbook/en-US/sect.backup.html").unlink()
        (library / "documents/work/dpkg cheat sheet.docx").unlink()

    def rename_a_note(step: int) -> None:
        (rust / "ch03-04-comments.md").rename(rust / "comments-renamed.md")

    def add_a_scratch_folder(step: int) -> None:
        _add(workspace, ["grep.1.txt", "layouts.mdx"], "scratch", step)

    def delete_the_scratch_folder(step: int) -> None:
        shutil.rmtree(library / "scratch")

    def rewrite_a_note(step: int) -> None:
        (rust / "ch06-00-enums.md").write_text("# Enums, rewritten\n\nA zeppelin note about hydrogen.\n")
        _stamp(rust / "ch06-00-enums.md", step)

    def add_and_edit_in_the_new_folder(step: int) -> None:
        _add(workspace, ["social-contract.txt"], "added", step)
        _append(library / "added" / "ls.1.txt", "\nhydrogen appendix\n", step)

    return [
        add_a_folder, edit_two_notes, delete_two_files, rename_a_note,
        add_a_scratch_folder, delete_the_scratch_folder, rewrite_a_note, add_and_edit_in_the_new_folder,
    ]


def apply_changes(workspace: Workspace, pace_s: float) -> None:
    for step, change in enumerate(change_steps(workspace)):
        change(step)
        time.sleep(pace_s)


def run_linkly(workspace: Workspace, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", *args],
        env=workspace.env(data_dir), capture_output=True, text=True, timeout=600,
    )


class Running:
    """A `linkly` process on a pseudo-terminal whose output is collected as it comes."""

    def __init__(self, process: subprocess.Popen[bytes], master_fd: int) -> None:
        self.process = process
        self._master = master_fd
        self._output = bytearray()
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self._master, 65536)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    os.close(self._master)
                    self._changed.notify_all()
                    return
                self._output += chunk
                self._changed.notify_all()

    def output(self) -> str:
        return self._output.decode("utf-8", "replace")

    def progress(self) -> int:
        found = _PROGRESS.findall(bytes(self._output))
        return int(found[-1][0]) if found else 0

    def _wait(self, predicate: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while not predicate():
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._reader.is_alive():
                    return predicate()
                self._changed.wait(min(remaining, 0.05))
        return True

    def wait_for_output(self, text: str, timeout_s: float) -> bool:
        return self._wait(lambda: text.encode() in self._output, timeout_s)

    def kill_after_progress(self, files: int, timeout_s: float) -> bool:
        """SIGKILL the group once `files` files are done; False when the run ended first."""
        self._wait(lambda: files == 0 or self.progress() >= files, timeout_s)
        return kill_group(self.process)

    def kill_after(self, delay_s: float) -> bool:
        deadline = time.monotonic() + delay_s
        while time.monotonic() < deadline and self.process.poll() is None:
            time.sleep(0.01)
        return kill_group(self.process)


def start_linkly(workspace: Workspace, data_dir: Path, *args: str) -> Running:
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "linkly_ls.cli", *args],
        env=workspace.env(data_dir), stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
        start_new_session=True,
    )
    os.close(slave)
    return Running(process, master)


def _live_members(group: int) -> list[int]:
    members: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != "Z":
            members.append(int(entry.name))
    return members


def kill_group(process: subprocess.Popen[Any]) -> bool:
    """SIGKILL the process's whole group and wait until none of it runs; False if it had already ended."""
    was_running = process.poll() is None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            break
        if process.poll() is not None and not _live_members(process.pid):
            break
        time.sleep(0.02)
    process.wait()
    return was_running


def _writer_lock_holder(data_dir: Path) -> str | None:
    """Who holds the index's writer lock (pid and command line), or None when it is free."""
    lock = WriterLock(data_dir)
    if not lock.held_elsewhere():
        return None
    pid = lock.holder_pid()
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except (OSError, TypeError):
        command = "no such process"
    return f"pid {pid} ({command})"


def snapshot(workspace: Workspace, data_dir: Path) -> dict[str, Any]:
    """Open the index as any linkly command would (recovering first) and record what it holds."""
    config = Config(data_dir=data_dir, limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "none"}})
    holder = _writer_lock_holder(data_dir)
    engine = Engine(config)
    try:
        problems = check_integrity(engine.catalog, engine.keyword).problems()
        if problems:  # say why opening did not finish the interrupted work, so a failure explains itself
            problems += [f"recovery: {engine.recovery_problem}"] if engine.recovery_problem else []
            problems += [f"the writer lock was held on opening, by {holder}"] if holder else []
        return {
            "integrity": problems,
            "documents": [
                [record.path, record.doc_id, record.content_hash, record.mtime_ns, record.total_lines, record.title]
                for record in engine.catalog.all_documents()
            ],
            "errors": [[error.path, error.message] for error in engine.catalog.errors()],
            "chunks": {doc_id: [list(chunk) for chunk in found] for doc_id, found in keyword_chunks(engine.keyword).items()},
            "search": {query: call_tool(engine, "search", {"query": query, "limit": SEARCH_LIMIT}).to_json()["results"]
                       for query in QUERIES},
            "matching_chunks": {query: len(engine.keyword.search(query, KEYWORD_CANDIDATE_CHUNKS + 1))
                                for query in QUERIES},
        }
    finally:
        engine.close()
