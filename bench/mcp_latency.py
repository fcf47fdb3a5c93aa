#!/usr/bin/env python3
"""Warm MCP call latency over HTTP: the official Python and TypeScript SDK clients, raw httpx and curl.

    .venv/bin/python bench/mcp_latency.py                   # 50 warm calls per client
    .venv/bin/python bench/mcp_latency.py --calls 200 --json
    .venv/bin/python bench/mcp_latency.py --url http://127.0.0.1:60606/mcp --doc-id ID   # a running server

Starts a `linkly serve` (PYTHONPATH passed on, so `PYTHONPATH=path/to/checkout`
measures that checkout) over a few Markdown and text fixtures, then, one client
after the other, makes `--warmup` calls it does not count and `--calls` it does,
on one kept-alive session:

- python-sdk: `mcp` ClientSession over `streamable_http_client`;
- ts-sdk: `@modelcontextprotocol/sdk` (the exact version in bench/ts_sdk.py)
  in Node, installed once with npm into ~/.cache/linkly-test/mcp-sdk-<version>;
- httpx: raw JSON-RPC POSTs on one kept-alive connection;
- curl: a new process and a new connection per call (its own `time_total`).

Each measures `read` (5 lines) and `tools/list`. Besides the latencies, each
row shows the server's CPU time per call (utime + stime of the server process,
which a busy machine hardly changes), the client's own CPU time per measured
call (this process's for the Python SDK and httpx, `process.cpuUsage()` in
Node) and how many CPUs the whole machine kept busy meanwhile (from
/proc/stat): wall times on a busy machine are not a transport's cost. Compare
checkouts in one sitting (`--wait-for-idle` helps).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
from load_mcp import Server, open_session, wait_indexed
from ts_sdk import TS_SDK_PACKAGE, TS_SDK_VERSION, ts_script

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
SOURCES = [
    FIXTURES / "notes/rust/ch04-01-what-is-ownership.md",
    FIXTURES / "notes/rust/ch03-05-control-flow.md",
    FIXTURES / "reference/social-contract.txt",
]
PROTOCOL_VERSION = "2025-06-18"
JSON_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

TS_CLIENT = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, docId, calls, warmup] = [process.argv[2], process.argv[3], +process.argv[4], +process.argv[5]];
const client = new Client({ name: "linkly-bench", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const cpu = {};
async function timed(name, call) {
  for (let i = 0; i < warmup; i++) await call();
  const times = [];
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const result = await call();
    times.push(performance.now() - started);
    if (result.isError) throw new Error(JSON.stringify(result.content));
  }
  const used = process.cpuUsage(before);
  cpu[name] = (used.user + used.system) / 1000 / calls;
  return times;
}
const read = await timed("read", () => client.callTool({ name: "read", arguments: { doc_id: docId, limit: 5 } }));
const list = await timed("list", () => client.listTools());
console.log(JSON.stringify({ times: { read, list }, cpu }));
await client.close();
"""


def summary(milliseconds: list[float]) -> dict[str, float]:
    ordered = sorted(milliseconds)
    return {
        "calls": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
        "min": round(ordered[0], 2),
        "max": round(ordered[-1], 2),
    }


