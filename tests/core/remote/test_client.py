"""The remote client against a real HTTP server that misbehaves: one deadline a call, one size cap."""

from __future__ import annotations

import json
import resource
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from linkly_ls.core.errors import ArgumentError, ToolError
from linkly_ls.core.remote.client import MAX_ANSWER_BYTES, RemoteClient, RemoteError
from linkly_ls.core.remote.config import RemoteConfig


class _Streaming(BaseHTTPRequestHandler):
    """Answers every POST with an event stream: `trickle` sends a byte every 0.2 s and never ends a line,
    `flood` sends 64 KB chunks without a newline, `answer` a proper MCP response in two events."""

    mode = "answer"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        if body.get("method") == "initialize":
            self.send_header("mcp-session-id", "s1")
        self.end_headers()
        if "id" not in body:
            return
        try:
            if self.mode == "trickle":
                for _ in range(200):
                    self.wfile.write(b"d")
                    self.wfile.flush()
                    time.sleep(0.2)
            elif self.mode == "flood":
                chunk = b"x" * 65536
                for _ in range((MAX_ANSWER_BYTES // len(chunk)) * 4):
                    self.wfile.write(chunk)
            else:  # "answer", "cut"
                result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "t", "version": "1"}}
                if body.get("method") == "tools/call" and self.mode == "toolerror":
                    text = "Error: boom \x1b]0;PWNED\x07\x1b[2J\n- remote **x** fine"
                    result = {"content": [{"type": "text", "text": text}], "isError": True}
                elif body.get("method") == "tools/call":
                    structured = {"text": "héllo"}
                    if self.mode == "cut":  # what a server's max_response_chars leaves of a long answer
                        structured = {"lines": [{"line": 1, "text": "a"}], "next_offset": 2, "truncated": True, "note": "cut"}
                    result = {"content": [], "structuredContent": structured}
                message = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result}).encode()
                half = len(message) // 2  # a line split across writes, and across a UTF-8 character's bytes
                self.wfile.write(b": ping\r\n\r\ndata: " + message[:half])
                self.wfile.flush()
                time.sleep(0.05)
                self.wfile.write(message[half:] + b"\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Streaming)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def client_of(server: ThreadingHTTPServer, timeout_s: float = 1.5) -> RemoteClient:
    return RemoteClient(RemoteConfig(name="odd", url=f"http://127.0.0.1:{server.server_address[1]}/mcp", timeout_s=timeout_s))


def test_an_event_stream_split_anywhere_is_read_whole(server):
    _Streaming.mode = "answer"
    assert client_of(server).call_tool("read", {"doc_id": "aaaaaaaaaaaa"})["text"] == "héllo"


def test_a_server_trickling_bytes_without_a_newline_is_cut_at_the_deadline(server):
    """Each byte came within the read timeout and the deadline was checked once a line: the call ran on."""
    _Streaming.mode = "answer"
    client = client_of(server)
    client.call_tool("read", {"doc_id": "aaaaaaaaaaaa"})  # the session is open: the next call trickles
    _Streaming.mode = "trickle"
    started = time.monotonic()
    with pytest.raises(RemoteError, match=r"^remote 'odd' did not answer within 1.5 s$"):
        client.call_tool("read", {"doc_id": "aaaaaaaaaaaa"})
    assert time.monotonic() - started < 5


def test_a_server_flooding_one_endless_line_is_cut_at_the_size_cap(server):
    _Streaming.mode = "answer"
    client = client_of(server, timeout_s=60)
    client.call_tool("read", {"doc_id": "aaaaaaaaaaaa"})
    _Streaming.mode = "flood"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(RemoteError, match=r"answered more than 16 MB"):
        client.call_tool("read", {"doc_id": "aaaaaaaaaaaa"})
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 3 * (MAX_ANSWER_BYTES >> 10)


def test_a_read_the_server_cut_to_its_size_cap_comes_back_with_its_paging_and_other_cut_answers_fail(server):
    """A remote document longer than the server's max_response_chars was a hard error: no line came back."""
    _Streaming.mode = "cut"
    client = client_of(server)
    assert client.call_tool("read", {"doc_id": "aaaaaaaaaaaa"})["next_offset"] == 2
    with pytest.raises(RemoteError, match="longer than that server's max_response_chars"):
        client.call_tool("search", {"query": "x"})


def test_a_tool_no_remote_answers_says_which_tools_they_answer():
    """`links` was refused as if remote calls could not read: they answer the contract's seven tools."""
    from linkly_ls.core.remote import RemoteSet

    with pytest.raises(ArgumentError, match=r"^`links` is not sent to remotes: a remote answers the seven tools of the contract \(search, outline, grep, read, list_libraries, explore, find_paths\)$"):
        RemoteSet([]).call("desk", "links", {})


def test_a_remote_error_message_is_one_line_with_its_control_characters_written_out(server):
    """A newline in it forged a line of the merged answer; an escape sequence retitled and cleared the terminal."""
    server.RequestHandlerClass.mode = "toolerror"
    try:
        with pytest.raises(ToolError) as raised:
            client_of(server).call_tool("read", {"doc_id": "0123456789ab"})
    finally:
        server.RequestHandlerClass.mode = "answer"
    message = str(raised.value)
    assert "\n" not in message and "\x1b" not in message and "\x07" not in message
    assert "boom \\x1b]0;PWNED\\x07\\x1b[2J - remote **x** fine" in message
