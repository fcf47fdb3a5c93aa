"""`linkly:` views stay current: after an index run changes a view's document, the server asks the client
to fetch it again (LSP 3.18 `workspace/textDocumentContent/refresh`)."""

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