def process_cpu_s(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_cpu_s() -> tuple[float, float]:
    """(busy, elapsed) CPU seconds of the whole machine so far, from /proc/stat."""
    values = [int(value) for value in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = values[3] + values[4]
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK"), sum(values[:8]) / os.sysconf("SC_CLK_TCK")


def wait_for_idle(max_seconds: float, threshold: float = 0.3) -> None:
    """Wait (up to max_seconds) until the machine keeps fewer than `threshold` CPUs busy for a second."""
    deadline = time.monotonic() + max_seconds
    while time.monotonic() < deadline:
        busy, _ = machine_cpu_s()
        time.sleep(1.0)
        if machine_cpu_s()[0] - busy < threshold:
            return


Timings = tuple[dict[str, list[float]], dict[str, float]]  # milliseconds per call; the client's CPU-ms per call


async def python_sdk(url: str, doc_id: str, calls: int, warmup: int) -> Timings:
    async with AsyncExitStack() as stack:
        session = await open_session(url, stack)

        async def read() -> None:
            result = await session.call_tool("read", {"doc_id": doc_id, "limit": 5})
            if result.is_error:
                raise RuntimeError(result.content[0].text)

        async def list_tools() -> None:
            await session.list_tools()

        times: dict[str, list[float]] = {}
        cpu: dict[str, float] = {}
        for name, call in (("read", read), ("list", list_tools)):
            for _ in range(warmup):
                await call()
            times[name] = []
            cpu_before = time.process_time()
            for _ in range(calls):
                started = time.perf_counter()
                await call()
                times[name].append((time.perf_counter() - started) * 1000)
            cpu[name] = (time.process_time() - cpu_before) * 1000 / calls
        return times, cpu


def ts_sdk(script: Path, url: str, doc_id: str, calls: int, warmup: int) -> Timings:
    completed = subprocess.run(
        ["node", str(script), url, doc_id, str(calls), str(warmup)], capture_output=True, text=True, timeout=600
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the TypeScript client failed: {completed.stderr[-2000:]}")
    answer = json.loads(completed.stdout.strip().splitlines()[-1])
    return answer["times"], answer["cpu"]


def parse_answer(response: httpx.Response) -> dict[str, Any]:
    """One JSON-RPC answer from a JSON or an event-stream body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:"):
                return json.loads(line[5:])
        raise RuntimeError(f"no data in the event stream: {response.text[:200]}")
    return response.json()


def raw_session(client: httpx.Client, url: str) -> dict[str, str]:
    """initialize + notifications/initialized; the headers later requests must carry."""
    initialize = {
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": PROTOCOL_VERSION, "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
    }
    response = client.post(url, json=initialize, headers=JSON_HEADERS)
    response.raise_for_status()
    headers = {**JSON_HEADERS, "MCP-Protocol-Version": PROTOCOL_VERSION}
    if "mcp-session-id" in response.headers:
        headers["Mcp-Session-Id"] = response.headers["mcp-session-id"]
    client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers).raise_for_status()
    return headers


def raw_httpx(url: str, doc_id: str, calls: int, warmup: int) -> Timings:
    requests = {
        "read": {"method": "tools/call", "params": {"name": "read", "arguments": {"doc_id": doc_id, "limit": 5}}},
        "list": {"method": "tools/list", "params": {}},
    }
    times: dict[str, list[float]] = {}
    cpu: dict[str, float] = {}
    with httpx.Client(timeout=30) as client:
        headers = raw_session(client, url)
        for name, request in requests.items():
            times[name] = []
            for number in range(warmup + calls):
                if number == warmup:
                    cpu_before = time.process_time()
                started = time.perf_counter()
                answer = parse_answer(client.post(url, json={"jsonrpc": "2.0", "id": number + 1, **request}, headers=headers))
                elapsed = (time.perf_counter() - started) * 1000
                if "error" in answer or answer.get("result", {}).get("isError"):
                    raise RuntimeError(f"httpx {name}: {answer}")
                if number >= warmup:
                    times[name].append(elapsed)
            cpu[name] = (time.process_time() - cpu_before) * 1000 / calls
    return times, cpu


def curl_fresh(url: str, doc_id: str, calls: int) -> Timings:
    """One curl process and connection per call; curl's own `time_total` (process start not included)."""
    with httpx.Client(timeout=30) as client:
        headers = raw_session(client, url)
    bodies = {
        "read": {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "read", "arguments": {"doc_id": doc_id, "limit": 5}}},
        "list": {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    }
    times: dict[str, list[float]] = {}
    for name, body in bodies.items():
        times[name] = []
        for _ in range(calls):
            command = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-X", "POST", url,
                       "--data", json.dumps(body)]
            for key, value in headers.items():
                command += ["-H", f"{key}: {value}"]
            status, seconds = subprocess.run(command, capture_output=True, text=True, timeout=30).stdout.split()
            if status != "200":
                raise RuntimeError(f"curl {name}: HTTP {status}")
            times[name].append(float(seconds) * 1000)
    return times, {}


def start_server(root: Path, embedding: bool) -> tuple[Server, str, str]:
    library = root / "library" / "notes"
    library.mkdir(parents=True)
    for source in SOURCES:
        shutil.copy2(source, library / source.name)
    config = root / "config.toml"
    config.write_text(
        f'[embedding]\nmodel = "{"bundled" if embedding else "none"}"\n\n'
        f'[[library]]\nname = "bench"\npaths = [{json.dumps(str(root / "library"))}]\n',
        encoding="utf-8",
    )
    env = {**os.environ, "LINKLY_CONFIG": str(config), "LINKLY_DATA_DIR": str(root / "data"), "PYTHONUNBUFFERED": "1"}
    env.pop("LINKLY_MCP_TOKEN", None)
    server = Server(env, root)
    url = server.wait_listening()

    async def first_doc() -> str:
        async with AsyncExitStack() as stack:
            session = await open_session(url, stack)
            await wait_indexed(session, len(SOURCES))
            found = await session.call_tool("search", {"query": "ownership", "limit": 1})
            return found.structured_content["results"][0]["doc_id"]

    return server, url, asyncio.run(first_doc())


def measure(url: str, doc_id: str, args: argparse.Namespace, server_pid: int | None) -> dict[str, Any]:
    """client -> call -> figures; the server's CPU per call and the machine's load are per client."""
    script = None if args.no_ts else ts_script("linkly-latency.mjs", TS_CLIENT)
    clients: dict[str, Any] = {"python-sdk": lambda: asyncio.run(python_sdk(url, doc_id, args.calls, args.warmup))}
    if script is not None:
        clients["ts-sdk"] = lambda: ts_sdk(script, url, doc_id, args.calls, args.warmup)
    clients["httpx"] = lambda: raw_httpx(url, doc_id, args.calls, args.warmup)
    if shutil.which("curl") is not None:
        clients["curl (new connection)"] = lambda: curl_fresh(url, doc_id, min(args.calls, 20))
    figures: dict[str, Any] = {}
    for client, run in clients.items():
        if args.wait_for_idle:
            wait_for_idle(args.wait_for_idle)
        server_before = process_cpu_s(server_pid) if server_pid else 0.0
        busy_before, elapsed_before = machine_cpu_s()
        started = time.monotonic()
        times, client_cpu = run()
        wall = time.monotonic() - started
        busy = machine_cpu_s()[0] - busy_before
        calls = sum(len(values) for values in times.values())
        warm = 0 if client.startswith("curl") else args.warmup * len(times)
        figures[client] = {call: summary(values) for call, values in times.items()}
        for call, row in figures[client].items():
            if call in client_cpu:
                row["client_cpu_ms"] = round(client_cpu[call], 2)
            row["machine_busy_cpus"] = round(busy / wall, 2)
            if server_pid:
                row["server_cpu_ms"] = round((process_cpu_s(server_pid) - server_before) * 1000 / (calls + warm), 2)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=50, help="measured calls per client and method")
    parser.add_argument("--warmup", type=int, default=5, help="calls made first and not counted")
    parser.add_argument("--url", help="measure this running server instead of starting one (needs --doc-id)")
    parser.add_argument("--doc-id", help="the document `read` reads, with --url")
    parser.add_argument("--embedding", action="store_true", help="the bundled embedding model on (default: off)")
    parser.add_argument("--no-ts", action="store_true", help="skip the TypeScript SDK client")
    parser.add_argument("--wait-for-idle", type=float, default=0.0, metavar="SECONDS",
                        help="before each client, wait up to SECONDS until the machine keeps under 0.3 CPUs busy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.url and not args.doc_id:
        parser.error("--url needs --doc-id")
    server = None
    root = Path(tempfile.mkdtemp(prefix="linkly-latency-"))
    try:
        if args.url:
            url, doc_id = args.url, args.doc_id
        else:
            server, url, doc_id = start_server(root, args.embedding)
        figures = measure(url, doc_id, args, server.process.pid if server else None)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{'client':22} {'call':6} {'calls':>5} {'p50 ms':>8} {'p95 ms':>8} {'min ms':>8} {'max ms':>8} "
          f"{'server CPU ms':>13} {'client CPU ms':>13} {'busy CPUs':>9}")
    for client, calls in figures.items():
        for call, row in calls.items():
            cpu = f"{row.get('server_cpu_ms', '-'):>13} {row.get('client_cpu_ms', '-'):>13}"
            print(f"{client:22} {call:6} {row['calls']:>5} {row['p50']:>8} {row['p95']:>8} {row['min']:>8} {row['max']:>8} "
                  f"{cpu} {row['machine_busy_cpus']:>9}")
    print(f"(machine: {os.cpu_count()} CPUs; server CPU per call: the whole run, session set-up and warm-up calls "
          f"included, over its calls; clients: mcp {metadata.version('mcp')}, {TS_SDK_PACKAGE} {TS_SDK_VERSION})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
