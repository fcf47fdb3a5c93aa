"""What the server does by what a client declares: `linkly:` views refreshed after their document changed
(LSP 3.18 `workspace/textDocumentContent/refresh`), a flat outline for a client without nested symbols."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import client_capabilities

from .conftest import Session, start_session, stop_session

CLIENT = "visual-studio-code"
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    capabilities = client_capabilities(CLIENT)
    capabilities.workspace.text_document_content = types.TextDocumentContentClientCapabilities()
    capabilities.text_document.document_symbol.hierarchical_document_symbol_support = False
    started = await start_session(tmp_path_factory.mktemp("views"), CLIENT, capabilities)
    await started.wait_indexed()
    yield started
    await stop_session(started)


async def test_a_served_view_is_refreshed_once_its_document_changes(session: Session) -> None:
    refreshed: asyncio.Queue[str] = asyncio.Queue()

    @session.client.feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT_REFRESH)
    def on_refresh(params: types.TextDocumentContentRefreshParams) -> None:
        refreshed.put_nowait(params.uri)

    path = session.path("ch04-01-what-is-ownership.md")
    uri = f"linkly://doc/{await session.doc_id(path.name)}"
    before = await session.client.workspace_text_document_content_async(types.TextDocumentContentParams(uri=uri))
    assert "What Is Ownership?" in before.text
    path.write_text(path.read_text(encoding="utf-8") + "\nA kestrelline paragraph added.\n", encoding="utf-8")
    assert await asyncio.wait_for(refreshed.get(), timeout=60) == uri
    after = await session.client.workspace_text_document_content_async(types.TextDocumentContentParams(uri=uri))
    assert after.text.endswith("A kestrelline paragraph added.")


async def test_a_client_without_nested_symbols_gets_a_flat_list_naming_each_parent(session: Session) -> None:
    path = session.path("ch04-01-what-is-ownership.md")
    symbols = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
    )
    assert symbols and all(isinstance(symbol, types.SymbolInformation) for symbol in symbols)
    assert symbols[0].name == "What Is Ownership?" and symbols[0].container_name is None
    child = next(symbol for symbol in symbols if symbol.name == "Ownership Rules")
    assert child.container_name == "What Is Ownership?" and child.location.uri == path.as_uri()
