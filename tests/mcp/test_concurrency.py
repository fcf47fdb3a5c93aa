"""Sixteen clients at once, each with its own session, while the library changes under the server."""

from __future__ import annotations

import time

import anyio
import pytest

CLIENTS = 16
#: a deadline for a busy machine: how soon a change is found is bench/load_mcp.py's figure, not asserted
WATCH_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def busy(server_factory):
    return server_factory(minimal=True)


async def check_stable_answers(session, kit) -> None:
    """Answers about documents nobody touches must stay exact whatever else is happening."""
    found = kit.assert_success(await session.call_tool("search", {"query": "ownership heap stack", "limit": 3}))
    hit = found["results"][0]
    assert hit["title"] == "What Is Ownership?"
    read = kit.assert_success(await session.call_tool("read", {"doc_id": hit["doc_id"], "limit": 1}))
    assert "What Is Ownership?" in read["lines"][0]["text"]
    grep = kit.assert_success(
        await session.call_tool("grep", {"pattern": "^#+ Ownership Rules", "doc_id": hit["doc_id"], "output_mode": "count"})
    )
    assert grep["total_matches"] == 1


async def search_until(session, kit, query: str, predicate) -> dict:
    deadline = time.monotonic() + WATCH_TIMEOUT_S
    while True:
        payload = kit.assert_success(await session.call_tool("search", {"query": query, "limit": 5}))
        if predicate(payload["results"]):
            return payload
        assert time.monotonic() < deadline, f"the watcher did not pick up the change for {query!r}: {payload}"
        await check_stable_answers(session, kit)
        await anyio.sleep(0.1)


async def client(number: int, busy, kit) -> None:
    library = busy.home.library
    async with kit.http_session(busy.url) as session:
        await check_stable_answers(session, kit)
        if number == 0:
            await modify_a_document(session, kit, library / "notes/rust/ch03-05-control-flow.md")
        elif number == 1:
            await delete_a_document(session, kit, library / "Notion-Export-c58e430f/rust/ch03-02-data-types.md")
        else:
            await add_a_document(session, kit, library / "incoming" / f"note-{number}.md", number)
        await check_stable_answers(session, kit)


async def add_a_document(session, kit, path, number: int) -> None:
    word = f"zephyrquartz{number}"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"# Field note {number}\n\nThe {word} sample was logged on shelf {number}.\n", encoding="utf-8")
    payload = await search_until(session, kit, word, lambda results: bool(results))
    (hit,) = payload["results"]
    assert hit["path"] == str(path) and hit["title"] == f"Field note {number}"
    read = kit.assert_success(await session.call_tool("read", {"doc_id": hit["doc_id"]}))
    assert any(word in line["text"] for line in read["lines"])


async def modify_a_document(session, kit, path) -> None:
    before = kit.assert_success(await session.call_tool("search", {"query": "loop while for control flow", "limit": 3}))
    doc_id = next(hit["doc_id"] for hit in before["results"] if hit["path"] == str(path))
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\n\nAppendix: the quixotrombone loop label.\n")
    payload = await search_until(session, kit, "quixotrombone", lambda results: bool(results))
    assert payload["results"][0]["doc_id"] == doc_id
    grep = kit.assert_success(await session.call_tool("grep", {"pattern": "quixotrombone", "doc_id": doc_id}))
    assert grep["total_matches"] == 1


async def delete_a_document(session, kit, path) -> None:
    glob = str(path.parent)
    before = kit.assert_success(await session.call_tool("search", {"query": "integer floating point", "path_glob": glob}))
    (hit,) = before["results"]
    path.unlink()
    await search_until(session, kit, "integer floating point scalar", lambda results: hit["doc_id"] not in {r["doc_id"] for r in results})
    kit.assert_tool_error(await session.call_tool("read", {"doc_id": hit["doc_id"]}), "not an indexed document")


async def test_sixteen_clients_while_files_change(busy, kit) -> None:
    async with anyio.create_task_group() as group:
        for number in range(CLIENTS):
            group.start_soon(client, number, busy, kit)
    async with kit.http_session(busy.url) as session:
        libraries = kit.assert_success(await session.call_tool("list_libraries", {}))
    expected = busy.documents + (CLIENTS - 2) - 1
    assert libraries["libraries"][0]["document_count"] == expected
