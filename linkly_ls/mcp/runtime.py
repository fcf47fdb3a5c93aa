"""The runtime file `<data_dir>/mcp-server.json`: how other processes find a running HTTP server.

A server writes `{"url", "host", "port", "pid", "started_at"}` once it listens
and removes the file on exit. A crash can leave the file behind, so readers
trust it only while its pid is alive.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from linkly_ls.core.indexing.scratch import pid_alive
from linkly_ls.core.tools.common import utc_now

RUNTIME_FILE_NAME = "mcp-server.json"


@dataclass(frozen=True)
class RuntimeInfo:
    url: str
    host: str
    port: int
    pid: int
    started_at: str


def runtime_file(data_dir: Path) -> Path:
    return data_dir / RUNTIME_FILE_NAME


def write_runtime_file(data_dir: Path, url: str, host: str, port: int) -> RuntimeInfo:
    """Write atomically (temp file + rename), so a reader never sees half a file."""
    info = RuntimeInfo(url=url, host=host, port=port, pid=os.getpid(), started_at=utc_now())
    data_dir.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=".mcp-server.", suffix=".json", dir=data_dir)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(asdict(info), handle, indent=2)
        handle.write("\n")
    os.replace(temporary, runtime_file(data_dir))
    return info


def remove_runtime_file(data_dir: Path) -> None:
    """Remove the file if it is this process's (another server may have replaced it)."""
    info = read_runtime_file(data_dir, require_alive=False)
    if info is not None and info.pid != os.getpid():
        return
    try:
        runtime_file(data_dir).unlink()
    except FileNotFoundError:
        pass


def read_runtime_file(data_dir: Path, require_alive: bool = True) -> RuntimeInfo | None:
    """The running server's address, or None when there is none (or its process is gone)."""
    try:
        data = json.loads(runtime_file(data_dir).read_text(encoding="utf-8"))
        info = RuntimeInfo(
            url=str(data["url"]),
            host=str(data["host"]),
            port=int(data["port"]),
            pid=int(data["pid"]),
            started_at=str(data.get("started_at", "")),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if require_alive and not pid_alive(info.pid):
        return None
    return info


def server_reachable(info: RuntimeInfo, timeout: float = 0.5) -> bool:
    """Whether something accepts connections at the recorded address (a reused pid is not a server)."""
    address = urlsplit(info.url)
    try:
        with socket.create_connection((address.hostname or info.host, address.port or info.port), timeout=timeout):
            return True
    except OSError:
        return False


def live_server(data_dir: Path) -> RuntimeInfo | None:
    """The runtime file's server, when its process is alive and its port answers."""
    info = read_runtime_file(data_dir)
    return info if info is not None and server_reachable(info) else None
