"""A request that does not arrive whole in time closes its connection; answers take as long as they take."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
import uvicorn

from linkly_ls.mcp import slow_requests
from linkly_ls.mcp.slow_requests import TimedHttpToolsProtocol


async def slow_app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await asyncio.sleep(0.6)  # an answer slower than the arrival deadline is still sent
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setattr(slow_requests, "REQUEST_ARRIVAL_S", 0.3)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(slow_app, http=TimedHttpToolsProtocol, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.01)
    yield sock.getsockname()
    running.should_exit = True
    thread.join(10)


def _closed_within(connection: socket.socket, seconds: float) -> bool:
    connection.settimeout(seconds)
    try:
        return connection.recv(100) == b""
    except TimeoutError:
        return False


def test_a_request_sent_a_few_bytes_at_a_time_is_cut_off(server):
    with socket.create_connection(server) as connection:
        connection.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: ")
        assert _closed_within(connection, 3)
    with socket.create_connection(server) as silent:  # nothing sent at all
        assert _closed_within(silent, 3)


def test_a_whole_request_is_answered_however_long_the_answer_takes_and_the_next_one_too(server):
    with socket.create_connection(server) as connection:
        for _ in range(2):
            connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            connection.settimeout(5)
            answer = b""
            while not answer.endswith(b"ok"):
                chunk = connection.recv(1000)
                assert chunk, "closed before the answer"
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 200")
