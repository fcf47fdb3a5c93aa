"""Disk and folder failures: a read-only or full index folder, library folders that vanish or cannot be
read, and recovery once the problem is fixed. linkly never writes inside a library, in watch mode either."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.integrity import check_integrity, keyword_chunks

from .conftest import EMBEDDING_OFF, cli_env, linkly, permission_bound_prefix, write, write_config

FILLING_FILES = ["papers/debian/maint-guide.en.pdf", "books/R/R-intro.pdf", "books/debian/debian-reference.en.pdf"]


def tree_state(root: Path) -> dict[str, tuple[int, str]]:
    """relative path -> (size, content hash) of every file under root, (0, "folder") for folders."""
    state: dict[str, tuple[int, str]] = {}
    for path in sorted([root, *root.rglob("*")]):
        if path.is_dir():
            state[path.relative_to(root).as_posix()] = (0, "folder")
        else:
            digest = hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
            state[path.relative_to(root).as_posix()] = (path.stat().st_size, digest)
    return state


def one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr and all(fragment in lines[0] for fragment in fragments), lines[0]


def index_content(data_dir: Path) -> tuple[list[tuple[str, str, int]], dict[str, list[tuple[int, int, int]]]]:
    engine = Engine(Config(data_dir=data_dir, raw=EMBEDDING_OFF))
    try:
        assert check_integrity(engine.catalog, engine.keyword).consistent
        documents = [(r.path, r.content_hash, r.total_lines) for r in engine.catalog.all_documents()]
        return documents, keyword_chunks(engine.keyword)
    finally:
        engine.close()


class Watching:
    """`linkly watch` (without root's permission override) whose output lines are collected as they come."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [*permission_bound_prefix(), sys.executable, "-m", "linkly_ls.cli", "watch"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()

    def wait_for(self, fragment: str, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(fragment in line for line in list(self.lines)):
                return True
            time.sleep(0.05)
        return False

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(10)


def test_a_read_only_index_folder_is_a_clear_error_and_stays_as_it_was(tmp_path: Path) -> None:
    library = tmp_path / "notes"
    write(library / "a.md", "# Alpha\n\nreadonly words\n")
    env = cli_env(write_config(tmp_path / "config.toml", {"notes": library}), tmp_path / "data")
    assert linkly(env, "index").returncode == 0
    before = tree_state(tmp_path / "data")
    paths = [tmp_path / "data", *(tmp_path / "data").rglob("*")]
    for path in paths:
        path.chmod(path.stat().st_mode & ~0o222)
    try:
        prefix = permission_bound_prefix()
        one_line_error(linkly(env, "index", prefix=prefix), "cannot open the index in", "the folder is read-only")
        one_line_error(linkly(env, "search", "readonly", prefix=prefix), "cannot open the index in", "the folder is read-only")
    finally:
        for path in paths:
            path.chmod(path.stat().st_mode | 0o200)
    assert tree_state(tmp_path / "data") == before
    found = linkly(env, "search", "readonly", "--json")
    assert found.returncode == 0 and str(library / "a.md") in found.stdout


@pytest.fixture(params=["tmpfs", "file_size_limit"])
def small_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Path, list[str]]]:
    """(kind, data_dir, command prefix): a 1 MB tmpfs (needs root), or RLIMIT_FSIZE of 300 KB per file."""
    data_dir = tmp_path / "small" / "data"
    data_dir.parent.mkdir()
    if request.param == "file_size_limit":
        wrapper = (
            "import os, resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, 300_000)); os.execv(sys.argv[1], sys.argv[1:])"
        )
        yield request.param, data_dir, [sys.executable, "-c", wrapper]
        return
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(data_dir.parent)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        yield request.param, data_dir, []
    finally:
        subprocess.run(["umount", "-l", str(data_dir.parent)], check=False)


def test_an_index_folder_that_is_a_file_is_said_to_be_one(tmp_path: Path) -> None:
    """`LINKLY_DATA_DIR` pointing at a file said `[Errno 17] File exists`."""
    library = tmp_path / "notes"
    write(library / "a.md", "# Alpha\n\nwords\n")
    (tmp_path / "afile").write_text("not an index\n", encoding="utf-8")
    env = cli_env(write_config(tmp_path / "config.toml", {"notes": library}), tmp_path / "afile")
    one_line_error(linkly(env, "search", "words"), "cannot open the index in", "it is a file, not a folder")
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "not an index\n"


def test_a_full_disk_is_a_clear_error_and_the_next_run_catches_up(tmp_path: Path, small_disk, corpus: Path) -> None:
    kind, data_dir, prefix = small_disk
    library = tmp_path / "library"
    library.mkdir()
    for relative in FILLING_FILES:
        shutil.copy2(corpus / relative, library / Path(relative).name)
    for source in sorted((corpus / "notes/learning-rust").glob("*.md")):
        shutil.copy2(source, library / source.name)
    config = write_config(tmp_path / "config.toml", {"library": library})
    full = linkly(cli_env(config, data_dir), "index", prefix=prefix)
    one_line_error(full, f"cannot write the index in {data_dir}")
    assert linkly(cli_env(config, data_dir), "search", "ownership", prefix=prefix).returncode == 0
    if kind == "tmpfs":
        subprocess.run(["mount", "-o", "remount,size=64m", str(data_dir.parent)], check=True)
    fixed = linkly(cli_env(config, data_dir), "index")
    assert fixed.returncode == 0, fixed.stderr
    assert linkly(cli_env(config, tmp_path / "clean"), "index").returncode == 0
    assert index_content(data_dir) == index_content(tmp_path / "clean")


