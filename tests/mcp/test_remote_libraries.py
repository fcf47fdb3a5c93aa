"""Remote libraries end to end: two real `linkly serve` on loopback, one the other's remote.

"desk" is a real server with a token over its own data folder; the local
server's config names it (token from an environment variable), names it
again with a wrong token ("badtoken"), and names two small loopback HTTP
servers that answer too late ("slow") or with garbage ("garbage"). Every
tool reaches the remote's documents through the local server's CLI and MCP;
each fault is reported per remote while local results still come back.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

TOKEN = "remote-test-token-0123456789"
SLOW_TIMEOUT_S = 1.0
#: the timeout of the remotes that do answer: their answer, not the clock of a busy machine, is tested
ANSWERING_TIMEOUT_S = 60
#: set when the test module ends: until then "slow" never answers, however long a busy machine takes
_SLOW_RELEASED = threading.Event()


class _FaultyHandler(BaseHTTPRequestHandler):
    """`slow`: answers only after the tests (past any timeout); `garbage`: answers 200 with a body that is not JSON."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.server.mode == "slow":  # type: ignore[attr-defined]
            _SLOW_RELEASED.wait()
        body = b"<html>this is not MCP</html>"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def _faulty_server(mode: str) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FaultyHandler)
    server.daemon_threads = True
    server.mode = mode  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def world(kit: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory):
    remote_home = kit.make_home(tmp_path_factory.mktemp("desk"), {"token": TOKEN}, minimal=True)
    remote = kit.ServerProcess(remote_home, "--port", str(kit.free_port()))
    remote_url = remote.wait_listening()
    slow, garbage = _faulty_server("slow"), _faulty_server("garbage")
    local_root = tmp_path_factory.mktemp("laptop")
    local_home = kit.make_home(local_root, minimal=True)
    for path in list((local_home.library).rglob("*")):  # the local library keeps only the text file
        if path.is_file() and path.name != "social-contract.txt":
            path.unlink()
    (local_home.library / "garden.md").write_text(
        "# Garden ownership\n\nThe social contract of the allotment: who owns which bed.\n", encoding="utf-8"
    )
    local_home.documents = 2
    with local_home.config_path.open("a", encoding="utf-8") as config:
        config.write(
            f'\n[[remote]]\nname = "desk"\nurl = "{remote_url}"\ntoken_env = "DESK_TOKEN"\ndescription = "Desktop"\n'
            f"timeout_s = {ANSWERING_TIMEOUT_S}\n"
            f'\n[[remote]]\nname = "badtoken"\nurl = "{remote_url}"\ntoken_env = "WRONG_TOKEN"\n'
            f"timeout_s = {ANSWERING_TIMEOUT_S}\n"
            f'\n[[remote]]\nname = "slow"\nurl = "http://127.0.0.1:{slow.server_port}/mcp"\ntoken_env = "DESK_TOKEN"\n'
            f"timeout_s = {SLOW_TIMEOUT_S}\n"
            f'\n[[remote]]\nname = "garbage"\nurl = "http://127.0.0.1:{garbage.server_port}/mcp"\n'
            f"timeout_s = {ANSWERING_TIMEOUT_S}\n"
        )
    base_env = local_home.env

    def env() -> dict[str, str]:
        return {**base_env(), "DESK_TOKEN": TOKEN, "WRONG_TOKEN": "not-the-right-token-at-all"}

    local_home.env = env  # type: ignore[method-assign]
    local = kit.ServerProcess(local_home, "--port", str(kit.free_port()))
    local_url = local.wait_listening()

    async def wait() -> None:
        async with kit.http_session(remote_url, {"Authorization": f"Bearer {TOKEN}"}) as session:
            await kit.wait_indexed(session, remote_home.documents)
        async with kit.http_session(local_url) as session:
            await kit.wait_indexed(session, local_home.documents)

    anyio.run(wait)
    world = SimpleNamespace(remote=remote, local=local, local_url=local_url, local_home=local_home, kit=kit)
    yield world
    for server in (local, remote):
        server.stop()
    _SLOW_RELEASED.set()
    slow.shutdown()
    garbage.shutdown()


def cli(world: SimpleNamespace, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", *args], env=world.local_home.env(), capture_output=True, text=True, timeout=120
    )


