"""Keep the index current: watch the libraries' folders and re-index what changed.

Changes arrive in debounced batches from watchfiles; each batch re-indexes only
the files it names (a deleted folder removes the documents under it), so a
saved file is searchable within about a second and nothing is re-indexed whole.
"""

from __future__ import annotations

import re
import threading
import time
from bisect import bisect_left
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.errors import LinklyError
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.reachability import path_identity
from linkly_ls.core.indexing.walker import BOOK_COVERS, BOOK_METADATA, IGNORE_FILES, SAVED_PAGE_SUFFIXES
from linkly_ls.core.indexing.handover import RunInterrupted

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import IndexReport

DEBOUNCE_MS = 150
#: how often a watcher with no folder to watch looks for one
ROOTS_POLL_S = 1.0
_UNDECODABLE = re.compile(r'decode path "(.*)" to string')


#: how long a root the watches cannot follow (a name that is not UTF-8 under it) is read by catching up
#: instead, before the watches try it again
UNWATCHABLE_RETRY_S = 60.0


class WatchError(LinklyError):
    """The watcher cannot go on, for a reason the user can fix."""


class UndecodableName(WatchError):
    """watchfiles met a name under a root that is not UTF-8: it cannot watch that root."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"the file watcher stopped: the name of {name} is not UTF-8, which it cannot read; rename it "
            "(indexing leaves it out, counted as 'name not UTF-8') and start watching again"
        )
        self.name = name


def paths_by_library(engine: Engine, changed: set[Path]) -> dict[str, list[Path]]:
    """Group changed paths under their library, the innermost whose folder holds them (`nesting`); a folder
    expands to its files and a vanished one to its documents (of whichever library holds them, which
    looks at them again); a changed `.gitignore` or `.ignore` stands for its folder. A path an outer
    library still holds goes to that library too: it hands the file over, or drops it if deleted."""
    grouped: dict[str, list[Path]] = {}
    indexed: dict[str, list[str]] = {}  # library -> its documents' paths, sorted: read once, not once a path
    changed = changed | _saved_page_folders(changed)

    def documents_under(library: str, prefix: str) -> list[str]:
        if library not in indexed:
            indexed[library] = sorted(engine.catalog.file_states(library))
        paths = indexed[library]
        # the paths that start with `prefix` (which ends in "/") sort from it up to the same with "/" + 1
        return paths[bisect_left(paths, prefix) : bisect_left(paths, prefix[:-1] + chr(ord("/") + 1))]

    def add(path: Path, deepest: str) -> None:
        grouped.setdefault(deepest, []).append(path)
        held = engine.catalog.by_path(str(path))
        if held is not None and held.library != deepest:
            grouped.setdefault(held.library, []).append(path)

    for path in changed:
        library = engine.library_for_path(path)
        if library is None:
            continue
        if path.name in IGNORE_FILES:  # what it leaves out changed: its whole folder is looked at again
            path = path.parent
        if path.name == BOOK_METADATA:  # a book folder made or unmade: its cover is looked at again
            for cover in BOOK_COVERS:
                if _is(path.parent / cover, Path.is_file):
                    add(path.parent / cover, library.name)
        add(path, library.name)
        if _is(path, Path.is_file):
            continue
        prefix = str(path).rstrip("/") + "/"
        for other in engine.libraries():  # those whose folders meet this one may hold documents under it
            if not any(root.startswith(prefix) or prefix.startswith(root.rstrip("/") + "/") for root in other.paths):
                continue
            documents = [Path(p) for p in documents_under(other.name, prefix)]
            if documents:
                grouped.setdefault(other.name, []).extend(documents)
        if _is(path, Path.is_dir) and not path.is_symlink():  # a linked folder is never walked
            # the path itself stays a target: a file replaced by a folder of its name leaves the index
            for found in path.rglob("*"):
                if _is(found, Path.is_file):
                    add(found, (engine.library_for_path(found) or library).name)
    return grouped


def _saved_page_folders(changed: set[Path]) -> set[Path]:
    """The files folders of the web pages among `changed` (`Article_files/` of `Article.html`): written
    before their page, their files were indexed; with the page there, they are looked at again."""
    folders = {path.parent / f"{path.stem}{suffix}" for path in changed if path.suffix.lower() in (".html", ".htm")
               for suffix in SAVED_PAGE_SUFFIXES}
    return {folder for folder in folders if _is(folder, Path.is_dir)}


def _is(path: Path, test: Callable[[Path], bool]) -> bool:
    """`path.is_file()` or `is_dir()`, False where a folder on the way cannot be read (the indexer reports it)."""
    try:
        return test(path)
    except OSError:
        return False


def apply_changes(engine: Engine, changed: set[Path], names: list[str] | None = None) -> list[IndexReport]:
    """Re-index the changed paths, library by library (only those of `names`, when given)."""
    reports: list[IndexReport] = []
    for name, paths in paths_by_library(engine, changed).items():
        library = engine.catalog.library(name) if names is None or name in names else None
        if library is not None:
            reports.append(engine.index_paths(library, sorted(set(paths))))
    return reports


def watch_libraries(
    engine: Engine,
    on_batch: Callable[[list[IndexReport]], None] | None = None,
    stop: threading.Event | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    catch_up: bool = True,
    names: list[str] | None = None,
    on_problem: Callable[[str | None], None] | None = None,
) -> None:
    """Block, applying changes as they come, until `stop` is set (or Ctrl-C).

    A change made before the watches are in place (while a first indexing run
    went on, or in the moment after it) raises no event. With `catch_up` (the
    default), the libraries are indexed once more as soon as the watches are in
    place, so such a change is picked up then instead of at the next restart.
    `names`: watch only these libraries (None: all). A library added or removed
    meanwhile (`index_library` of a library new to the config file, `remove_library`)
    changes the folders watched within a second; the new ones are caught up too.
    With no folder to watch (no library yet, or every folder gone for a while: an
    unmounted disk), it looks again every `ROOTS_POLL_S` and goes on when one is there. A root that
    became another folder or file at the same path (`_identities`) is watched again and caught up.

    A root holding a name that is not UTF-8, which watchfiles cannot read, is left out of the watches
    and caught up every UNWATCHABLE_RETRY_S instead (when the watches try it again), while the other
    roots are watched as before; `on_problem` is told why, and None once every root is watched again.
    """
    stop = stop or threading.Event()
    roots = _watched_roots(engine, names)
    unwatchable: dict[str, str] = {}  # root -> the name under it that the watches stopped at
    retry_at: float | None = None
    told: str | None = None

    def tell(problem: str | None) -> None:
        nonlocal told
        if problem != told and on_problem is not None:
            on_problem(problem)
        told = problem

    while not stop.is_set():
        if retry_at is not None and time.monotonic() >= retry_at:
            unwatchable, retry_at = {}, None  # the names may have been renamed since: try every root again
        live = [root for root in roots if root not in unwatchable]
        if not live:  # no library yet, every folder gone for now (unmounted, renamed), or none watchable
            if stop.wait(ROOTS_POLL_S):
                return
            roots, catch_up = _watched_roots(engine, names), True
            continue
        try:
            changed_roots = _watch(
                engine, live, on_batch, stop, debounce_ms, catch_up, names, retry_at,
                started=lambda: None if unwatchable else tell(None), left_out=frozenset(unwatchable),
            )
        except UndecodableName as error:
            root = next((root for root in live if error.name == root or error.name.startswith(root.rstrip("/") + "/")), None)
            if root is None:
                raise
            unwatchable[root] = error.name
            retry_at, catch_up = time.monotonic() + UNWATCHABLE_RETRY_S, True
            tell(
                "not watched, read again every minute instead: "
                + "; ".join(f"{root} (the name of {name} is not UTF-8: rename it)" for root, name in unwatchable.items())
            )
            continue
        if changed_roots is None:
            return
        roots, catch_up = changed_roots, True


def _identities(roots: list[str]) -> list[tuple[int, int] | None]:
    """Which file or folder each root is. The watches follow an inode: a root folder renamed away and made
    again (a restored backup, a `git clone` over it), or a single-file library saved by writing a new file
    over it (`sed -i`, most editors), is another one at the same path, whose changes no watch would see."""
    return [path_identity(root) for root in roots]


def _watched(engine: Engine, names: list[str] | None) -> tuple[list[str], list[tuple]]:
    """The folders to watch, and what decides which files of each library are indexed besides its
    `.gitignore` files (an edited include or exclude), from one reading of the catalog."""
    libraries = [library for library in engine.libraries() if names is None or library.name in names]
    roots = sorted({root for library in libraries for root in library.paths if _is(Path(root), Path.exists)})
    rules = sorted((library.name, library.include, library.exclude, library.respect_gitignore) for library in libraries)
    return roots, rules


def _watched_roots(engine: Engine, names: list[str] | None) -> list[str]:
    return _watched(engine, names)[0]


def _watch(
    engine: Engine,
    roots: list[str],
    on_batch: Callable[[list[IndexReport]], None] | None,
    stop: threading.Event,
    debounce_ms: int,
    catch_up: bool,
    names: list[str] | None,
    until: float | None = None,
    started: Callable[[], None] | None = None,
    left_out: frozenset[str] = frozenset(),
) -> list[str] | None:
    """Watch `roots` until `stop` (None), until the libraries' folders change, or until the monotonic time
    `until` (the folders to watch, then, `left_out` ones included); `started` is called once the watches
    are in place."""
    from watchfiles import Change, watch  # imported here: a language server answers its first requests without it

    identities = _identities(roots)
    watched_roots = set(roots)
    rules = _watched(engine, names)[1]
    try:
        for changes in watch(
            *roots,
            debounce=debounce_ms,
            step=50,
            stop_event=stop,
            rust_timeout=1000,
            yield_on_timeout=True,
            recursive=True,
            ignore_permission_denied=True,
        ):
            if started is not None:  # the first yield: the watches were set up when the generator started
                started()
                started = None
            if catch_up:
                catch_up = False
                reports = engine.index(names)
                if on_batch and reports:
                    on_batch(reports)
            if changes:
                reports = apply_changes(engine, {Path(path) for _, path in changes}, names)
                if on_batch and reports:
                    on_batch(reports)
            engine.reread_config_if_edited()  # a library added or its globs edited: caught up below
            current, current_rules = _watched(engine, names)
            watchable = [root for root in current if root not in left_out]
            if (
                watchable != roots
                # a root's own watch is gone: the file or folder it followed was deleted, renamed away or
                # saved over; the path's identity alone can miss it when the new file got the old inode back
                or any(change == Change.deleted and path in watched_roots for change, path in changes)
                or _identities(watchable) != identities
                or current_rules != rules  # an edited include or exclude: the libraries are caught up
                or (until is not None and time.monotonic() >= until)
            ):
                return current
        return None
    except RunInterrupted:  # the writer is stopping
        return None
    except Exception as error:
        # watchfiles reads every name under a root as text, and stops at one that is not UTF-8
        named = _UNDECODABLE.search(str(error))
        if named is None:
            raise
        raise UndecodableName(named.group(1)) from None
