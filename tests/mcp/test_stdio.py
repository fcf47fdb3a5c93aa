"""`linkly mcp` over stdio: on its own index, forwarding to a running server, and switching between them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from linkly_ls.mcp.runtime import write_runtime_file

TEN_TOOLS = [
    "search", "outline", "grep", "read", "list_libraries", "explore", "find_paths", "links", "related", "index_library"
]


@pytest.fixture(scope="module")
def stdio_home(tmp_path_factory, kit):
    return kit.make_home(tmp_path_factory.mktemp("stdio"))


async def test_stdio_serves_every_tool_on_its_own_index(stdio_home, kit) -> None:
    async with kit.stdio_session(stdio_home) as session:
        assert "search → grep or outline → read" in session.initialize_result.instructions
        assert [tool.name for tool in (await session.list_tools()).tools] == TEN_TOOLS
        await kit.wait_indexed(session, stdio_home.documents)

        found = kit.assert_success(await session.call_tool("search", {"query": "social contract free software"}))
        hit = found["results"][0]
        assert hit["path"].endswith("reference/social-contract.txt")
        outline = kit.assert_success(await session.call_tool("outline", {"doc_ids": [hit["doc_id"]]}))
        assert outline["documents"][0]["doc_id"] == hit["doc_id"]
        grep = kit.assert_success(await session.call_tool("grep", {"pattern": "Debian will remain 100% free", "doc_id": hit["doc_id"]}))
        assert grep["total_matches"] >= 1
        line = grep["matches"][0]["line"]
        read = kit.assert_success(await session.call_tool("read", {"doc_id": hit["doc_id"], "offset": line, "limit": 2}))
        assert "100% free" in read["lines"][0]["text"]

        libraries = kit.assert_success(await session.call_tool("list_libraries", {"output_format": "json"}))
        assert libraries["libraries"][0]["document_count"] == stdio_home.documents
        explore = kit.assert_success(await session.call_tool("explore", {}))
        assert explore["document_count"] == stdio_home.documents
        paths = kit.assert_success(await session.call_tool("find_paths", {"patterns": ["notion"], "limit": 3}))
        assert paths["directories"][0]["path"].endswith("Notion-Export-c58e430f/")
        reindexed = kit.assert_success(await session.call_tool("index_library", {}))
        assert reindexed["libraries"][0]["unchanged"] == stdio_home.documents

        kit.assert_tool_error(await session.call_tool("read", {"doc_id": "../../etc/passwd"}), "document id")
        kit.assert_tool_error(await session.call_tool("read", {"doc_id": "/etc/passwd"}), "document id")
        kit.assert_tool_error(await session.call_tool("outline", {"doc_ids": []}), "doc_ids")
        kit.assert_tool_error(await session.call_tool("explore", {"library": "elsewhere"}), "does not exist")


@pytest.mark.slow
async def test_stdio_forwards_to_a_running_server_and_falls_back_when_it_stops(home_factory, kit) -> None:
    home = home_factory(minimal=True)
    server = kit.ServerProcess(home, "--port", str(kit.free_port()))
    try:
        url = server.wait_listening()
        async with kit.http_session(url) as http:
            await kit.wait_indexed(http, home.documents)
        async with kit.stdio_session(home) as session:
            assert [tool.name for tool in (await session.list_tools()).tools] == TEN_TOOLS
            # The server holds the writer lock: index_library succeeds only because it runs there.
            forwarded = kit.assert_success(await session.call_tool("index_library", {"output_format": "json"}))
            assert forwarded["libraries"][0]["unchanged"] == home.documents
            hit = kit.assert_success(await session.call_tool("search", {"query": "grep pattern matching lines"}))
            assert any(result["path"].endswith("reference/man/grep.1.txt") for result in hit["results"])

            assert server.stop() == 0
            assert not home.runtime_file.exists()

            after = kit.assert_success(await session.call_tool("search", {"query": "grep pattern matching lines"}))
            assert [result["doc_id"] for result in after["results"]] == [result["doc_id"] for result in hit["results"]]
            await kit.wait_indexed(session, home.documents)
            local = kit.assert_success(await session.call_tool("index_library", {"library": "notes"}))
            assert local["libraries"][0]["document_count"] == home.documents
    finally:
        server.stop()


async def test_a_stale_runtime_file_is_ignored(home_factory, kit) -> None:
    home = home_factory(minimal=True)
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    write_runtime_file(home.data_dir, "http://127.0.0.1:9/mcp", "127.0.0.1", 9)
    recorded = json.loads(home.runtime_file.read_text())
    home.runtime_file.write_text(json.dumps({**recorded, "pid": int(child.stdout)}))
    async with kit.stdio_session(home) as session:
        await kit.wait_indexed(session, home.documents)
        found = kit.assert_success(await session.call_tool("search", {"query": "ownership"}))
        assert found["results"][0]["title"] == "What Is Ownership?"


async def test_stdio_honours_read_only_and_the_allowlist(home_factory, kit) -> None:
    home = home_factory({"read_only": True, "tools": ["search", "read", "index_library"]}, minimal=True)
    async with kit.stdio_session(home, "--no-watch") as session:
        assert [tool.name for tool in (await session.list_tools()).tools] == ["search", "read"]
        kit.assert_tool_error(await session.call_tool("index_library", {}), "unknown tool")
        kit.assert_tool_error(await session.call_tool("grep", {"pattern": "x", "doc_id": "0123456789ab"}), "unknown tool")


def test_a_line_that_is_not_json_rpc_is_answered_and_the_session_goes_on(home_factory) -> None:
    home = home_factory(minimal=True)
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    lines = ["this is not json", json.dumps({"a": 1}), json.dumps(initialize)]
    answered = subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", "mcp", "--no-watch"], input="\n".join(lines) + "\n",
        env=home.env(), cwd=str(home.root), capture_output=True, text=True, timeout=120,
    )
    replies = [json.loads(line) for line in answered.stdout.splitlines()]
    assert [(reply.get("id"), reply.get("error", {}).get("code")) for reply in replies] == [(None, -32700), (None, -32600), (1, None)]
    assert replies[2]["result"]["serverInfo"]["name"]
    assert "Traceback" not in answered.stderr


def test_a_number_json_cannot_write_back_is_checked_here_not_forwarded(home_factory, kit) -> None:
    """`"limit": 1e400` reads as infinity: forwarded to a running server it became null, and the call
    quietly read the default 200 lines where answering alone gave the limit's error."""
    home = home_factory(minimal=True)
    server = kit.ServerProcess(home, "--port", str(kit.free_port()))
    client = None
    try:
        server.wait_listening()
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
        call = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read", "arguments": {"doc_id": "0123456789ab", "limit": 1e400}}}'
        client = subprocess.Popen([sys.executable, "-m", "linkly_ls.cli", "mcp"], env=home.env(), cwd=str(home.root),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        for line in (json.dumps(initialize), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), call):
            client.stdin.write(line + "\n")
        client.stdin.flush()
        reply = next(answer for answer in map(json.loads, client.stdout) if answer.get("id") == 2)
        assert reply["result"]["isError"] and "`limit` must be an integer from 1 to 500" in reply["result"]["content"][0]["text"]
    finally:
        if client is not None:
            client.kill()
            client.wait()
        server.stop()
