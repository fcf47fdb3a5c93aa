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


async def test_a_server_that_left_mcp_to_another_starts_its_own_once_that_one_is_gone(tmp_path) -> None:
    """Two editor windows on one index: after the first closed, the second showed (and copied) its dead address."""
    import asyncio
    import os
    import sys
    import time

    from pytest_lsp import ClientServerConfig

    first = await start_session(tmp_path, "visual-studio-code", client_capabilities("visual-studio-code"), mcp={"enabled": True, "port": 0})
    try:
        await first.wait_indexed()
        first_url = (await first.wait_mcp())["mcp_url"]
        environment = {**os.environ, "LINKLY_DATA_DIR": str(tmp_path / "not-this-one"), "LINKLY_CONFIG": str(tmp_path / "no-config.toml")}
        second = await ClientServerConfig(server_command=[sys.executable, "-m", "linkly_ls"], server_env=environment).start()
        second.set_configuration({"embeddingModel": "none"}, section="linkly")
        await second.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                workspace_folders=[types.WorkspaceFolder(uri=first.folders["notes"].as_uri(), name="notes")],
                initialization_options={"dataDir": str(first.data_dir), "mcp": {"enabled": True, "port": 0}},
            )
        )

        async def second_url() -> str | None:
            return (await second.protocol.send_request_async("linkly/status", {})).mcp_url

        deadline = time.monotonic() + 60
        while await second_url() != first_url and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert await second_url() == first_url, "while the first runs, the second shows its address"
    finally:
        await stop_session(first)
    try:
        deadline = time.monotonic() + 60
        while (await second_url()) in (first_url, None) and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        url = await second_url()
        assert url and url != first_url, url
        async with streamable_http_client(url) as (read, write), ClientSession(read, write) as mcp:
            await mcp.initialize()
            assert "search" in {tool.name for tool in (await mcp.list_tools()).tools}
    finally:
        await second.shutdown_session()
        await second.stop()
