"""The tools over streamable HTTP, driven with the official SDK client against `linkly serve`."""

from __future__ import annotations

import importlib.util
import json
import httpx
import pytest

from linkly_ls.core.tools import SCHEMAS
from linkly_ls.core.tools.index_library import INDEX_LIBRARY_SCHEMA

NINE_TOOLS = ["search", "outline", "grep", "read", "list_libraries", "explore", "find_paths", "links", "related"]
OWNERSHIP_TITLE = "What Is Ownership?"


async def find_ownership(session, kit) -> dict:
    payload = kit.assert_success(await session.call_tool("search", {"query": "ownership rules heap stack", "limit": 5}))
    hit = payload["results"][0]
    assert hit["title"] == OWNERSHIP_TITLE
    return hit


async def test_lists_the_nine_tools_and_index_library_with_the_core_schemas(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        assert "search → grep or outline → read" in session.initialize_result.instructions
        tools = (await session.list_tools()).tools
    assert [tool.name for tool in tools] == NINE_TOOLS + ["index_library"]
    by_name = {tool.name: tool for tool in tools}
    for name in NINE_TOOLS:
        assert by_name[name].input_schema == SCHEMAS[name]
        assert by_name[name].annotations.read_only_hint is True
        assert by_name[name].output_schema["type"] == "object"
    assert by_name["index_library"].input_schema == INDEX_LIBRARY_SCHEMA
    assert by_name["index_library"].annotations.read_only_hint is False
    assert "find_paths" in by_name["search"].description and "modified_after" in by_name["search"].description
    assert "has_outline" in by_name["outline"].description and "grep" in by_name["outline"].description
    assert "path_glob" in by_name["find_paths"].description


async def test_search_outline_grep_read_on_a_real_document(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        hit = await find_ownership(session, kit)
        assert hit["has_outline"] is True and hit["total_lines"] > 400
        assert hit["path"].endswith("notes/rust/ch04-01-what-is-ownership.md")

        outline = kit.assert_success(await session.call_tool("outline", {"doc_ids": [hit["doc_id"]]}))
        titles = json.dumps(outline["documents"][0]["nodes"])
        assert "Ownership Rules" in titles and "Variable Scope" in titles

        grep = kit.assert_success(
            await session.call_tool("grep", {"pattern": "^#+ Ownership Rules", "doc_id": hit["doc_id"], "context": 1})
        )
        assert grep["total_matches"] == 1
        line = grep["matches"][0]["line"]

        read = kit.assert_success(await session.call_tool("read", {"doc_id": hit["doc_id"], "offset": line, "limit": 3}))
        assert read["lines"][0] == {"line": line, "text": grep["matches"][0]["text"]}
        assert "Ownership Rules" in read["lines"][0]["text"]

        first = kit.assert_success(await session.call_tool("read", {"doc_id": hit["doc_id"], "limit": 1}))
        assert OWNERSHIP_TITLE in first["lines"][0]["text"]
        assert first["next_offset"] == 2


@pytest.mark.parametrize(
    ("doc_type", "query", "title"),
    [
        ("pdf", "Foo Bar letters", "Foo"),
        ("docx", "dpkg packages", "5.4. Manipulating Packages with dpkg"),
        ("html", "pathlib filesystem paths", "pathlib — Object-oriented filesystem paths"),
    ],
)
async def test_pdf_docx_and_html_documents(served, kit, doc_type: str, query: str, title: str) -> None:
    if importlib.util.find_spec(f"linkly_ls.core.extract.{doc_type}") is None:
        pytest.skip(f"no {doc_type} extractor in this checkout yet")
    async with kit.http_session(served.url) as session:
        found = kit.assert_success(await session.call_tool("search", {"query": query, "doc_types": [doc_type]}))
        (hit,) = found["results"]
        assert (hit["doc_type"], hit["title"]) == (doc_type, title)
        outline = kit.assert_success(await session.call_tool("outline", {"doc_ids": [hit["doc_id"]]}))
        nodes = outline["documents"][0]["nodes"]
        assert hit["has_outline"] and nodes
        first = nodes[0]
        read = kit.assert_success(
            await session.call_tool("read", {"doc_id": hit["doc_id"], "offset": first["start_line"], "limit": 40})
        )
        assert read["lines"][0]["line"] == first["start_line"]
        assert any(first["title"].split()[0] in line["text"] for line in read["lines"])


async def test_markdown_and_json_text(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        markdown = await session.call_tool("search", {"query": "social contract", "limit": 3})
        kit.assert_success(markdown)
        assert "social-contract.txt" in markdown.content[0].text
        as_json = await session.call_tool("search", {"query": "social contract", "limit": 3, "output_format": "json"})
        payload = kit.assert_success(as_json)
        parsed = json.loads(as_json.content[0].text)
        assert parsed["results"][0]["path"].endswith("reference/social-contract.txt")
        assert parsed == payload


async def test_list_libraries_explore_and_find_paths(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        libraries = kit.assert_success(await session.call_tool("list_libraries", {}))
        assert [(lib["name"], lib["document_count"]) for lib in libraries["libraries"]] == [("notes", served.documents)], libraries

        explore = kit.assert_success(await session.call_tool("explore", {"library": "notes"}))
        assert explore["document_count"] == served.documents
        assert {kind["type"] for kind in explore["doc_types"]} >= {"md", "txt"}

        found = kit.assert_success(await session.call_tool("find_paths", {"patterns": ["Notion", "notion"]}))
        folder = found["directories"][0]
        assert folder["path"].endswith("/Notion-Export-c58e430f/") and folder["file_count"] == 1

        scoped = kit.assert_success(
            await session.call_tool("search", {"query": "integer floating point", "path_glob": folder["path_glob"]})
        )
        assert [hit["title"] for hit in scoped["results"]] == ["Data Types"]


async def test_index_library_reports_counts(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        payload = kit.assert_success(await session.call_tool("index_library", {"library": "notes"}))
        (report,) = payload["libraries"]
        assert report["library"] == "notes"
        assert report["indexed"] + report["unchanged"] + report["failed"] == served.documents
        assert report["document_count"] == served.documents
        kit.assert_tool_error(await session.call_tool("index_library", {"library": "nope"}), "`library` 'nope' does not exist")


@pytest.mark.parametrize("doc_id", ["../../etc/passwd", "/etc/passwd", "0123456789ab"])
async def test_read_outside_the_index_is_a_tool_error(served, kit, doc_id: str) -> None:
    async with kit.http_session(served.url) as session:
        text = kit.assert_tool_error(await session.call_tool("read", {"doc_id": doc_id}), "doc_id")
    assert "root:" not in text


async def test_argument_errors_are_tool_errors_without_meta(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        kit.assert_tool_error(await session.call_tool("search", {"query": "x", "limit": 500}), "`limit`", "1 to 50")
        kit.assert_tool_error(await session.call_tool("search", {"query": "x", "colour": "red"}), "unknown argument `colour`")
        kit.assert_tool_error(await session.call_tool("grep", {"pattern": "(", "doc_id": "0123456789ab"}))
        kit.assert_tool_error(await session.call_tool("search", {"query": "x", "output_format": "yaml"}), "output_format")
        kit.assert_tool_error(await session.call_tool("delete_everything", {}), "unknown tool")
        as_json = await session.call_tool("read", {"doc_id": "/etc/passwd", "output_format": "json"})
        assert json.loads(kit.assert_tool_error(as_json))["error"].startswith("`doc_id` must be a document id")


def _initialize_body() -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_foreign_origin_and_host_are_refused(served) -> None:
    port = served.url.split(":")[2].split("/")[0]
    with httpx.Client(timeout=10) as client:
        evil = client.post(served.url, json=_initialize_body(), headers={**HEADERS, "Origin": "http://evil.example"})
        assert evil.status_code == 403
        rebound = client.post(served.url, json=_initialize_body(), headers={**HEADERS, "Host": f"evil.example:{port}"})
        assert rebound.status_code == 421
        same = client.post(served.url, json=_initialize_body(), headers={**HEADERS, "Origin": f"http://127.0.0.1:{port}"})
        assert same.status_code == 200
        for method in ("POST", "GET", "DELETE"):
            smuggled = client.request(method, served.url, headers={**HEADERS, "Host": "127.0.0.1:1@evil.example"})
            assert (smuggled.status_code, smuggled.text) == (421, "Invalid Host header")
        odd_origin = {**HEADERS, "Origin": f"http://127.0.0.1:{port}.evil.example"}
        assert client.post(served.url, json=_initialize_body(), headers=odd_origin).status_code == 403


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600),
        (b'{"id": 1, "method": "ping"}', -32600),
        (b"7", -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "meth', -32700),
    ],
)
def test_a_body_that_is_no_json_rpc_message_is_answered_as_on_stdio(served, body: bytes, code: int) -> None:
    with httpx.Client(timeout=10) as client:
        response = client.post(served.url, content=body, headers=HEADERS)
    assert response.status_code == 400 and "mcp-session-id" not in response.headers
    answer = response.json()
    assert answer["id"] is None and answer["error"]["code"] == code
    assert "pydantic" not in answer["error"]["message"] and len(answer["error"]["message"]) < 200


def test_an_unknown_protocol_version_header_is_named_in_the_refusal(served) -> None:
    with httpx.Client(timeout=10) as client:
        opened = client.post(served.url, json=_initialize_body(), headers=HEADERS)
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"]}
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        for method in ("POST", "GET"):
            refused = client.request(
                method, served.url, json=listing, headers={**HEADERS, **session, "MCP-Protocol-Version": "1999-01-01"}
            )
            assert refused.status_code == 400
            message = refused.json()["error"]["message"]
            assert "unsupported MCP-Protocol-Version header '1999-01-01'" in message and "2025-06-18" in message
        known = client.post(served.url, json=listing, headers={**HEADERS, **session, "MCP-Protocol-Version": "2025-06-18"})
        assert known.status_code == 200


def test_oversized_request_body_is_refused(served) -> None:
    body = _initialize_body()
    body["params"]["padding"] = "x" * (1 << 20)
    with httpx.Client(timeout=10) as client:
        response = client.post(served.url, content=json.dumps(body), headers=HEADERS)
    assert response.status_code == 413


async def test_links_and_related_over_the_socket(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        hit = await find_ownership(session, kit)
        links = kit.assert_success(await session.call_tool("links", {"doc_id": hit["doc_id"], "output_format": "json"}))
        assert links["doc_id"] == hit["doc_id"] and set(links["counts"]) == {"links", "links_within", "backlinks", "broken", "backlinks_broken"}
        backlinks = {link["title"] for link in links["backlinks"]}
        assert "Defining and Instantiating Structs" in backlinks
        related = kit.assert_success(await session.call_tool("related", {"doc_id": hit["doc_id"], "limit": 3}))
        assert related["doc_id"] == hit["doc_id"] and len(related["results"]) <= 3
        assert all({"doc_id", "relevance", "reason"} <= set(result) for result in related["results"])
        refused = await session.call_tool("related", {"doc_id": "nope"})
        assert refused.is_error and "document id" in refused.content[0].text



async def test_links_lists_unlinked_mentions_when_asked(served, kit) -> None:
    async with kit.http_session(served.url) as session:
        found = kit.assert_success(await session.call_tool("search", {"query": "scalar compound data types", "limit": 5}))
        data_types = next(hit for hit in found["results"] if hit["title"] == "Data Types")
        answer = kit.assert_success(await session.call_tool("links", {"doc_id": data_types["doc_id"], "mentions": True}))
        # the Rust chapters name "data types" in their text; their links point at a file this library lacks
        by_title = {row["title"]: row for row in answer["mentions"]}
        assert {"Control Flow", "What Is Ownership?"} <= set(by_title), answer["mentions"]
        assert "**data types**" in by_title["Control Flow"]["snippet"].lower()
        assert answer["counts"]["mentions"] == len(answer["mentions"]) and answer["mention_names"][0] == "Data Types"
        plain = kit.assert_success(await session.call_tool("links", {"doc_id": data_types["doc_id"]}))
        assert "mentions" not in plain


async def test_pdf_hits_and_matches_say_their_page_and_section(served, kit) -> None:
    if importlib.util.find_spec("linkly_ls.core.extract.pdf") is None:
        pytest.skip("no pdf extractor in this checkout yet")
    async with kit.http_session(served.url) as session:
        found = kit.assert_success(await session.call_tool("search", {"query": "Huardest gefburn", "doc_types": ["pdf"]}))
        (hit,) = found["results"]
        assert hit["page"] >= 1 and hit["section"] in {"Foo", "Bar", "Baz"}
        grep = kit.assert_success(await session.call_tool("grep", {"pattern": "gefburn", "doc_id": hit["doc_id"], "context": 0}))
        assert all(match["page"] >= 2 and match["section"] in {"Foo", "Bar", "Baz"} for match in grep["matches"])
        read = kit.assert_success(await session.call_tool("read", {"doc_id": hit["doc_id"], "offset": 1, "limit": 80}))
        assert read["pages"] == {"first": 1, "last": 3}
        markdown = await session.call_tool("grep", {"pattern": "gefburn", "doc_id": hit["doc_id"], "context": 0})
        assert f"[p. {grep['matches'][0]['page']} · {grep['matches'][0]['section']}]" in markdown.content[0].text
