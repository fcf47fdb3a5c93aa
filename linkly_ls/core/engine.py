"""The engine: the catalog, the keyword index and the indexer behind one object.

Every face (CLI, MCP server, language server) opens one Engine and calls the
tool functions with it.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.store.catalog import Catalog, LibraryRecord, StoreError
from linkly_ls.core.store.records import holding_library
from linkly_ls.core.config import Config, ConfigError, load_config, validate_library_name
from linkly_ls.core.extract import is_supported
from linkly_ls.core.embedding.settings import EmbeddingSettings
from linkly_ls.core.errors import LinklyError
from linkly_ls.core.search.keyword import IndexBusyError, KeywordIndex
from linkly_ls.core.indexing.reachability import path_identity
from linkly_ls.core.indexing.unfinished_runs import recorded_run
from linkly_ls.core.indexing.vector_sync import VectorSync
from linkly_ls.core.store.writer_lock import WriterLock

log = logging.getLogger("linkly_ls.indexing")

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import Indexer, IndexReport, ProgressCallback
    from linkly_ls.core.remote import RemoteSet


#: errors of the disk written to, not of the file read
_DISK_ERRNOS = {errno.ENOSPC, errno.EROFS, errno.EDQUOT}


class EngineError(LinklyError):
    """The index cannot be opened or written (permissions, disk, another writer)."""


class Engine:
    def __init__(self, config: Config | None = None) -> None:
        self.config = config or load_config()
        try:  # a wrong key: said before the index is opened, naming the file as the other tables' errors do
            embedding = EmbeddingSettings.from_section(self.config.section("embedding"))
        except ConfigError as error:
            raise ConfigError(f"{self.config.source}: {error}" if self.config.source else str(error)) from None
        self.data_dir = self.config.data_dir
        #: the config file as it was read (`reread_config_if_edited`), and why it cannot be read again, if so
        self._config_stamp = self.config.file_stamp()
        self.config_problem: str | None = None
        #: this process made the index folder and does not fill it: a misspelt LINKLY_DATA_DIR reads as an empty index
        self.made_data_dir = not os.path.exists(self.data_dir)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # it holds the text of every document
            self.catalog = Catalog(self.data_dir / "catalog.sqlite3")
            self.keyword = KeywordIndex(self.data_dir / "keyword")
        except Exception as error:  # OSError, StoreError and Tantivy's own errors
            if self.data_dir.is_dir() and not os.access(self.data_dir, os.W_OK):
                raise EngineError(
                    f"cannot open the index in {self.data_dir}: the folder is read-only, and even a search writes "
                    "lock files there; copy it to a writable folder (LINKLY_DATA_DIR, or data_dir in the config "
                    "file) to search it"
                ) from error
            if self.data_dir.exists() and not self.data_dir.is_dir():  # `[Errno 17] File exists` said nothing
                raise EngineError(
                    f"cannot open the index in {self.data_dir}: it is a file, not a folder; point LINKLY_DATA_DIR "
                    "(or data_dir in the config file) at a folder"
                ) from error
            raise EngineError(f"cannot open the index in {self.data_dir}: {error}") from error
        #: which folder the index was opened in: one deleted or replaced meanwhile is not this index any more
        self._data_dir_identity = path_identity(self.data_dir)
        #: the one-writer rule between processes: held by this process's IndexWriter, if it is the writer
        self.writer_lock = WriterLock(self.data_dir)
        #: chunk vectors for hybrid search; embedding runs only where `vectors.start()` is called
        self.vectors = VectorSync(
            self.catalog,
            self.data_dir,
            embedding,
            self.writer_lock,
        )
        #: how `search` ranks: "auto" (hybrid when vectors exist), or "keyword" / "vector" / "hybrid" for evaluation
        self.search_mode = "auto"
        #: one writer at a time: indexing runs, watcher batches and recovery take this lock
        self.write_lock = threading.RLock()
        #: why `recover()` could not finish an interrupted run's work (it is retried by the next writer)
        self.recovery_problem: str | None = None
        with self._writing():
            self._sync_config_libraries()
            self._rebuild_outdated_keyword_index()
            self.recover()

    @cached_property
    def indexer(self) -> Indexer:
        """Created on first use: opening the index to search it loads no extraction code."""
        from linkly_ls.core.indexing.indexer import Indexer

        self.made_data_dir = False  # an index this process fills is no misspelt folder, even while still empty
        indexer = Indexer(self.catalog, self.keyword, self.config.limits, self.data_dir)
        indexer.after_flush.append(self.vectors.on_keyword_flush)
        return indexer

    @cached_property
    def remotes(self) -> RemoteSet:
        """The configured remote machines (`[[remote]]`), read on first use."""
        from linkly_ls.core.remote import RemoteSet
        from linkly_ls.core.remote.config import load_remotes

        return RemoteSet(load_remotes(self.config))

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Turn a failed write (full disk, read-only folder, I/O error) into one clear EngineError.

        SQLite commits or rolls back each transaction whole and Tantivy only ever
        publishes complete commits, so what was written before the failure stays
        consistent, and the next run (once there is room) catches up.
        """
        try:
            yield
        except StoreError as error:
            raise EngineError(f"cannot write the index in {self.data_dir}: {error}") from error
        except OSError as error:
            raise EngineError(self._os_error_message(error)) from error

    def _os_error_message(self, error: OSError) -> str:
        """A read error from a file outside the data dir (a library's, which per-file handling
        missed) is said to be one: calling it a failed write would send the user to check the disk.
        A full or read-only disk outside it (a temporary file) is still a failed write, of that file."""
        reason = error.strerror or str(error)
        name = error.filename
        if isinstance(name, (str, bytes, Path)) and name:
            path = Path(os.fsdecode(name))
            if not path.absolute().is_relative_to(self.data_dir.absolute()):
                if error.errno in _DISK_ERRNOS:
                    return f"cannot write {path}: {reason}"
                return f"cannot read {path}: {reason}; the index in {self.data_dir} keeps what was written before"
        return f"cannot write the index in {self.data_dir}: {reason}"

    def reread_config_libraries(self) -> bool:
        """Take in the config file's libraries as it stands now (a `[[library]]` table added while this
        process runs: another command would record it first); the others (an editor's) are kept. A file
        that no longer parses changes nothing, and False says it could not be read."""
        self._config_stamp = self.config.file_stamp()
        try:
            fresh = load_config(self.config.path or self.config.source)  # None: the default file
        except ConfigError as error:
            self.config_problem = str(error)
            return False
        self.config_problem = None
        kept = [library for library in self.config.libraries if library.origin != "config"]
        kept_names = {library.name for library in kept}
        self.config.libraries = [library for library in fresh.libraries if library.name not in kept_names] + kept
        self._sync_config_libraries()
        return True

    def reread_config_if_edited(self) -> bool:
        """`reread_config_libraries` when the config file was written since it was last read (a watching
        writer asks every second: an `exclude` added while `linkly serve` ran was not applied, and the
        excluded file stayed readable, until another command ran). True when it was read again."""
        if self.config.path is None or self.config.file_stamp() == self._config_stamp:
            return False
        if not self.reread_config_libraries():
            log.warning("the config file was edited and cannot be read now (%s); its libraries stay as they were", self.config_problem)
        return True

    def _sync_config_libraries(self) -> None:
        for library in self.config.libraries:
            record = LibraryRecord(
                name=library.name,
                description=library.description,
                # by their real path: indexing refuses a file reached through a link (core/extract/source.py)
                paths=[str(real_path(path)) for path in library.paths],
                include=library.include,
                exclude=library.exclude,
                origin=library.origin,  # "config" (the file) or "editor" (a language server's settings)
                respect_gitignore=library.respect_gitignore,
            )
            if self.catalog.library(library.name) != record:  # no write when nothing changed: reading works on a full disk
                self.catalog.upsert_library(record)

    def _rebuild_outdated_keyword_index(self) -> None:
        """A keyword index written by another schema version is emptied and every document queued for it
        again (`recover` then re-adds them from the catalog's text, without reading a file).

        The catalog is marked first: a crash in between leaves work pending, never documents missing.
        """
        if not self.keyword.outdated:
            return
        lock = WriterLock(self.data_dir)
        try:
            if not lock.try_acquire():
                return  # the writer process rebuilds it when it next opens the index
            with self.write_lock:
                self.catalog.mark_all_keyword_pending()
                self.keyword.clear_for_rebuild(wait_s=0)
        except IndexBusyError:
            pass
        finally:
            lock.release()

    def recover(self) -> None:
        """Finish keyword-index work that an interrupted run left pending.

        Only when no other process is the index's writer: that process finishes
        the work in its own next flush, and a second process flushing beside it
        could commit an older version of a document after the writer's newer one.
        """
        pending, tombstones = self.catalog.pending_keyword_work()
        if not pending and not tombstones:
            return
        lock = self.writer_lock
        taken_now = not lock.held
        try:
            if not lock.try_acquire():
                return
            with self.write_lock:
                self.indexer.flush(wait_s=0)
        except IndexBusyError:
            pass  # a writer that does not take the writer lock is at work; it flushes this itself
        except (StoreError, OSError) as error:
            # a full disk or a read-only folder: reading still works; the work stays pending for a later writer
            self.recovery_problem = f"cannot finish interrupted indexing work in {self.data_dir}: {error}"
        finally:
            if taken_now:
                lock.release()

    def data_dir_lost(self) -> str | None:
        """Why this index is gone, when its folder was deleted (or replaced: deleted and made again) since it
        was opened, else None. Its open files still answer, but nothing written to them lasts, and the
        folder at that path now belongs to whoever made it."""
        if path_identity(self.data_dir) == self._data_dir_identity:
            return None
        return f"the index folder {self.data_dir} was deleted (or replaced) while this process ran"

    def libraries(self) -> list[LibraryRecord]:
        return self.catalog.libraries()

    def dropped_from_config(self) -> list[str]:
        """The libraries a config file defined that it no longer does (a `[[library]]` table deleted or
        renamed): they stay indexed and watched, as one `linkly index` added, until removed. The file is read
        again first: a process that runs for hours must not judge by the file as it was at its start."""
        if not self.reread_config_libraries():
            return []  # what the file defines cannot be told now
        defined = {library.name for library in self.config.libraries}
        return [library.name for library in self.libraries() if library.origin == "config" and library.name not in defined]

    def add_library(
        self,
        paths: list[Path],
        name: str | None = None,
        description: str = "",
        respect_gitignore: bool | None = None,
        origin: str = "cli",
    ) -> LibraryRecord:
        """Register folders (or files) as a library, or add them to an existing one.

        A folder or file that another library already holds is refused: its documents stay that
        library's, so the new one would stay empty. `respect_gitignore`: None keeps an existing
        library's setting (a new one honours ignore files).
        """
        resolved = [real_path(path) for path in paths]
        data_dir = self.data_dir.resolve()
        for given, path in zip(paths, resolved):
            if not path.exists():
                link = f" (a symbolic link to {shown_path(path)}, which is missing)" if path != given.expanduser().absolute() else ""
                raise ConfigError(f"{shown_path(given.expanduser())} does not exist{link}")
            if shown_path(path) != str(path):  # bytes that are not UTF-8: no name the index can keep
                raise ConfigError(
                    f"{shown_path(path)}: its name is not UTF-8 text, which the index keeps paths in; rename it "
                    "(e.g. `convmv -f latin1 -t utf-8 --notest`) or index the folders inside it"
                )
            if path == Path(path.anchor):
                raise ConfigError(f"{path} is the whole file system: give the folders that hold your documents")
            if path.is_relative_to(data_dir):
                raise ConfigError(f"{path} is in linkly's own data folder ({data_dir}), which holds the index, not documents")
            if not path.is_dir() and not path.is_file():
                raise ConfigError(f"{path} is neither a folder nor a file (a device or a pipe): give folders or documents")
            if path.is_file() and not is_supported(path):
                raise ConfigError(
                    f"{path}: {path.suffix or 'extension-less'} files are not read; give a folder, or documents of "
                    "the types linkly reads (Markdown, text, HTML, PDF, DOCX, EPUB, PPTX, images)"
                )
        implicit = name is None
        name = validate_library_name(name or _library_name_for(resolved[0]))
        existing = self.catalog.library(name)
        added = [str(path) for path in resolved if not any(path.is_relative_to(root) for root in existing.paths)] if existing else []
        if implicit and added:
            raise ConfigError(
                f"a library named '{name}' already holds {', '.join(existing.paths)}; to add {', '.join(added)} "
                f"to it, pass `--library {name}` (the `library` argument); to make a new library, give another name"
            )
        for path in resolved:
            holder = self.library_for_path(path)
            if holder is not None and holder.name != name:
                raise ConfigError(
                    f"{path} is already in library '{holder.name}', whose documents it holds: search them with "
                    f"`--library {holder.name}` (or a path_glob), or remove that library first"
                )
        if existing is not None and existing.origin in ("config", "editor") and (added or description):
            where = "the config file" if existing.origin == "config" else "the editor's `linkly.libraries` setting"
            raise ConfigError(
                f"library '{name}' is defined in {where}: add folders to its paths, or set its description, there"
            )
        if existing is not None:
            merged = list(dict.fromkeys(existing.paths + added))
            existing.paths = merged
            if description:
                existing.description = description
            if respect_gitignore is not None:
                existing.respect_gitignore = respect_gitignore
            self.catalog.upsert_library(existing)
            return existing
        library = LibraryRecord(
            name=name,
            description=description,
            paths=[str(path) for path in resolved],
            origin=origin,
            respect_gitignore=True if respect_gitignore is None else respect_gitignore,
        )
        self.catalog.upsert_library(library)
        return library

    def describe_library(self, name: str, description: str) -> LibraryRecord:
        """Set the description of a library added with `linkly index` (one from a config file keeps the file's)."""
        library = self.catalog.library(name)
        if library is None:
            raise ConfigError(f"unknown library: {name}")
        if library.origin in ("config", "editor"):
            where = "the config file" if library.origin == "config" else "the editor's settings"
            raise ConfigError(f"library '{name}' is defined in {where}: set its description there")
        library.description = description
        self.catalog.upsert_library(library)
        return library

    def index(self, names: list[str] | None = None, progress: ProgressCallback | None = None) -> list[IndexReport]:
        libraries = self.libraries()
        if names is not None:
            unknown = set(names) - {library.name for library in libraries}
            if unknown:
                raise ConfigError(f"unknown library: {', '.join(sorted(unknown))}")
            libraries = [library for library in libraries if library.name in names]
        reports: list[IndexReport] = []
        with self.write_lock, self._writing():
            for library in libraries:
                with recorded_run(self.data_dir, library.name):
                    reports.append(self.indexer.index_library(library, progress=progress))
            self._forget_old_text(reports)
        return reports

    def _forget_old_text(self, reports: list[IndexReport]) -> None:
        """After a run that replaced or removed documents, their old text leaves the catalog's log too."""
        if any(report.indexed or report.removed for report in reports):
            self.catalog.empty_log()

    def index_paths(self, library: LibraryRecord, paths: list[Path]) -> IndexReport:
        """Re-index just these files of a library (a watcher's batch of changes)."""
        with self.write_lock, self._writing():
            report = self.indexer.index_library(library, only_paths=paths)
            self._forget_old_text([report])
            return report

    def library_for_path(self, path: Path) -> LibraryRecord | None:
        return holding_library(self.libraries(), path)

    def close(self) -> None:
        if "remotes" in self.__dict__:
            self.remotes.close()
        self.vectors.close()
        if "indexer" in self.__dict__:
            self.indexer.close()
        self.keyword.close()
        self.catalog.close()


def real_path(path: Path) -> Path:
    """The path with its links followed, as a library keeps it; a link that loops is a ConfigError."""
    try:
        return path.expanduser().resolve()
    except (RuntimeError, OSError) as error:  # Python 3.11-3.12 raise RuntimeError on a loop, 3.13 OSError
        raise ConfigError(f"{shown_path(path.expanduser())} is a symbolic link that loops ({error})") from None


def shown_path(path: Path) -> str:
    """A path as text, the bytes of a name that is not UTF-8 written out (`bad\\xffdir`)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _library_name_for(path: Path) -> str:
    base = path.name if path.is_dir() else path.parent.name
    cleaned = re.sub(r"[^\w. -]+", "-", unicodedata.normalize("NFC", base)).strip("-._ ") or "library"
    return cleaned[:64]
