"""Find the files of a library: supported types, include/exclude globs, .gitignore and .ignore.

What the walk leaves out is reported to `on_skipped` with a reason (`skips.py`), so that no file is
kept out of the index without a word. Hidden files and folders, version-control and tool folders
(`.git`, `node_modules`, ...) and symlinks are left out without being counted: they are never a
person's documents.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from linkly_ls.core.extract import is_supported
from linkly_ls.core.indexing.skips import (
    BAD_NAME,
    BOOK_COVER,
    EXCLUDE,
    GITIGNORE,
    NOT_INCLUDED,
    SAVED_PAGE_FILES,
    SPECIAL,
    SYMLINK,
    UNSUPPORTED,
)

#: (folder, reason, number of files) for files a walk leaves out
SkipCallback = Callable[[str, str, int], None]
#: entries looked at when counting the documents inside an ignored or excluded folder
MAX_COUNTED_ENTRIES = 50_000

IGNORE_FILES = (".gitignore", ".ignore")
ALWAYS_SKIPPED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"}
#: files never indexed: hidden ones, and the owner files Microsoft Office writes beside a document it has
#: open (`~$report.docx`, a few bytes naming who has it open: no document, and no readable DOCX)
HIDDEN_PREFIXES = (".", "~$")
#: the folder a browser saves a whole page's resources in, beside the page: `_files` (Firefox, Chrome), and
#: as localised browsers name it
SAVED_PAGE_SUFFIXES = ("_files", "-Dateien", "_fichiers", "_archivos", "_arquivos", "_bestanden", "_file")
#: a Calibre book folder holds its book's metadata in this file, and its cover picture beside it
BOOK_METADATA = "metadata.opf"
BOOK_COVERS = frozenset({"cover.jpg", "cover.jpeg", "cover.png"})


def glob_problem(pattern: str) -> str | None:
    """Why `pattern` is no glob an include or exclude list can hold (`[z-a]`), or None."""
    try:
        pathspec.GitIgnoreSpec.from_lines([pattern]).match_file("a")
    except Exception as error:  # pathspec raises re.error, ValueError or its own errors for a bad pattern
        return str(error).split(" at position")[0] or type(error).__name__  # positions are of pathspec's regex
    return None


@dataclass
class WalkRules:
    include: list[str]
    exclude: list[str]
    skip_dirs: list[Path]
    #: read `.gitignore` and `.ignore` files (a library's `respect_gitignore`)
    respect_ignore_files: bool = True

    def __post_init__(self) -> None:
        # matched whatever the case, as on macOS and Windows: `*.pdf` takes the scanner's `SCAN.PDF`
        self._include = pathspec.GitIgnoreSpec.from_lines([glob.lower() for glob in self.include]) if self.include else None
        self._exclude = pathspec.GitIgnoreSpec.from_lines([glob.lower() for glob in self.exclude]) if self.exclude else None

    def wanted(self, relative: str) -> bool:
        return self.unwanted_reason(relative) is None

    def unwanted_reason(self, relative: str) -> str | None:
        """Why the include/exclude globs keep this file out (`exclude`, `not_included`), or None."""
        relative = relative.lower()
        if self._exclude is not None and self._exclude.match_file(relative):
            return EXCLUDE
        if self._include is not None and not self._include.match_file(relative):
            return NOT_INCLUDED
        return None

    def excludes_folder(self, relative: str) -> bool:
        return self._exclude is not None and self._exclude.match_file(relative.lower() + "/")

    def ignore_spec(self, directory: Path) -> pathspec.GitIgnoreSpec | None:
        return _ignore_spec(directory) if self.respect_ignore_files else None


def walk_library(
    root: Path,
    rules: WalkRules,
    on_unreadable: Callable[[OSError], None] | None = None,
    on_skipped: SkipCallback | None = None,
) -> Iterator[Path]:
    """Yield the supported files under `root`, honouring ignore files found on the way.

    Hidden folders and files are skipped, symlinks are not followed (no loops,
    no escape from the library), and the index's own folder is never walked.
    A folder that cannot be listed is passed to `on_unreadable` (its OSError
    names it) and skipped, and so is one whose entries cannot be looked at (its
    permissions changed after it was listed): the rest of it is not walked.
    Files left out by an ignore file, the globs or their type are counted to
    `on_skipped`; an ignored folder counts the documents (supported files)
    inside it.
    """
    skipped = on_skipped or (lambda folder, reason, count: None)
    if root.is_file():
        if is_supported(root):
            yield root
        else:
            skipped(str(root.parent), UNSUPPORTED, 1)
        return
    skip = {path.resolve() for path in rules.skip_dirs}
    ignore_stack: list[tuple[str, pathspec.GitIgnoreSpec]] = []
    for directory, dirnames, filenames in os.walk(root, onerror=on_unreadable, followlinks=False):
        current = Path(directory)
        relative_dir = current.relative_to(root).as_posix()
        relative_dir = "" if relative_dir == "." else relative_dir + "/"
        try:
            while ignore_stack and not relative_dir.startswith(ignore_stack[-1][0]):
                ignore_stack.pop()
            spec = rules.ignore_spec(current)
            if spec is not None:
                ignore_stack.append((relative_dir, spec))
            dirnames[:] = _kept_folders(current, relative_dir, dirnames, ignore_stack, rules, skip, skipped)
            yield from _wanted_files(directory, relative_dir, filenames, ignore_stack, rules, skipped)
        except OSError as error:  # the folder turned unreadable between its listing and a look at an entry
            dirnames[:] = []
            if on_unreadable is not None:
                on_unreadable(OSError(error.errno, error.strerror, directory))


def _ignored(ignore_stack: list[tuple[str, pathspec.GitIgnoreSpec]], relative: str, is_dir: bool) -> bool:
    """Whether an ignore file of the folder or of one above it leaves `relative` out."""
    for base, ignore_spec in ignore_stack:
        inner = relative[len(base) :] + ("/" if is_dir else "")
        if ignore_spec.match_file(inner):
            return True
    return False


def _kept_folders(
    current: Path,
    relative_dir: str,
    dirnames: list[str],
    ignore_stack: list[tuple[str, pathspec.GitIgnoreSpec]],
    rules: WalkRules,
    skip: set[Path],
    skipped: SkipCallback,
) -> list[str]:
    """The subfolders of `current` to walk, sorted; an ignored or excluded one counts its documents to `skipped`."""
    kept = []
    for name in sorted(dirnames):
        full = current / name
        if name.startswith(".") or name in ALWAYS_SKIPPED_DIRS:
            continue
        if full.is_symlink():
            skipped(str(current), SYMLINK, 1)
            continue
        if full.resolve() in skip:
            continue
        if not utf8_name(name):
            count = count_documents(full)
            if count:
                skipped(str(current), BAD_NAME, count)
            continue
        reason = GITIGNORE if _ignored(ignore_stack, relative_dir + name, True) else None
        if reason is None and rules.excludes_folder(relative_dir + name):
            reason = EXCLUDE
        if reason is None and saved_page_files(current, name):
            reason = SAVED_PAGE_FILES
        if reason is not None:
            count = count_documents(full)
            if count:
                skipped(str(full), reason, count)
            continue
        kept.append(name)
    return kept


def _wanted_files(
    directory: str,
    relative_dir: str,
    filenames: list[str],
    ignore_stack: list[tuple[str, pathspec.GitIgnoreSpec]],
    rules: WalkRules,
    skipped: SkipCallback,
) -> Iterator[Path]:
    """The supported files of `directory` (as the walk names it) that no ignore file or glob leaves out,
    sorted; the others are counted to `skipped`."""
    current = Path(directory)
    unsupported = 0
    book_folder = BOOK_METADATA in filenames
    for name in sorted(filenames):
        if name.startswith(HIDDEN_PREFIXES):
            continue
        if book_folder and name.lower() in BOOK_COVERS:
            skipped(directory, BOOK_COVER, 1)
            continue
        full = current / name
        relative = relative_dir + name
        try:
            mode = full.lstat().st_mode
        except FileNotFoundError:  # gone since the folder was listed
            continue
        if not is_supported(full):
            unsupported += 1
            continue
        if stat.S_ISLNK(mode):
            skipped(directory, SYMLINK, 1)
            continue
        if not stat.S_ISREG(mode):
            skipped(directory, SPECIAL, 1)
            continue
        if not utf8_name(name):
            skipped(directory, BAD_NAME, 1)
            continue
        reason = GITIGNORE if _ignored(ignore_stack, relative, False) else rules.unwanted_reason(relative)
        if reason is not None:
            skipped(directory, reason, 1)
            continue
        yield full
    if unsupported:
        skipped(directory, UNSUPPORTED, unsupported)


def saved_page_files(folder: Path, name: str) -> bool:
    """Whether `folder/name` holds the pictures, scripts and frames of a web page a browser saved whole
    beside it (`Article.html` and `Article_files/`): ads, embeds and tracking frames read as documents of
    their own, a tweet embed above the article itself, every picture OCRed."""
    stem = next((name[: -len(suffix)] for suffix in SAVED_PAGE_SUFFIXES if name.endswith(suffix)), None)
    return bool(stem) and any((folder / f"{stem}{extension}").is_file() for extension in (".html", ".htm"))


def utf8_name(name: str) -> bool:
    """Whether a name the file system gave is text (bytes that are not UTF-8 come as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def count_documents(folder: Path) -> int:
    """How many files a walk of `folder` could index (supported, not hidden, no symlink), looking at
    no more than `MAX_COUNTED_ENTRIES` entries: the files an ignored or excluded folder keeps out."""
    count = seen = 0
    for directory, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = [name for name in dirnames if not name.startswith(".") and name not in ALWAYS_SKIPPED_DIRS]
        for name in filenames:
            seen += 1
            if not name.startswith(HIDDEN_PREFIXES) and is_supported(Path(name)) and not os.path.islink(os.path.join(directory, name)):
                count += 1
        seen += len(dirnames)
        if seen >= MAX_COUNTED_ENTRIES:
            break
    return count


def _ignore_spec(directory: Path) -> pathspec.GitIgnoreSpec | None:
    lines: list[str] = []
    for name in IGNORE_FILES:
        candidate = directory / name
        if candidate.is_file():
            try:
                lines.extend(candidate.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:
                continue
    return pathspec.GitIgnoreSpec.from_lines(lines) if lines else None


def is_indexable(path: Path, root: Path, rules: WalkRules) -> bool:
    """Whether `walk_library(root)` would yield `path` (for single files reported by a watcher)."""
    if root.is_file():
        return path == root and is_supported(path)
    try:
        relative = path.relative_to(root)
    except ValueError:
        return False
    parts = relative.parts
    if not parts or not is_supported(path) or not all(utf8_name(part) for part in parts):
        return False
    try:
        if not stat.S_ISREG(path.lstat().st_mode):  # a symlink, a pipe, a device
            return False
    except OSError:
        return False
    if any(part.startswith(".") or part in ALWAYS_SKIPPED_DIRS for part in parts) or parts[-1].startswith(HIDDEN_PREFIXES):
        return False
    if parts[-1].lower() in BOOK_COVERS and (path.parent / BOOK_METADATA).is_file():
        return False
    if any(path.is_relative_to(skipped) for skipped in rules.skip_dirs):
        return False
    relative_text = relative.as_posix()
    if not rules.wanted(relative_text):
        return False
    directory = root
    for depth, part in enumerate(parts):
        if depth and directory.is_symlink():  # a linked folder on the way: the walk never enters it
            return False
        if depth < len(parts) - 1 and saved_page_files(directory, part):
            return False
        spec = rules.ignore_spec(directory)
        if spec is not None:
            inner = "/".join(parts[depth:])
            if spec.match_file(inner):
                return False
            for ancestor in range(depth + 1, len(parts)):
                if spec.match_file("/".join(parts[depth:ancestor]) + "/"):
                    return False
        directory = directory / part
    return True
