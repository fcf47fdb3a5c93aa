"""`linkly serve` as a process: refusing unsafe binds, finding a free port, the runtime file, shutdown."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import httpx

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.mcp.http import bind_socket, start_http_sidecar
from linkly_ls.mcp.runtime import read_runtime_file, write_runtime_file
from linkly_ls.mcp.settings import McpSettings

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def run_serve(home, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "linkly_ls.cli", "serve", *args],
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_network_bind_without_a_token_is_refused(home_factory, kit) -> None:
    home = home_factory(minimal=True)
    from_flag = run_serve(home, "--host", "0.0.0.0", "--port", str(kit.free_port()))
    assert from_flag.returncode == 2
    assert "refusing to listen on 0.0.0.0" in from_flag.stderr and "token" in from_flag.stderr
    assert "Traceback" not in from_flag.stderr

    home.mcp = {"host": "0.0.0.0", "port": kit.free_port()}
    home.write_config()
    from_config = run_serve(home)
    assert from_config.returncode == 2 and "refusing to listen on 0.0.0.0" in from_config.stderr
    assert not home.runtime_file.exists()


def test_a_host_that_is_no_address_of_this_machine_is_named_in_the_error(home_factory, kit) -> None:
    """`[Errno -2] Name or service not known` and `[Errno 99] Cannot assign requested address` named no host."""
    home = home_factory({"token": "network-token-0123456789"}, minimal=True)
    for host, said in (("no-such-host.invalid", "no such host or address"), ("192.0.2.1", "not an address of this machine")):
        refused = run_serve(home, "--host", host, "--port", str(kit.free_port()), "--no-watch")
        assert refused.returncode != 0 and f"cannot listen on {host}" in refused.stderr.replace("'", ""), refused.stderr
        assert said in refused.stderr and "Traceback" not in refused.stderr


def test_a_network_bind_with_a_token_requires_it(home_factory, kit) -> None:
    token = "network-token-0123456789"
    home = home_factory({"host": "0.0.0.0", "token": token}, minimal=True)
    server = kit.ServerProcess(home, "--port", str(kit.free_port()), "--no-watch")
    try:
        url = server.wait_listening()
        assert url.startswith("http://127.0.0.1:")
        with httpx.Client(timeout=10) as client:
            assert client.post(url, json=PING, headers=HEADERS).status_code == 401
            initialize = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
            }
            accepted = client.post(url, json=initialize, headers={**HEADERS, "Authorization": f"Bearer {token}"})
            assert accepted.status_code == 200
    finally:
        assert server.stop() == 0


def test_a_taken_port_moves_to_the_next_and_the_runtime_file_says_so(home_factory, kit) -> None:
    home = home_factory(minimal=True)
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        taken = blocker.getsockname()[1]
        server = kit.ServerProcess(home, "--port", str(taken))
        try:
            url = server.wait_listening()
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert port != taken and taken < port <= taken + 20
            assert url == f"http://127.0.0.1:{port}/mcp"
            printed = server.wait_output("stdio clients")
            assert f"port {taken} was taken" in printed
            assert f"claude mcp add --transport http linkly {url}" in printed
            # a stdio client finds this server through its index, which is not the default one here
            assert f"with LINKLY_DATA_DIR={home.data_dir} in its environment" in printed
            recorded = json.loads(home.runtime_file.read_text())
            assert recorded["url"] == url and recorded["port"] == port and recorded["host"] == "127.0.0.1"
            assert recorded["pid"] == server.process.pid and recorded["started_at"].endswith("Z")
            assert read_runtime_file(home.data_dir).url == url

            second = run_serve(home, "--port", str(kit.free_port()))
            assert second.returncode == 1
            assert f"already running at {url} (pid {server.process.pid})" in second.stderr
            assert json.loads(home.runtime_file.read_text())["pid"] == server.process.pid
        finally:
            assert server.stop() == 0
    assert not home.runtime_file.exists()


def test_a_runtime_file_left_by_a_dead_process_is_ignored(tmp_path) -> None:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(child.stdout)
    write_runtime_file(tmp_path, "http://127.0.0.1:1/mcp", "127.0.0.1", 1)
    recorded = json.loads((tmp_path / "mcp-server.json").read_text())
    assert recorded["pid"] == os.getpid()
    recorded["pid"] = dead_pid
    (tmp_path / "mcp-server.json").write_text(json.dumps(recorded))
    assert read_runtime_file(tmp_path) is None
    assert read_runtime_file(tmp_path, require_alive=False).pid == dead_pid


def test_the_listening_socket_is_tcp_with_nagle_off() -> None:
    """asyncio turns Nagle off only on accepted sockets whose `proto` is IPPROTO_TCP (copied from this one)."""
    sock = bind_socket("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    finally:
        sock.close()


def test_accepted_connections_have_nagle_off(tmp_path) -> None:
    """With Nagle on, an answer's body waits behind its unacknowledged headers for the client's
    delayed ACK (~40 ms a call on a kept-alive connection); every accepted socket must have TCP_NODELAY."""
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[]))
    handle = start_http_sidecar(engine, McpSettings(port=0), write_runtime=False)
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    try:
        with httpx.Client(timeout=10) as first, httpx.Client(timeout=10) as second:
            assert first.post(handle.url, json=initialize, headers=HEADERS).status_code == 200
            assert second.post(handle.url, json=PING, headers=HEADERS).status_code in (200, 400)
            sockets = [connection.transport.get_extra_info("socket") for connection in handle.server.server_state.connections]
            assert len(sockets) == 2
            assert all(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for sock in sockets)
    finally:
        handle.stop()
        engine.close()


def test_a_server_whose_index_folder_is_deleted_says_so_and_stops(home_factory, kit) -> None:
    """It went on answering from files that were gone, its writer stuck holding a lock, and a second
    `linkly serve` then started beside it on the folder made again."""
    import shutil
    import time

    home = home_factory(minimal=True)
    server = kit.ServerProcess(home, "--port", str(kit.free_port()), "--no-watch")
    server.wait_listening()
    gone = home.data_dir.with_name("data-deleted")
    home.data_dir.rename(gone)  # at once: a tree removed file by file races the files the server writes meanwhile
    shutil.rmtree(gone, ignore_errors=True)
    deadline = time.monotonic() + 30
    while server.process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.process.poll() == 1
    time.sleep(0.2)  # the last of stderr
    assert f"linkly: the index folder {home.data_dir} was deleted (or replaced) while this process ran; the server stops" in "".join(server.stderr)
    assert "Traceback" not in "".join(server.stderr)


def test_a_stop_with_a_client_connected_ends_its_event_stream_quietly(home_factory, kit) -> None:
    """Every `mcp` SDK session holds an event stream open: a stop waited 3 s for it and logged a 50-line
    traceback of the CancelledError that ended it."""
    import asyncio
    import threading

    home = home_factory(minimal=True)
    server = kit.ServerProcess(home, "--port", str(kit.free_port()), "--no-watch")
    url = server.wait_listening()
    connected, release = threading.Event(), threading.Event()

    async def hold_a_session() -> None:
        async with kit.http_session(url) as session:
            await session.list_tools()
            connected.set()
            while not release.is_set():
                await asyncio.sleep(0.05)

    client = threading.Thread(target=lambda: asyncio.run(hold_a_session()), daemon=True)
    client.start()
    try:
        assert connected.wait(30), "the client connected"
        assert server.stop() == 0
    finally:
        release.set()
        client.join(10)
    stderr = "".join(server.stderr)
    assert "Traceback" not in stderr and "graceful shutdown exceeded" not in stderr, stderr


def test_a_hangup_stops_the_server_cleanly(home_factory, kit) -> None:
    """Closing the terminal of `linkly serve &` killed it (status 129) and left its runtime file behind."""
    import signal

    home = home_factory(minimal=True)
    server = kit.ServerProcess(home, "--port", str(kit.free_port()), "--no-watch")
    server.wait_listening()
    server.process.send_signal(signal.SIGHUP)
    assert server.process.wait(20) == 0
    assert not home.runtime_file.exists()
