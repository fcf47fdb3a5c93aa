"""Diagnostics on open files: why a document could not be indexed, and what to know about one that was.

A file with an error record (broken, encrypted, too large, ...) gets an Error
on line 0 saying why; an indexed file gets an Information diagnostic per
extraction warning (text cut at a cap, content not the format its name says)
and a Warning when it yielded no text. They are recomputed when a file is
opened or saved, when the typing in it pauses, and after every index run, and
cleared when it is closed.
Other features add their own (`server.diagnostic_sources`: broken links).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from linkly_ls.core.engine import Engine
from linkly_ls.lsp.uris import open_buffer, open_buffer_uris, path_from_uri

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import IndexReport
    from linkly_ls.lsp.server import LinklyLanguageServer

SOURCE = "linkly"
#: how long the typing in a buffer pauses before its diagnostics are computed again
TYPING_PAUSE_S = 0.4
FIRST_LINE = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def diagnostics_for(engine: Engine, uri: str) -> list[types.Diagnostic]:
    path = path_from_uri(uri)
    if path is None:
        return []
    failure = engine.catalog.error_for(str(path))
    if failure is not None:
        return [
            types.Diagnostic(
                range=FIRST_LINE,
                severity=types.DiagnosticSeverity.Error,
                source=SOURCE,
                message=f"linkly could not index this file: {failure.message}",
            )
        ]
    record = engine.catalog.by_path(str(path))
    if record is None:
        return []
    found = [
        types.Diagnostic(
            range=FIRST_LINE, severity=types.DiagnosticSeverity.Information, source=SOURCE, message=warning
        )
        for warning in record.warnings
    ]
    if record.text_missing_reason:
        found.append(
            types.Diagnostic(
                range=FIRST_LINE,
                severity=types.DiagnosticSeverity.Warning,
                source=SOURCE,
                message=f"indexed by name only, no text: {record.text_missing_reason}",
            )
        )
    return found


class DiagnosticsPublisher:
    def __init__(self, ls: LinklyLanguageServer) -> None:
        self.ls = ls
        #: uris that currently show diagnostics from this server
        self.shown: set[str] = set()
        #: uri -> the refresh waiting for the typing in that buffer to pause
        self.typing: dict[str, asyncio.Task[None]] = {}

    async def refresh(self, uris: list[str]) -> None:
        """Computes in a thread, so the buffer may change meanwhile: diagnostics of a version the
        client has left behind are dropped (the change that replaced it has its own refresh coming),
        or they would land after the newer ones at lines that no longer hold them."""
        engine = self.ls.engine
        if engine is None:
            return
        versions = {uri: self._buffer_version(uri) for uri in uris}
        found = await asyncio.to_thread(lambda: {uri: self._collect(engine, uri) for uri in uris})
        for uri, diagnostics in found.items():
            if self._buffer_version(uri) != versions[uri]:
                continue
            if diagnostics or uri in self.shown:
                self.publish(uri, diagnostics, version=versions[uri])

    async def refresh_after_typing(self, uri: str) -> None:
        await asyncio.sleep(TYPING_PAUSE_S)
        self.typing.pop(uri, None)
        if await self.ls.wait_ready() is not None:
            await self.refresh([uri])

    def _collect(self, engine: Engine, uri: str) -> list[types.Diagnostic]:
        found = diagnostics_for(engine, uri)
        for source in self.ls.diagnostic_sources:
            found.extend(source(engine, uri, self.ls))
        return found

    def _buffer_version(self, uri: str) -> int | None:
        document = open_buffer(self.ls.workspace, uri)
        return None if document is None else document.version

    def publish(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None = None) -> None:
        if diagnostics:
            self.shown.add(uri)
        else:
            self.shown.discard(uri)
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    def refresh_open_documents(self, reports: list[IndexReport]) -> None:
        uris = [uri for uri in open_buffer_uris(self.ls.workspace) if uri.startswith("file:")]
        if uris:
            self.ls.background(self.refresh(uris))


def register(server: LinklyLanguageServer) -> None:
    publisher = DiagnosticsPublisher(server)
    server.on_indexed.append(publisher.refresh_open_documents)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def on_open(ls: LinklyLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        if await ls.wait_ready() is None:
            return
        await publisher.refresh([params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def on_change(ls: LinklyLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        """While typing: the diagnostics of the buffer as it stands, once the typing pauses (its broken
        links, at their lines now)."""
        uri = params.text_document.uri
        pending = publisher.typing.get(uri)
        if pending is not None:
            pending.cancel()
        publisher.typing[uri] = ls.background(publisher.refresh_after_typing(uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def on_save(ls: LinklyLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        if await ls.wait_ready() is None:
            return
        await publisher.refresh([params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: LinklyLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        if params.text_document.uri in publisher.shown:
            publisher.publish(params.text_document.uri, [])
