"""The language server object, its settings and its lifecycle; features live in `features/`.

Start-up order matters for the "first answer within a second" promise: on
`initialized` the existing index is opened at once (requests wait only for
that), and only then does indexing of what changed start, in the background.
The embedding model, numpy, the MCP SDK, the watcher and the extractors are
imported by that background work, not before the first answer: searches made
before the model is loaded rank by keywords alone.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from cattrs import transform_error
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
    JsonRpcServerNotInitialized,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import RPCRequest

from linkly_ls import __version__
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import LinklyError
from linkly_ls.lsp.engine_setup import SHUTDOWN_WAIT_S, close_engine, open_engine
from linkly_ls.lsp.errors import request_failed
from linkly_ls.lsp.settings import ServerSettings, parse_settings
from linkly_ls.lsp.uris import LANGUAGE_SUFFIXES, SCHEME, open_buffer, path_from_uri

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import IndexReport
    from linkly_ls.lsp.features.indexing import IndexingService

logger = logging.getLogger(__name__)
CONFIGURATION_TIMEOUT_S = 2.0
BACKGROUND_GRACE_S = 1.0


#: what a message pygls could not read becomes once it has been answered: nothing more is done with it
_ANSWERED = object()


def _valid_id(request_id: Any) -> bool:
    return request_id is None or (isinstance(request_id, int | str) and not isinstance(request_id, bool))


class LinklyProtocol(LanguageServerProtocol):
    """Adds what pygls does not advertise by itself: `workspace.textDocumentContent` (LSP 3.18); and answers
    the requests pygls leaves unanswered, so a client never waits for ever: one before `initialize` with
    ServerNotInitialized (-32002), one after `shutdown` with InvalidRequest, one whose params do not fit
    the method (`position.line: -1`, params left out) with InvalidParams naming the field, a second
    `initialize` and a message that is not an object or whose id is neither a number nor a string with
    InvalidRequest; a body that is not JSON with ParseError (`LinklyLanguageServer.report_server_error`)."""

    initialize_received = False

    def structure_message(self, data: dict[str, Any]) -> Any:
        request_id = data.get("id")
        if "jsonrpc" in data and "method" in data and not _valid_id(request_id):
            # JSON-RPC ids are numbers or strings: one that is not (an object, a list) is answered with
            # InvalidRequest and a null id, not with an internal error echoing it
            self.answer_without_id(JsonRpcInvalidRequest(f"the id {request_id!r} is not a number or a string"))
            return _ANSWERED
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if "params" not in data and "method" in data:  # JSON-RPC lets a request leave out empty params
                try:
                    return super().structure_message({**data, "params": None})
                except JsonRpcException:
                    pass
            request_id, method = data.get("id"), data.get("method")
            if not isinstance(request_id, int | str) or isinstance(request_id, bool) or not isinstance(method, str):
                raise  # a notification or a response: there is no one to answer
            cause = error.__cause__
            detail = "; ".join(transform_error(cause)) if isinstance(cause, Exception) and hasattr(cause, "exceptions") else ""
            message = f"{method}: the params do not fit the method" + (f" ({detail})" if detail else "")
            self._send_response(request_id, error=JsonRpcInvalidParams(message).to_response_error())
            return _ANSWERED

    def answer_without_id(self, error: JsonRpcException) -> None:
        """The error answer to a message whose id could not be read: JSON-RPC wants `"id": null` there, which
        pygls's own responses leave out."""
        self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": error.code, "message": error.message}})

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        if isinstance(message, list | str | int | float | bool) or message is None:  # JSON, but no message
            self.answer_without_id(JsonRpcInvalidRequest("a message must be a JSON object (LSP sends no batches)"))
            return
        method = getattr(message, "method", "")
        if method == types.INITIALIZE and isinstance(message, RPCRequest) and self.initialize_received:
            self._send_response(message.id, error=JsonRpcInvalidRequest("initialize was received already").to_response_error())
            return
        if isinstance(message, RPCRequest) and method != types.INITIALIZE:
            if not self.initialize_received:
                self._send_response(message.id, error=JsonRpcServerNotInitialized(f"{method} before initialize").to_response_error())
                return
            if self._shutdown:
                self._send_response(message.id, error=JsonRpcInvalidRequest(f"{method} after shutdown").to_response_error())
                return
        if method == types.INITIALIZE:
            self.initialize_received = True
        super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        """A change to a buffer the client never opened here (Neovim names a new buffer at its first `:write`
        and goes on under that name without closing and opening it) raised KeyError, shown to the user: a
        change that gives the whole text opens the buffer; edits of a text never seen are dropped."""
        uri = params.text_document.uri
        if open_buffer(self.workspace, uri) is None:
            whole = [change for change in params.content_changes if isinstance(change, types.TextDocumentContentChangeWholeDocument)]
            if not whole:
                return
            language = {suffix: language for language, suffix in LANGUAGE_SUFFIXES.items()}.get(
                Path(path_from_uri(uri) or "").suffix.lower(), "plaintext"
            )
            self.workspace.put_text_document(
                types.TextDocumentItem(uri=uri, language_id=language, version=params.text_document.version, text=whole[-1].text)
            )
            params = types.DidChangeTextDocumentParams(text_document=params.text_document, content_changes=[])
        yield from super().lsp_text_document__did_change(params)

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        workspace = result.capabilities.workspace or types.WorkspaceOptions()
        workspace.text_document_content = types.TextDocumentContentOptions(schemes=[SCHEME])
        result.capabilities.workspace = workspace
        return result


class LinklyLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("linkly-ls", __version__, protocol_cls=LinklyProtocol)
        self.settings = ServerSettings()
        self.initialization_options: Any = None
        self.engine: Engine | None = None
        self.startup_error: str | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready = asyncio.Event()
        #: called with the server shortly after the engine is open (indexing, MCP sidecar)
        self.on_engine_ready: list[Callable[[LinklyLanguageServer], None]] = []
        #: called on the event loop with the reports of every index run or watcher batch
        self.on_indexed: list[Callable[[list[IndexReport]], None]] = []
        #: more diagnostics for an open document: (engine, uri, server) -> diagnostics, run off the event loop
        self.diagnostic_sources: list[Callable[[Engine, str, LinklyLanguageServer], list[types.Diagnostic]]] = []
        #: called on `shutdown`, in reverse order of registration
        self.on_stop: list[Callable[[], None]] = []
        self.indexing: IndexingService | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    async def wait_ready(self) -> Engine | None:
        """The engine once start-up is over, or None when it could not be opened (for notifications)."""
        await self._ready.wait()
        return self.engine

    async def ready_engine(self) -> Engine:
        """The engine, once open; requests that arrive during start-up wait here."""
        await self._ready.wait()
        if self.engine is None:
            raise request_failed(f"linkly-ls could not open its index: {self.startup_error}")
        return self.engine

    def background(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run a coroutine without awaiting it; its failure is logged, not lost."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self._tasks.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                error = finished.exception()
                logger.error("background task failed", exc_info=error)
                self.log(f"linkly-ls: {type(error).__name__}: {error}", types.MessageType.Error)

        task.add_done_callback(done)
        return task

    def call_soon(self, callback: Callable[..., Any], *args: Any) -> None:
        """Run `callback` on the event loop; safe from any thread (pygls' writer is not thread-safe)."""
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(callback, *args)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A body that is not JSON is answered with ParseError (null id, as JSON-RPC asks), not shown to the
        user as an error of the server; other errors are shown as pygls does."""
        if isinstance(error, json.JSONDecodeError | UnicodeDecodeError):
            logger.warning("a message that is not JSON: %s", error)
            self.protocol.answer_without_id(JsonRpcParseError(f"the message is not JSON: {error}"))
            return
        super().report_server_error(error, source)

    def log(self, message: str, kind: types.MessageType = types.MessageType.Info) -> None:
        self.call_soon(self.window_log_message, types.LogMessageParams(type=kind, message=message))

    def show(self, message: str, kind: types.MessageType = types.MessageType.Warning) -> None:
        self.call_soon(self.window_show_message, types.ShowMessageParams(type=kind, message=message))

    def client_supports(self, dotted: str) -> bool:
        """True when a client capability such as `window.workDoneProgress` is set."""
        value: Any = self.client_capabilities
        for name in dotted.split("."):
            value = getattr(value, name, None)
            if value is None:
                return False
        return bool(value)

    def _settings_base(self) -> Path | None:
        """What a relative path of the `libraries` setting is read from: the first workspace folder."""
        folders = self.workspace_folder_paths()
        return folders[0] if folders else None

    def workspace_folder_paths(self) -> list[Path]:
        paths = [path_from_uri(folder.uri) for folder in self.workspace.folders.values()]
        if not paths and self.workspace.root_uri:
            paths = [path_from_uri(self.workspace.root_uri)]
        return [path for path in paths if path is not None and path.is_dir()]

    async def start(self) -> None:
        configuration = await self._pull_configuration()
        self.settings = parse_settings(self.initialization_options, configuration, base=self._settings_base())
        for warning in self.settings.warnings:
            self.show(warning)
        try:
            self.engine = await asyncio.to_thread(
                open_engine, self.settings, self.workspace_folder_paths(), self.log, self.show
            )
        except LinklyError as error:  # a wrong setting or an index that cannot be opened: said, not raised
            self.startup_error = str(error)
            self.show(f"linkly-ls: {error}", types.MessageType.Error)
            return
        finally:
            self._ready.set()
        engine = self.engine
        # hybrid search once the model is loaded; the first answers rank by keywords instead of waiting for it
        engine.vectors.load_in_background(delay_s=BACKGROUND_GRACE_S)
        self.log(
            f"linkly-ls {__version__}: {engine.catalog.count()} documents in {len(engine.libraries())} "
            f"libraries; index in {engine.data_dir}"
        )
        self.background(self._start_background_work())

    async def _start_background_work(self) -> None:
        """Indexing and the MCP sidecar start a moment later: importing the MCP SDK and walking the
        libraries compete for the one interpreter lock with the editor's first requests."""
        await asyncio.sleep(BACKGROUND_GRACE_S)
        for callback in self.on_engine_ready:
            callback(self)

    async def reload_settings(self, pushed: Any = None) -> tuple[ServerSettings, ServerSettings]:
        """Read the settings again (pulled, or as pushed with didChangeConfiguration); (old, new)."""
        configuration = await self._pull_configuration() if self.client_supports("workspace.configuration") else pushed
        old, self.settings = self.settings, parse_settings(
            self.initialization_options, configuration, base=self._settings_base()
        )
        for warning in self.settings.warnings:
            self.show(warning)
        return old, self.settings

    async def _pull_configuration(self) -> Any:
        if not self.client_supports("workspace.configuration"):
            return None
        params = types.ConfigurationParams(items=[types.ConfigurationItem(section="linkly")])
        # shielded: a late answer then completes a request no one awaits, where completing a cancelled one
        # made pygls show the user an error
        asked = asyncio.ensure_future(self.workspace_configuration_async(params))
        try:
            answer = await asyncio.wait_for(asyncio.shield(asked), CONFIGURATION_TIMEOUT_S)
        except Exception as error:  # a client that fails or never answers must not stop the server
            logger.warning("workspace/configuration failed: %s", error)
            return None
        return answer[0] if answer else None

    def stop(self) -> None:
        for callback in reversed(self.on_stop):
            try:
                callback()
            except Exception:
                logger.exception("error while stopping")
        self.on_stop.clear()
        engine, self.engine = self.engine, None
        if engine is not None:
            closer = threading.Thread(target=close_engine, args=(engine,), name="linkly-close", daemon=True)
            closer.start()
            closer.join(SHUTDOWN_WAIT_S)
