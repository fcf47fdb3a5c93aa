"""Read-only text views of indexed documents under `linkly://doc/<doc_id>`.

Served two ways: LSP 3.18 `workspace/textDocumentContent` (the whole text) and
the custom `linkly/read` request (a page of it, with the document's metadata),
for clients without 3.18. `linkly/uriForPath` maps a file (a PDF, EPUB, DOCX,
PPTX, ...) to its view. Only indexed documents are served: a URI, id or path
that the catalog does not know is refused, so these requests can never be used
to read an arbitrary file.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools.common import check_doc_id
from linkly_ls.lsp.errors import invalid_params, request_failed, tool_errors
from linkly_ls.lsp.settings import covered_by, plain
from linkly_ls.lsp.uris import UnknownDocumentUri, doc_id_from_uri, doc_uri, is_linkly_uri, location_uri, path_from_uri

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

READ = "linkly/read"
URI_FOR_PATH = "linkly/uriForPath"


def document_for_uri(engine: Engine, uri: str) -> DocumentRecord:
    """The indexed document a `linkly:` or `file:` URI names; a JSON-RPC error otherwise."""
    if is_linkly_uri(uri):
        try:
            doc_id = doc_id_from_uri(uri)
        except UnknownDocumentUri as error:
            raise invalid_params(str(error)) from None
        record = engine.catalog.get(doc_id)
        if record is None:
            raise request_failed(f"{uri} is not an indexed document")
        return record
    path = path_from_uri(uri)
    if path is None:
        raise invalid_params(f"{uri!r}: only linkly: and file: URIs name documents")
    return document_for_path(engine, path)


def document_for_path(engine: Engine, path: Path) -> DocumentRecord:
    record = engine.catalog.by_path(str(path))
    if record is not None:
        return record
    failure = engine.catalog.error_for(str(path))
    if failure is not None:
        raise request_failed(f"{path} could not be indexed: {failure.message}")
    roots = {Path(root) for library in engine.catalog.libraries() for root in library.paths}
    if covered_by(path, roots):  # a note typed and not saved yet: not "outside every library"
        # "is not an indexed document" is what a client waits on (the Neovim plugin's views fill in once indexed)
        why = "it is not saved yet" if not path.exists() else "a file is indexed a moment after it is saved"
        raise request_failed(f"{path} is not an indexed document yet: {why}; try again once it is indexed")
    raise request_failed(f"{path} is not an indexed document: it is inside no library")


def find_document(engine: Engine, params: dict[str, Any]) -> DocumentRecord:
    """A document from exactly one of `uri`, `doc_id` or `path`."""
    given = [key for key in ("uri", "doc_id", "path") if params.get(key)]
    if len(given) != 1:
        raise invalid_params("give exactly one of `uri`, `doc_id` or `path`")
    value = params[given[0]]
    if not isinstance(value, str):
        raise invalid_params(f"`{given[0]}` must be a string")
    if given[0] == "uri":
        return document_for_uri(engine, value)
    if given[0] == "path":
        return document_for_path(engine, Path(value).expanduser().resolve())
    with tool_errors():
        record = engine.catalog.get(check_doc_id(value))
    if record is None:
        raise request_failed(f"`doc_id` {value!r} is not an indexed document")
    return record


def _positive(params: dict[str, Any], name: str, default: int | None) -> int | None:
    value = params.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise invalid_params(f"`{name}` must be an integer of at least 1, got {value!r}")
    return value


def read_document(engine: Engine, params: dict[str, Any], record: DocumentRecord | None = None) -> dict[str, Any]:
    """The `linkly/read` answer: lines `offset`..`offset+limit-1` (all by default), joined with newlines;
    `record`: the document `params` name, when the caller has found it."""
    record = record or find_document(engine, params)
    offset = _positive(params, "offset", 1) or 1
    limit = _positive(params, "limit", None)
    lines = engine.catalog.lines(record.doc_id)
    if lines and offset > len(lines):
        raise invalid_params(f"`offset` {offset} is past the end; the document has lines 1 to {len(lines)}")
    selected = lines[offset - 1 : offset - 1 + limit if limit else None]
    last = offset - 1 + len(selected)
    answer: dict[str, Any] = {
        "uri": doc_uri(record.doc_id),
        "location_uri": location_uri(record.doc_id, record.doc_type, record.path),
        "doc_id": record.doc_id,
        "title": record.title,
        "path": record.path,
        "doc_type": record.doc_type,
        "library": record.library,
        "text": "\n".join(selected),
        "offset": offset,
        "line_count": len(selected),
        "total_lines": len(lines),
        "next_offset": last + 1 if last < len(lines) else None,
        "warnings": record.warnings,
    }
    if record.text_missing_reason:
        answer["text_missing_reason"] = record.text_missing_reason
    return answer


class ViewRefresher:
    """Asks the client to fetch a `linkly:` view again (`workspace/textDocumentContent/refresh`) once an
    index run has changed or removed its document: a client otherwise keeps showing the old text, whose
    lines no longer match the outline, grep or definitions. Only views this server served are asked for."""

    def __init__(self, ls: LinklyLanguageServer) -> None:
        self.ls = ls
        #: view URI -> the content hash of the document it was served from
        self.served: dict[str, str] = {}

    def served_view(self, uri: str, record: DocumentRecord) -> None:
        self.served[uri] = record.content_hash

    def after_index(self, reports: list) -> None:
        if self.served and self.ls.client_supports("workspace.text_document_content"):
            self.ls.background(self._refresh())

    async def _refresh(self) -> None:
        engine = self.ls.engine
        if engine is None:
            return

        def changed() -> list[str]:
            served = list(self.served.items())
            now = engine.catalog.content_hashes([doc_id_from_uri(uri) for uri, _ in served])
            stale = [uri for uri, content_hash in served if now.get(doc_id_from_uri(uri)) != content_hash]
            for uri in stale:
                del self.served[uri]
            return stale

        for uri in await asyncio.to_thread(changed):
            await self.ls.workspace_text_document_content_refresh_async(types.TextDocumentContentRefreshParams(uri=uri))


def _from_workspace(ls: LinklyLanguageServer, path: Path) -> Path:
    """A relative path as the editor means it: in the workspace folder that has it (else the first),
    never in the server's own working folder."""
    if path.is_absolute():
        return path.resolve()
    candidates = [(folder / path).resolve() for folder in ls.workspace_folder_paths()]
    return next((candidate for candidate in candidates if candidate.exists()), candidates[0] if candidates else path.resolve())