def test_a_vanished_or_emptied_library_root_keeps_its_documents_until_it_is_back(tmp_path: Path, make_engine) -> None:
    library = tmp_path / "usb"
    for name in ("one", "two", "three"):
        write(library / "notes" / f"{name}.md", f"# {name.title()}\n\nmounted words {name}\n")
    engine = make_engine({"usb": library})
    engine.index()
    away = tmp_path / "elsewhere"
    library.rename(away)
    (gone,) = engine.index()
    assert gone.removed == 0 and engine.catalog.count() == 3
    assert gone.errors == [(str(library), "library folder is missing (unmounted, moved or deleted?); "
                                          "its 3 indexed document(s) are kept until it can be read again")]
    library.mkdir()
    (empty,) = engine.index()
    assert empty.removed == 0 and "is empty although documents were indexed from it" in empty.errors[0][1]
    library.rmdir()
    away.rename(library)
    (back,) = engine.index()
    assert (back.errors, back.unchanged, back.removed) == ([], 3, 0)
    (library / "notes" / "two.md").unlink()
    (inside,) = engine.index()
    assert (inside.errors, inside.removed) == ([], 1) and engine.catalog.count() == 2


def test_an_unreadable_folder_keeps_its_documents_and_is_reported(tmp_path: Path) -> None:
    library = tmp_path / "shared"
    write(library / "open.md", "# Open\n\nvisible words\n")
    write(library / "locked" / "secret.md", "# Secret\n\nhidden words\n")
    write(library / "locked" / "deeper" / "more.md", "# More\n\nhidden words again\n")
    env = cli_env(write_config(tmp_path / "config.toml", {"shared": library}), tmp_path / "data")
    assert linkly(env, "index").returncode == 0
    prefix = permission_bound_prefix()
    for locked in (library / "locked", library):
        locked.chmod(0o000)
        try:
            result = linkly(env, "index", prefix=prefix)
        finally:
            locked.chmod(0o755)
        assert result.returncode == 0, result.stderr
        kept = 2 if locked.name == "locked" else 3
        assert f"failed: {locked}: " in result.stdout and "cannot be read (Permission denied)" in result.stdout
        assert f"its {kept} indexed document(s) are kept" in result.stdout and "0 removed" in result.stdout
        found = linkly(env, "search", "hidden words", "--json")
        assert str(library / "locked" / "secret.md") in found.stdout
    result = linkly(env, "index")
    assert "failed:" not in result.stdout and "0 indexed, 3 unchanged, 0 failed, 0 removed" in result.stdout


def test_watch_mode_never_writes_inside_a_read_only_library(tmp_path: Path) -> None:
    library = tmp_path / "readonly"
    write(library / "sub" / "first.md", "# First\n\nstanding words\n")
    env = cli_env(write_config(tmp_path / "config.toml", {"readonly": library}), tmp_path / "data")
    folders = [library, library / "sub"]
    for folder in folders:
        folder.chmod(0o555)
    before = tree_state(library)
    watching = Watching(env)
    try:
        assert watching.wait_for("watching", 60), watching.lines
        added = library / "sub" / "second.md"
        deadline = time.monotonic() + 60  # each round starts a search process
        while True:  # written again each round: "watching" is printed a moment before the watches are set
            os.chmod(library / "sub", 0o755)
            added.write_text("# Second\n\nzeppelin words\n", encoding="utf-8")
            os.chmod(library / "sub", 0o555)
            if str(added) in linkly(env, "search", "zeppelin", "--json").stdout:
                break
            assert time.monotonic() < deadline, "the watcher did not index the new file"
            time.sleep(1.0)
    finally:
        watching.stop()
        for folder in folders:
            folder.chmod(0o755)
    after = tree_state(library)
    assert after.pop("sub/second.md") and after == before


def test_a_folder_that_becomes_unreadable_while_watched_keeps_its_documents(tmp_path: Path) -> None:
    library = tmp_path / "shared"
    write(library / "open.md", "# Open\n\nvisible words\n")
    locked = write(library / "locked" / "secret.md", "# Secret\n\nhidden words\n").parent
    env = cli_env(write_config(tmp_path / "config.toml", {"shared": library}), tmp_path / "data")
    watching = Watching(env)
    try:
        assert watching.wait_for("watching", 60)
        deadline = time.monotonic() + 60  # each round starts a search process
        while not watching.wait_for(f"failed: {locked / 'secret.md'}: cannot be read (Permission denied)", 1.0):
            locked.chmod(0o755)  # chmod again until the watcher, just starting, sees it
            locked.chmod(0o000)
            assert time.monotonic() < deadline and watching.process.poll() is None, watching.lines
        assert str(locked / "secret.md") in linkly(env, "search", "hidden words", "--json").stdout
        locked.chmod(0o755)
        write(locked / "secret.md", "# Secret\n\nhidden words, now zeppelin\n")
        deadline = time.monotonic() + 60  # each round starts a search process
        while str(locked / "secret.md") not in linkly(env, "search", "zeppelin", "--json").stdout:
            assert time.monotonic() < deadline and watching.process.poll() is None, watching.lines
            time.sleep(0.3)
    finally:
        locked.chmod(0o755)
        watching.stop()