def cli_json(world: SimpleNamespace, *args: str) -> dict:
    result = cli(world, *args, "--json")
    assert result.returncode == 0, result.stderr
    assert TOKEN not in result.stdout + result.stderr
    return json.loads(result.stdout)


def mcp_call(world: SimpleNamespace, tool: str, arguments: dict) -> Any:
    async def call() -> Any:
        async with world.kit.http_session(world.local_url) as session:
            return await session.call_tool(tool, arguments)

    return anyio.run(call)


def _desk_hit(world: SimpleNamespace) -> dict:
    payload = cli_json(world, "search", "ownership", "--library", "cloud:///desk")
    assert payload["remotes"] == [{"name": "desk", "ok": True, "error": None}]
    hit = payload["results"][0]
    assert hit["doc_id"].startswith("desk:") and hit["server"] == "desk"
    assert hit["path"].startswith("cloud:///desk/") and hit["library"] == "cloud:///desk/notes"
    assert hit.get("section"), "a remote's hit keeps its page and section, as a local one does"
    return hit


def test_every_tool_reaches_the_remote_through_the_cli(world):
    hit = _desk_hit(world)
    doc_id = hit["doc_id"]
    read = cli_json(world, "read", doc_id, "--limit", "3")
    assert read["doc_id"] == doc_id and [line["line"] for line in read["lines"]] == [1, 2, 3]
    grep = cli_json(world, "grep", "ownership", doc_id, "-i", "--limit", "2")
    assert grep["doc_id"] == doc_id and grep["total_matches"] > 2 and len(grep["matches"]) == 2
    outline = cli_json(world, "outline", doc_id, "--expand", "1")
    assert outline["documents"][0]["doc_id"] == doc_id and outline["documents"][0]["nodes"]
    libraries = cli_json(world, "--remote", "desk", "list-libraries")
    assert [entry["name"] for entry in libraries["libraries"]] == ["cloud:///desk/notes"]
    assert libraries["libraries"][0]["document_count"] == world.remote.home.documents
    explore = cli_json(world, "explore", "--library", "cloud:///desk/notes")
    assert explore["document_count"] == world.remote.home.documents
    assert all(node["path"].startswith("cloud:///desk/") for node in explore["directories"])
    folders = cli_json(world, "find-paths", "--patterns", "notion", "--library", "cloud:///desk")
    folder = folders["directories"][0]
    assert folder["path"].startswith("cloud:///desk/") and folder["path"].endswith("Notion-Export-c58e430f/")
    scoped = cli_json(world, "search", "data types", "--library", "cloud:///desk", "--path-glob", folder["path_glob"])
    assert scoped["results"] and all("Notion-Export" in result["path"] for result in scoped["results"])
    by_glob_alone = cli_json(world, "search", "data types", "--path-glob", folder["path_glob"])  # no --remote, no library
    assert [result["doc_id"] for result in by_glob_alone["results"]] == [result["doc_id"] for result in scoped["results"]]
    unknown = cli(world, "search", "data types", "--path-glob", "cloud:///nosuch/x/")
    assert unknown.returncode != 0 and "names the remote 'nosuch', which is not configured; remotes: " in unknown.stderr + unknown.stdout
    on_remote = cli_json(world, "--remote", "desk", "read", doc_id.split(":")[1], "--limit", "1")
    assert on_remote["doc_id"] == doc_id
    markdown = cli(world, "read", doc_id, "--limit", "2")
    assert markdown.returncode == 0 and "[meta] now=" in markdown.stdout and "continue with offset=3" in markdown.stdout


def test_a_remote_document_has_the_same_limits_and_errors(world):
    doc_id = _desk_hit(world)["doc_id"]
    past = cli(world, "read", doc_id, "--offset", "99999")
    assert past.returncode == 1 and "past the end" in past.stderr and "Traceback" not in past.stderr
    regex = cli(world, "grep", "(", doc_id)
    assert regex.returncode == 2 and "not a valid regular expression" in regex.stderr
    unknown = cli(world, "read", "desk:0123456789ab")
    assert unknown.returncode == 1 and "not an indexed document" in unknown.stderr
    nobody = cli(world, "read", "nowhere:0123456789ab")
    assert nobody.returncode == 2 and "there is no remote 'nowhere'" in nobody.stderr
    writes = cli(world, "--remote", "desk", "index")
    assert writes.returncode == 2 and "this machine only" in writes.stderr


