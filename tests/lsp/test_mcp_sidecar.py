"""The MCP sidecar: an MCP client on its URL sees the documents the editor sees."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from lsprotocol import types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from pytest_lsp import client_capabilities

from .conftest import Session, start_session, stop_session

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    tmp_root = tmp_path_factory.mktemp("mcp")
    session = await start_session(
        tmp_root, "visual-studio-code", client_capabilities("visual-studio-code"), mcp={"enabled": True, "port": 0}
    )
    await session.wait_indexed()
    await session.wait_mcp()
    yield session
    await stop_session(session)


async def test_the_sidecar_serves_the_editors_documents(session: Session) -> None:
    status = await session.status()
    url = status["mcp_url"]
    assert url and url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert any(url in message.message for message in session.client.log_messages)
    editor = await session.command("linkly.search", {"query": "ownership", "limit": 10})
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        tools = {tool.name for tool in (await mcp.list_tools()).tools}
        assert {"search", "outline", "grep", "read", "list_libraries", "explore", "find_paths"} <= tools
        found = await mcp.call_tool("search", {"query": "ownership", "limit": 10})
        assert not found.is_error
        assert [hit["doc_id"] for hit in found.structured_content["results"]] == [
            hit["doc_id"] for hit in editor["results"]
        ]
        libraries = await mcp.call_tool("list_libraries", {})
        counts = {library["name"]: library["document_count"] for library in libraries.structured_content["libraries"]}
        assert sum(counts.values()) == status["documents"]


async def test_a_document_from_mcp_reads_the_same_in_the_editor(session: Session) -> None:
    url = (await session.status())["mcp_url"]
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        hit = (await mcp.call_tool("search", {"query": "ownership", "limit": 1})).structured_content["results"][0]
        lines = (await mcp.call_tool("read", {"doc_id": hit["doc_id"], "limit": 20})).structured_content["lines"]
    view = await session.request("linkly/read", {"doc_id": hit["doc_id"], "limit": 20})
    assert view["text"].split("\n") == [line["text"] for line in lines]
    content = await session.client.workspace_text_document_content_async(
        types.TextDocumentContentParams(uri=view["uri"])
    )
    assert content.text.split("\n")[:20] == view["text"].split("\n")
