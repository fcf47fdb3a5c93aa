"""[mcp] policies on a real server: bearer token, read_only, the tool allowlist, the response cap."""

from __future__ import annotations

import json

import httpx
import pytest

TOKEN = "test-token-0123456789abcdef"
POLICY = {"token": TOKEN, "read_only": True, "tools": ["search", "read", "list_libraries", "index_library"], "max_response_chars": 4000}
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def guarded(server_factory):
    return server_factory(POLICY, minimal=True)


def test_requests_without_the_token_get_401(guarded) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(timeout=10) as client:
        missing = client.post(guarded.url, json=body, headers=headers)
        wrong = client.post(guarded.url, json=body, headers={**headers, "Authorization": f"Bearer {TOKEN[:-1]}x"})
        other_scheme = client.post(guarded.url, json=body, headers={**headers, "Authorization": f"Basic {TOKEN}"})
        get = client.get(guarded.url)
        lower_case = client.post(guarded.url, json=body, headers={**headers, "Authorization": f"bearer {TOKEN}"})
    assert lower_case.status_code != 401, "the scheme is case-insensitive (RFC 6750)"
    for response in (missing, wrong, other_scheme, get):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "Authorization: Bearer" in response.json()["error"]


async def test_read_only_and_allowlist_shape_the_tool_list(guarded, kit) -> None:
    async with kit.http_session(guarded.url, AUTH) as session:
        tools = [tool.name for tool in (await session.list_tools()).tools]
        assert tools == ["search", "read", "list_libraries"]
        hidden = await session.call_tool("index_library", {})
        assert hidden.is_error and "unknown tool 'index_library'" in hidden.content[0].text
        outside = await session.call_tool("explore", {})
        assert outside.is_error and "unknown tool 'explore'" in outside.content[0].text


async def test_long_responses_keep_whole_lines_and_say_how_to_go_on(guarded, kit) -> None:
    async with kit.http_session(guarded.url, AUTH) as session:
        found = await session.call_tool("search", {"query": "ownership heap stack", "limit": 1})
        doc_id = found.structured_content["results"][0]["doc_id"]
        long = await session.call_tool("read", {"doc_id": doc_id, "limit": 500})
        assert not long.is_error
        text = long.content[0].text
        assert len(text) <= 4000
        next_offset = long.structured_content["next_offset"]
        assert "shortened to" in text and "max_response_chars" in text and f"continue with offset={next_offset}" in text
        assert text.endswith(f"[meta] now={long.meta['now']}")
        assert long.structured_content["truncated"] is True
        assert long.structured_content["_meta"]["now"] == long.meta["now"]
        assert text.startswith("## What Is Ownership?") or "What Is Ownership?" in text[:300]

        as_json = await session.call_tool("read", {"doc_id": doc_id, "limit": 500, "output_format": "json"})
        payload = json.loads(as_json.content[0].text)
        assert payload["truncated"] is True and 1 < payload["next_offset"] < next_offset  # JSON is wordier
        assert [entry["line"] for entry in payload["lines"]] == list(range(1, payload["next_offset"]))
        assert len(as_json.content[0].text) <= 4000

        short = await session.call_tool("read", {"doc_id": doc_id, "limit": 5})
        assert "truncated" not in short.content[0].text
        assert short.structured_content["lines"][0]["line"] == 1
