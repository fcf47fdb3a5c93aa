"""Keeping the index current while the editor runs.

- On start: index what changed since last time, in a background thread, with
  `$/progress` reports when the client supports `window.workDoneProgress`.
- A server-side watcher thread (`watch_libraries`) re-indexes the files that
  change on disk, whatever the client does.
- When the client offers dynamic registration of `workspace/didChangeWatchedFiles`,
  its file events are accepted too; each batch re-indexes only the named paths.
- `workspace/didChangeWorkspaceFolders`: an added folder becomes a library; a removed
  folder's library is forgotten (unless the config file or the settings define it);
  `workspace/didChangeConfiguration`: new or changed libraries are indexed.
- Once the first run is done, chunk embedding for hybrid search starts in
  the engine's own background thread (none when `embeddingModel` is "none").

Long work runs in daemon threads, never on the event loop, and never keeps
the process alive after `exit`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lsprotocol import types

from linkly_ls.core.store.catalog import LibraryRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract import DOC_TYPES
from linkly_ls.core.errors import IndexHeldError
from linkly_ls.core.indexing.writer import IndexWriter
from linkly_ls.core.indexing.writer_status import holder_text
from linkly_ls.lsp.background_work import ProgressReporter, run_in_daemon_thread
from linkly_ls.lsp.engine_setup import add_workspace_folders
from linkly_ls.lsp.errors import request_failed
from linkly_ls.lsp.server import LinklyLanguageServer
from linkly_ls.lsp.settings import ServerSettings, covered_by
from linkly_ls.lsp.uris import file_uri, path_from_uri

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import IndexReport
    from linkly_ls.core.tools.remove_library import RemovedLibrary

T = TypeVar("T")
CLIENT_EVENTS_PAUSE_S = 0.1
WRITER_RETRY_S = 2.0
WATCHERS_REGISTRATION_ID = "linkly-watched-files"
WATCHED_GLOB = "**/*.{" + ",".join(sorted(suffix.lstrip(".") for suffix in DOC_TYPES)) + "}"
#: an edited `.gitignore` or `.ignore` changes which documents of its folder are indexed
IGNORE_FILES_GLOB = "**/.{gitignore,ignore}"


class IndexingService:
    """Indexes and watches while this process is the index's writer (core's IndexWriter).

    Several linkly processes may share one index (two editors, `linkly serve`);
    only the holder of `<data_dir>/writer.lock` writes, the others serve what
    is indexed and take over when it exits. The MCP sidecar shares `writer`, so
    its tools add the same "indexing is still running" note.
    """

    def __init__(self, ls: LinklyLanguageServer) -> None:
        self.ls = ls
        #: set by `start()`, once the index is open
        self.writer: IndexWriter | None = None
        #: set once `writer` exists (the MCP sidecar reads it)
        self.prepared = asyncio.Event()
        self._active = 0
        self._stopped = False
        self._client_events: set[Path] = set()
        self._client_flush: asyncio.Task[None] | None = None
        self._client_watchers_registered = False
        #: the first attempt to become the writer is over (`linkly/status` says `starting` until then)
        self.claim_settled = False

    @property
    def busy(self) -> bool:
        return self._active > 0

    @property
    def is_writer(self) -> bool:
        return self.writer is not None and self.writer.held

    @property
    def indexing(self) -> bool:
        """An index run is going on, or this writer has not finished its first one."""
        return self.busy or self.first_run_going

    @property
    def first_run_going(self) -> bool:
        """The server has not yet become the writer or found another (`claim_settled`), or as the writer has
        not finished its first run: the index may still lack files the workspace holds."""
        if not self.claim_settled:
            return True
        return self.is_writer and self.writer is not None and not self.writer.status.initial_done

    def _engine(self) -> Engine:
        if self.ls.engine is None:
            raise RuntimeError("the index is not open")
        return self.ls.engine

    def check_writer(self) -> IndexWriter:
        if self.writer is None:
            raise request_failed("the index is still opening; try again in a moment")
        try:
            self.writer.check_held()
        except IndexHeldError as error:
            raise request_failed(str(error)) from None
        return self.writer

    async def _in_background(self, function: Callable[..., T], *args: Any) -> T:
        self._active += 1
        try:
            return await run_in_daemon_thread(asyncio.get_running_loop(), function, *args)
        finally:
            self._active -= 1

    async def index(self, names: list[str] | None = None, title: str = "Indexing documents") -> list[IndexReport]:
        """Index the named libraries (all by default): only what changed is extracted again."""
        writer = self.check_writer()
        engine = self._engine()
        names = names if names is not None else [library.name for library in engine.libraries()]
        progress = await ProgressReporter.begin(self.ls, title)

        def run() -> list[IndexReport]:
            reports: list[IndexReport] = []
            for position, name in enumerate(names):
                reports += writer.index([name], progress=progress.for_library(name, position, len(names)))
            return reports

        reports: list[IndexReport] = []
        try:
            reports = await self._in_background(run)
        finally:
            progress.end("; ".join(report.summary() for report in reports) or "nothing to index")
        self.after_reports(reports, always_log=True)
        return reports

    async def apply(self, paths: set[Path]) -> list[IndexReport]:
        """Re-index just these paths (changed, created or deleted files or folders)."""
        writer = self.check_writer()
        reports = await self._in_background(writer.index_paths, paths)
        self.after_reports(reports)
        return reports

    def after_reports(self, reports: list[IndexReport], always_log: bool = False) -> None:
        for report in reports:
            for path, message in report.errors:
                self.ls.log(f"linkly-ls: failed: {path}: {message}", types.MessageType.Warning)
            if always_log or report.indexed or report.removed or report.failed:
                self.ls.log(f"linkly-ls: {report.summary()}")
        for callback in self.ls.on_indexed:
            callback(reports)

    def start_watcher(self) -> None:
        """(Re)start the server-side watcher over every library's folders."""
        writer = self.check_writer()
        writer.start_watching(
            on_batch=lambda reports: self.ls.call_soon(self.after_reports, reports),
            on_error=lambda message: self.ls.log(f"linkly-ls: {message}", types.MessageType.Warning),
        )

    def stop(self) -> None:
        self._stopped = True
        if self.writer is not None:
            # the run under way (this server's or the watcher's catching up) ends at once, and the engine
            # closes after it, instead of after the file the workers are reading
            self.writer.interrupt()
            self.writer.stop_watching()
            if not self.busy:
                self.writer.stop(timeout=0)

    def client_changed(self, paths: set[Path]) -> None:
        """Collect a client's file events for a moment, then re-index them in one batch."""
        if not self.is_writer:
            return
        self._client_events |= paths
        if self._client_flush is None or self._client_flush.done():
            self._client_flush = self.ls.background(self._flush_client_events())

    async def _flush_client_events(self) -> None:
        await asyncio.sleep(CLIENT_EVENTS_PAUSE_S)
        while self._client_events:
            paths, self._client_events = self._client_events, set()
            await self.apply(paths)

    async def register_client_watchers(self) -> None:
        """Ask the client to send `workspace/didChangeWatchedFiles` for the libraries' folders."""
        if not self.ls.client_supports("workspace.did_change_watched_files.dynamic_registration"):
            return
        relative = self.ls.client_supports("workspace.did_change_watched_files.relative_pattern_support")
        watchers = []
        for library in self._engine().libraries():
            for root in library.paths:
                if not Path(root).is_dir():
                    continue
                for glob in (WATCHED_GLOB, IGNORE_FILES_GLOB):
                    pattern: Any = (
                        types.RelativePattern(base_uri=file_uri(root), pattern=glob)
                        if relative
                        else f"{Path(root).as_posix().rstrip('/')}/{glob}"
                    )
                    watchers.append(types.FileSystemWatcher(glob_pattern=pattern))
        if not watchers:
            return
        registration = types.Registration(
            id=WATCHERS_REGISTRATION_ID,
            method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            if self._client_watchers_registered:
                unregistration = types.Unregistration(id=WATCHERS_REGISTRATION_ID, method=registration.method)
                await self.ls.client_unregister_capability_async(
                    types.UnregistrationParams(unregisterations=[unregistration])
                )
            await self.ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            self._client_watchers_registered = True
        except Exception as error:  # the server watcher still keeps the index current
            self.ls.log(f"linkly-ls: the client refused file watching: {error}", types.MessageType.Warning)

    async def add_folders(self, folders: list[Path]) -> None:
        names = await asyncio.to_thread(add_workspace_folders, self._engine(), folders, self.ls.log)
        await self._index_new_libraries(names, "Indexing new workspace folders")

    async def remove_library(self, name: str) -> RemovedLibrary:
        """Forget a library (`linkly.removeLibrary`, a removed workspace folder), then watch the rest."""
        from linkly_ls.core.tools.remove_library import remove_library

        writer = self.check_writer()
        removed = await self._in_background(remove_library, self._engine(), name)
        writer.start_watching(
            on_batch=lambda reports: self.ls.call_soon(self.after_reports, reports),
            on_error=lambda message: self.ls.log(f"linkly-ls: {message}", types.MessageType.Warning),
        )
        await self.register_client_watchers()
        self.ls.log(f"linkly-ls: library {removed.library} removed ({removed.documents} documents)")
        for callback in self.ls.on_indexed:
            callback([])
        return removed

    async def remove_folders(self, folders: list[Path]) -> None:
        """Workspace folders closed: forget the libraries made for them. A folder that a library of the
        config file, the settings or `linkly index` holds keeps it."""
        engine = self._engine()
        for folder in folders:
            library = workspace_library(engine.libraries(), folder)
            if library is None:
                continue
            if not self.is_writer:
                self.ls.log(f"linkly-ls: library {library.name} stays: another linkly process keeps this index")
                continue
            await self.remove_library(library.name)

    async def apply_settings(self, old: ServerSettings, new: ServerSettings) -> None:
        """Settings changed while running: new or changed libraries are indexed at once, and a library the
        `libraries` setting no longer names leaves the index, as a closed workspace folder's does (unless
        the config file defines it too)."""
        before = {library.name: library for library in old.libraries}
        changed = [library for library in new.libraries if before.get(library.name) != library]
        engine = self._engine()
        named = {library.name for library in new.libraries}
        dropped = [name for name in before if name not in named]
        engine.config.libraries = [
            library for library in engine.config.libraries if library.origin != "editor" and library.name not in named
        ] + new.libraries
        for library in changed:
            record = LibraryRecord(
                name=library.name,
                paths=[str(path) for path in library.paths],
                description=library.description,
                include=library.include,
                exclude=library.exclude,
                origin=library.origin,
                respect_gitignore=library.respect_gitignore,
            )
            await asyncio.to_thread(engine.catalog.upsert_library, record)
        for name in dropped:
            await self._forget_dropped(name)
        if self.is_writer:
            await self._drop_superseded_workspace_libraries()
        if new.data_dir != old.data_dir or new.embedding_model != old.embedding_model:
            self.ls.show("linkly-ls: restart the language server to apply the new dataDir or embeddingModel")
        await self._index_new_libraries([library.name for library in changed], "Indexing changed libraries")

    async def _drop_superseded_workspace_libraries(self) -> None:
        """A workspace folder's library made before a library of the settings or the config file took the
        same folder (or one around it) leaves the index: it owned the files, and the other got none."""
        engine = self._engine()
        explicit = {Path(path) for library in engine.config.libraries for path in library.paths}
        for library in engine.libraries():
            if library.origin == "workspace" and covered_by(Path(library.paths[0]), explicit):
                self.ls.log(
                    f"linkly-ls: library {library.name} of workspace folder {library.paths[0]} gives way to the "
                    "library of the settings or the config file that holds its folder"
                )
                await self.remove_library(library.name)

    async def _forget_dropped(self, name: str) -> None:
        engine = self._engine()
        record = engine.catalog.library(name)
        if record is None or record.origin != "editor" or any(library.name == name for library in engine.config.libraries):
            return
        if not self.is_writer:
            self.ls.log(f"linkly-ls: library {name} stays: another linkly process keeps this index")
            return
        await self.remove_library(name)

    async def _index_new_libraries(self, names: list[str], title: str) -> None:
        if names and self.is_writer:
            self.start_watcher()
            await self.register_client_watchers()
            await self.index(names, title=title)

    async def start(self) -> None:
        """After the index is open: become the writer (now or once the current one exits), then index."""
        writer = self.writer = IndexWriter(self._engine(), on_reports=self.after_reports)
        self.prepared.set()
        announced = False
        claimed = writer.try_claim()
        self.claim_settled = True
        seen = None  # the first look refreshes: the writer may have indexed since the buffers were read
        while not claimed:
            if not announced:
                self.ls.log(
                    f"linkly-ls: another linkly process{holder_text(writer.lock)} keeps this index current; "
                    "this server reads it and takes over when that process exits"
                )
                announced = True
            await asyncio.sleep(WRITER_RETRY_S)
            if self._stopped:
                return
            stamp = self._engine().catalog.change_stamp()
            if stamp != seen:  # the writer elsewhere indexed: open buffers' warnings and text views follow
                seen = stamp
                for callback in self.ls.on_indexed:
                    callback([])
            claimed = writer.try_claim()
        await self._drop_superseded_workspace_libraries()
        self.start_watcher()
        await self.register_client_watchers()
        try:
            await self.index(title="Indexing documents")
        finally:
            writer.status.initial_done = True
            for callback in self.ls.on_indexed:  # the link warnings held back during the first run (link_diagnostics)
                callback([])
        writer.start_vectors()


def workspace_library(libraries: list[LibraryRecord], folder: Path) -> LibraryRecord | None:
    """The library made for this workspace folder (indexes before origins existed marked it only by its
    description), unless that library is the config file's or the settings' own."""
    for library in libraries:
        if library.paths != [str(folder)] or library.origin in ("config", "editor"):
            continue
        if library.origin == "workspace" or library.description == f"workspace folder {folder}":
            return library
    return None


def register(server: LinklyLanguageServer) -> None:
    service = server.indexing = IndexingService(server)

    def on_engine_ready(ls: LinklyLanguageServer) -> None:
        ls.background(service.start())

    server.on_engine_ready.append(on_engine_ready)
    server.on_stop.append(service.stop)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def on_watched_files(ls: LinklyLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        if await ls.wait_ready() is None:
            return
        paths = {path for change in params.changes if (path := path_from_uri(change.uri)) is not None}
        if paths:
            service.client_changed(paths)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def on_configuration_changed(ls: LinklyLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        if await ls.wait_ready() is None:
            return
        old, new = await ls.reload_settings(params.settings)
        await service.apply_settings(old, new)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def on_folders_changed(ls: LinklyLanguageServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        if await ls.wait_ready() is None:
            return
        removed = [path for folder in params.event.removed if (path := path_from_uri(folder.uri)) is not None]
        if removed:
            await service.remove_folders(removed)
        added = [path for folder in params.event.added if (path := path_from_uri(folder.uri)) is not None]
        if added:
            await service.add_folders(added)