def test_every_tool_reaches_the_remote_through_mcp(world):
    kit = world.kit
    search = kit.assert_success(mcp_call(world, "search", {"query": "ownership", "library": "cloud:///desk"}))
    doc_id = search["results"][0]["doc_id"]
    assert doc_id.startswith("desk:")
    assert kit.assert_success(mcp_call(world, "read", {"doc_id": doc_id, "limit": 2}))["lines"][0]["line"] == 1
    assert kit.assert_success(mcp_call(world, "grep", {"pattern": "heap", "doc_id": doc_id}))["total_matches"] > 0
    assert kit.assert_success(mcp_call(world, "outline", {"doc_ids": [doc_id]}))["documents"][0]["doc_id"] == doc_id
    assert kit.assert_success(mcp_call(world, "explore", {"library": "cloud:///desk"}))["document_count"] > 0
    folders = kit.assert_success(mcp_call(world, "find_paths", {"patterns": ["rust"], "library": "cloud:///desk"}))
    assert folders["directories"] and folders["directories"][0]["path"].startswith("cloud:///desk/")
    libraries = kit.assert_success(mcp_call(world, "list_libraries", {}))
    assert [entry["name"] for entry in libraries["libraries"]] == ["notes"]
    assert libraries["configured_remotes"] == ["desk", "badtoken", "slow", "garbage"]
    refused = mcp_call(world, "index_library", {"library": "cloud:///desk/notes"})
    kit.assert_tool_error(refused, "remote library", "read-only")


def test_faults_are_reported_per_remote_while_local_results_come_back(world):
    started = time.monotonic()
    payload = cli_json(world, "search", "ownership social contract", "--remote", "--limit", "10")
    elapsed = time.monotonic() - started
    servers = {hit["server"] for hit in payload["results"]}
    assert {"local", "desk"} <= servers, payload["results"]
    relevances = [hit["relevance"] for hit in payload["results"]]
    assert relevances == sorted(relevances, reverse=True)
    status = {entry["name"]: entry for entry in payload["remotes"]}
    assert status["desk"]["ok"] is True
    assert not status["badtoken"]["ok"] and "refused the token (HTTP 401)" in status["badtoken"]["error"]
    assert not status["slow"]["ok"] and f"did not answer within {SLOW_TIMEOUT_S:g} s" in status["slow"]["error"]
    assert not status["garbage"]["ok"] and "not JSON" in status["garbage"]["error"]
    assert elapsed < ANSWERING_TIMEOUT_S, f"the search took {elapsed:.1f} s: it waited for the silent remote"
    libraries = cli_json(world, "list-libraries", "--remote")
    reachable = {entry["name"]: entry["reachable"] for entry in libraries["libraries"] if "reachable" in entry}
    assert reachable == {"cloud:///desk/notes": True, "cloud:///badtoken": False, "cloud:///slow": False, "cloud:///garbage": False}
    mcp = world.kit.assert_success(mcp_call(world, "search", {"query": "garden allotment", "remote": True}))
    assert any(hit["server"] == "local" for hit in mcp["results"])
    assert {entry["name"] for entry in mcp["remotes"] if not entry["ok"]} == {"badtoken", "slow", "garbage"}
    stderr = "".join(world.local.stderr)
    assert TOKEN not in stderr and "not-the-right-token" not in stderr and "Traceback" not in stderr


def test_copies_on_two_servers_show_once(world):
    payload = cli_json(world, "search", "social contract", "--remote", "--limit", "20")
    titles = [hit["title"] for hit in payload["results"] if "social" in hit["path"]]
    assert len(titles) == 1, payload["results"]  # the same file is in both libraries


def test_a_remote_stopped_mid_test_is_reported_and_local_results_still_come_back(world):
    assert world.remote.stop() == 0
    payload = cli_json(world, "search", "garden allotment", "--remote")
    status = {entry["name"]: entry for entry in payload["remotes"]}
    assert not status["desk"]["ok"] and "cannot be reached" in status["desk"]["error"]
    assert payload["results"] and {hit["server"] for hit in payload["results"]} == {"local"}
    down = cli(world, "read", "desk:0123456789ab")
    assert down.returncode == 1 and "cannot be reached" in down.stderr and "Traceback" not in down.stderr
    mcp = mcp_call(world, "read", {"doc_id": "desk:0123456789ab"})
    world.kit.assert_tool_error(mcp, "cannot be reached")