def register(server: LinklyLanguageServer) -> None:
    refresher = ViewRefresher(server)
    server.on_indexed.append(refresher.after_index)

    @server.feature(READ)
    async def on_read(ls: LinklyLanguageServer, params: Any) -> dict[str, Any]:
        engine = await ls.ready_engine()
        arguments = plain(params) or {}
        if not isinstance(arguments, dict):
            raise invalid_params("linkly/read takes {uri | doc_id | path, offset?, limit?}")

        def read() -> dict[str, Any]:
            record = find_document(engine, arguments)
            answer = read_document(engine, arguments, record)
            uri = arguments.get("uri")
            if isinstance(uri, str) and is_linkly_uri(uri):  # a view a client's own provider fills (VS Code's)
                refresher.served_view(uri, record)
            return answer

        return await asyncio.to_thread(read)

    @server.feature(URI_FOR_PATH)
    async def on_uri_for_path(ls: LinklyLanguageServer, params: Any) -> dict[str, Any]:
        engine = await ls.ready_engine()
        arguments = plain(params) or {}
        if not isinstance(arguments, dict) or not (arguments.get("path") or arguments.get("uri")):
            raise invalid_params("linkly/uriForPath takes {path} or {uri}")
        if arguments.get("uri"):
            record = await asyncio.to_thread(document_for_uri, engine, str(arguments["uri"]))
        else:
            path = _from_workspace(ls, Path(str(arguments["path"])).expanduser())
            record = await asyncio.to_thread(document_for_path, engine, path)
        return {
            "uri": doc_uri(record.doc_id),
            "doc_id": record.doc_id,
            "title": record.title,
            "doc_type": record.doc_type,
        }

    @server.feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT)
    async def on_text_document_content(
        ls: LinklyLanguageServer, params: types.TextDocumentContentParams
    ) -> types.TextDocumentContentResult:
        engine = await ls.ready_engine()
        if not is_linkly_uri(params.uri):
            raise invalid_params(f"{params.uri}: this server serves only linkly: URIs")

        def text() -> str:
            record = document_for_uri(engine, params.uri)
            refresher.served_view(params.uri, record)
            return "\n".join(engine.catalog.lines(record.doc_id))

        return types.TextDocumentContentResult(text=await asyncio.to_thread(text))
