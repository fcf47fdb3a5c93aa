#!/usr/bin/env python3
"""Load test: many concurrent MCP clients against one real `linkly serve`, while files change.

    /work/venv/bin/python bench/load_mcp.py                       # 16 clients x 1,000 calls
    /work/venv/bin/python bench/load_mcp.py --clients 16 --calls 30 --json
    /work/venv/bin/python bench/load_mcp.py --lsp --hybrid
    /work/venv/bin/python bench/load_mcp.py --ts --hybrid --calls 200    # TypeScript-SDK clients, embedding meanwhile

A library of ~30 real files (repository fixtures and ../shared/corpus) is served
over streamable HTTP on 127.0.0.1. Every client has its own session and makes a
seeded mix of search (some with filters), outline, grep, read (doc ids from
search results), list_libraries, explore and find_paths calls. Meanwhile a
writer thread creates, edits and deletes files in the library (the server's
watcher re-indexes them) and, with `--lsp`, a `linkly-ls` over the same data
dir answers workspace/symbol and linkly/read requests in a loop.

Every answer is checked; the run exits 1 on any error. Greps refused for their
time budget ("took longer than") are errors too, and counted apart: the patterns
are benign (`the|der|le` takes tens of ms on a quiet server), so a refusal means
the budget counted waiting rather than matching. With `--hybrid` the server
embeds in the background throughout (the summary shows the vector coverage
before and after the load).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
CORPUS = REPO.parent / "shared" / "corpus"

#: (source, folder in the library)
SOURCES = [
    *((FIXTURES / "notes/rust" / name, "notes/rust") for name in (
        "ch04-01-what-is-ownership.md", "ch03-05-control-flow.md", "ch05-01-defining-structs.md")),
    (FIXTURES / "reference/social-contract.txt", "reference"),
    (FIXTURES / "papers/pdflatex-outline.pdf", "papers"),
    (FIXTURES / "documents/dpkg cheat sheet.docx", "documents"),
    *((CORPUS / "notes/learning-rust" / name, "rust-book") for name in (
        "ch03-01-variables-and-mutability.md", "ch03-02-data-types.md", "ch03-03-how-functions-work.md",
        "ch04-02-references-and-borrowing.md", "ch04-03-slices.md", "ch05-03-method-syntax.md",
        "ch06-00-enums.md", "ch06-01-defining-an-enum.md", "ch06-02-match.md", "ch06-03-if-let.md",
        "ch02-00-guessing-game-tutorial.md", "ch01-02-hello-world.md")),
    *((CORPUS / "web/debian-handbook/en-US" / name, "web/debian") for name in (
        "sect.backup.html", "sect.firewall-packet-filtering.html", "sect.network-config.html",
        "sect.apt-get.html")),
    (CORPUS / "web/python-3.11-docs/howto/logging.html", "web/python"),
    (CORPUS / "web/python-3.11-docs/library/pathlib.html", "web/python"),
    (CORPUS / "reference/man/grep.1.txt", "reference/man"),
    (CORPUS / "reference/man/ls.1.txt", "reference/man"),
    (CORPUS / "notes/web-dev/astro-docs/en/getting-started.mdx", "notes/astro"),
    (CORPUS / "papers/latex/multicolumn.pdf", "papers"),
    (CORPUS / "slides/rust ownership - lunch and learn.pptx", "slides"),
]
QUERIES = [
    "ownership borrowing", "firewall packet filtering", "logging handler", "pathlib path", "struct fields",
    "match enum", "control flow loop", "dpkg install", "social contract", "grep regular expression",
    "network interface configuration", "backup", "slices string", "guessing game", "hello world",
    "variables mutability shadowing", "apt-get upgrade", "zephyr churn note", "if let", "integer overflow",
]
GREP_PATTERNS = ["ownership", "^#+ ", "fn main", "firewall", r"\bstruct\b", "Debian", "path", "let ", "the|der|le"]
FILTERS = [
    {"doc_types": ["markdown"]}, {"doc_types": ["html"]}, {"path_glob": "rust-book/**"},
    {"library": "load"}, {"path_glob": "web/**"},
]
TOOLS = ["search", "search", "search", "outline", "grep", "read", "read", "list_libraries", "explore", "find_paths"]
REQUIRED = {
    "search": ["results"],
    "outline": ["documents"],
    "grep": [],
    "read": ["doc_id", "lines", "total_lines", "remaining_lines"],
    "list_libraries": ["libraries"],
    "explore": [],
    "find_paths": [],
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_home(root: Path, hybrid: bool) -> tuple[Path, Path, Path]:
    library, data_dir, config = root / "library", root / "data", root / "config.toml"
    for source, folder in SOURCES:
        if not source.exists():
            continue
        (library / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, library / folder / source.name)
    (library / "churn").mkdir(parents=True, exist_ok=True)
    model = "bundled" if hybrid else "none"
    config.write_text(
        f'[embedding]\nmodel = "{model}"\n\n[limits]\nocr = false\n\n'
        f'[[library]]\nname = "load"\ndescription = "load test library"\npaths = [{json.dumps(str(library))}]\n',
        encoding="utf-8",
    )
    return library, data_dir, config


class Server:
    """`linkly serve` run from `cwd` (`python -m` puts the working directory before PYTHONPATH, so a
    checkout there would be served instead of the one PYTHONPATH names)."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "linkly_ls.cli", "serve", "--port", str(free_port())],
            env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.url = ""
        threading.Thread(target=self._drain, args=(self.process.stdout, self.stdout), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.process.stderr, self.stderr), daemon=True).start()

    @staticmethod
    def _drain(stream: Any, sink: list[str]) -> None:
        for line in stream:
            sink.append(line)

    def wait_listening(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.stdout):
                match = re.match(r"MCP server listening on (\S+)", line)
                if match:
                    self.url = match.group(1)
                    return self.url
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"server did not start: {''.join(self.stdout)} {''.join(self.stderr)}")

    def batches(self) -> list[str]:
        return [line for line in self.stderr if re.match(r"linkly: \S+: \d+ indexed", line)]

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)
            return -9


async def open_session(url: str, stack: Any) -> ClientSession:
    http = await stack.enter_async_context(create_mcp_http_client())
    read, write, *_ = await stack.enter_async_context(streamable_http_client(url, http_client=http))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def wait_indexed(session: ClientSession, expected: int, timeout: float = 180) -> dict:
    deadline = time.monotonic() + timeout
    payload: dict = {}
    while time.monotonic() < deadline:
        result = await session.call_tool("list_libraries", {})
        payload = result.structured_content or {}
        libraries = payload.get("libraries", [])
        counts = sum(lib["document_count"] + lib["failed_count"] for lib in libraries)
        if not result.is_error and "indexing" not in payload.get("_meta", {}) and counts >= expected:
            return payload
        await asyncio.sleep(0.2)
    raise RuntimeError(f"indexing did not finish: {payload}")


async def vector_coverage(url: str) -> float | None:
    """The load library's share of words with vectors (None without embeddings)."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        session = await open_session(url, stack)
        result = await session.call_tool("list_libraries", {})
    libraries = (result.structured_content or {}).get("libraries", [])
    return next((library.get("vector_coverage") for library in libraries if library.get("name") == "load"), None)


class Stats:
    def __init__(self) -> None:
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.calls = 0
        #: answers "not an indexed document" for a churn file the writer thread deleted meanwhile (correct)
        self.gone = 0
        #: greps stopped for their time budget
        self.grep_refused = 0
        self.greps = 0
        #: searches answered while vectors were being computed (`indexing: true`), of all searches answered
        self.searches_while_embedding = 0
        self.searches_answered = 0

    def record(self, tool: str, seconds: float, error: str | None) -> None:
        self.calls += 1
        self.latencies[tool].append(seconds)
        if tool == "grep":
            self.greps += 1
            self.grep_refused += bool(error and "took longer than" in error)
        if error:
            self.errors.append(f"{tool}: {error}")


def check(tool: str, arguments: dict, result: Any) -> str | None:
    if result.is_error:
        text = result.content[0].text if result.content else ""
        # a doc id from an earlier search may name a document the writer thread deleted since
        if tool in ("read", "outline", "grep") and arguments.get("_churn") and "is not an indexed document" in text:
            return "gone"
        return f"is_error {arguments}: {text[:300]}"
    payload = result.structured_content
    if not isinstance(payload, dict):
        return f"no structured content {arguments}"
    if "now" not in payload.get("_meta", {}):
        return f"no _meta.now {arguments}"
    for key in REQUIRED[tool]:
        if key not in payload:
            return f"missing key {key!r} {arguments}: {sorted(payload)}"
    if tool == "read":
        total = payload["total_lines"]
        offset = arguments.get("offset", 1)
        lines = payload["lines"]
        numbers = [line["line"] for line in lines]
        if numbers != list(range(numbers[0], numbers[0] + len(numbers))) if numbers else False:
            return f"read lines not contiguous {arguments}"
        if numbers and (numbers[0] < 1 or numbers[-1] > total or numbers[0] != max(offset, 1)):
            return f"read lines {numbers[0]}..{numbers[-1]} outside 1..{total} (offset {offset})"
        if len(numbers) > arguments.get("limit", 10**9):
            return f"read returned {len(numbers)} lines > limit {arguments}"
        if not numbers and offset <= total:
            return f"read returned nothing for offset {offset} <= total {total}"
    if tool == "search":
        for hit in payload["results"]:
            for key in ("doc_id", "title", "path"):
                if key not in hit:
                    return f"search hit without {key!r}: {sorted(hit)}"
    return None


async def client(number: int, url: str, calls: int, seed: int, stats: Stats, stop_at: float) -> None:
    rng = random.Random(seed * 1000 + number)
    known: dict[str, tuple[int, bool]] = {}  # doc_id -> (total lines or 0, in churn folder)
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        session = await open_session(url, stack)
        for _ in range(calls):
            if time.monotonic() > stop_at:
                stats.errors.append(f"client {number}: time budget exceeded")
                return
            tool = rng.choice(TOOLS)
            if tool in ("read", "outline") and not known:
                tool = "search"
            arguments: dict[str, Any]
            if tool == "search":
                arguments = {"query": rng.choice(QUERIES), "limit": rng.choice([3, 5, 10])}
                if rng.random() < 0.35:
                    arguments.update(rng.choice(FILTERS))
            elif tool == "outline":
                doc_ids = rng.sample(sorted(known), min(len(known), rng.randint(1, 3)))
                arguments = {"doc_ids": doc_ids, "_churn": any(known[d][1] for d in doc_ids)}
            elif tool == "grep":
                if not known:
                    tool, arguments = "list_libraries", {}
                else:
                    doc_id = rng.choice(sorted(known))
                    arguments = {"pattern": rng.choice(GREP_PATTERNS), "doc_id": doc_id, "_churn": known[doc_id][1]}
                if tool == "grep" and rng.random() < 0.3:
                    arguments["output_mode"] = "count"
            elif tool == "read":
                doc_id = rng.choice(sorted(known))
                total = known[doc_id][0]
                arguments = {"doc_id": doc_id, "limit": rng.choice([1, 5, 20, 80]), "_churn": known[doc_id][1]}
                if total > 1 and rng.random() < 0.6:
                    arguments["offset"] = rng.randint(1, total)
            elif tool == "explore":
                arguments = rng.choice([{"library": "load"}, {}, {"library": "load", "output_format": "json"}])
            elif tool == "find_paths":
                arguments = {"patterns": [rng.choice(["rust", "debian", "python", "churn", "man", "papers"])]}
            else:
                arguments = {}
            sent = {key: value for key, value in arguments.items() if not key.startswith("_")}
            started = time.perf_counter()
            try:
                result = await session.call_tool(tool, sent)
                error = check(tool, arguments, result)
            except Exception as exc:  # transport errors count as errors
                result, error = None, f"{type(exc).__name__}: {exc}"
            if error == "gone":
                stats.gone += 1
                error = None
            stats.record(tool, time.perf_counter() - started, error)
            if result is not None and not error and not result.is_error:
                payload = result.structured_content
                if tool == "search":
                    stats.searches_answered += 1
                    stats.searches_while_embedding += bool(payload.get("indexing"))
                    for hit in payload["results"]:
                        known.setdefault(hit["doc_id"], (0, "churn/" in hit["path"]))
                elif tool == "read":
                    known[payload["doc_id"]] = (payload["total_lines"], known.get(payload["doc_id"], (0, False))[1])
            if result is not None and result.is_error and tool in ("read", "outline", "grep"):
                for doc_id in arguments.get("doc_ids", [arguments.get("doc_id")]):
                    known.pop(doc_id, None)


TS_CLIENTS = r"""
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, clients, calls, seed, budget] = [process.argv[2], +process.argv[3], +process.argv[4], +process.argv[5], +process.argv[6]];
const { queries, patterns } = JSON.parse(process.argv[7]);
const stopAt = performance.now() + budget * 1000;

function random(state) {  // mulberry32
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function client(number) {
  const rand = random(seed * 1000 + number);
  const pick = (items) => items[Math.floor(rand() * items.length)];
  const out = { latencies: {}, errors: [], calls: 0, gone: 0, searches: 0, whileEmbedding: 0 };
  const known = new Map();  // doc_id -> in the churn folder
  const session = new Client({ name: `linkly-load-${number}`, version: "1" });
  await session.connect(new StreamableHTTPClientTransport(new URL(url)));
  for (let call = 0; call < calls; call++) {
    if (performance.now() > stopAt) { out.errors.push(`client ${number}: time budget exceeded`); break; }
    let tool = pick(["search", "search", "read", "grep", "outline"]);
    if (tool !== "search" && known.size === 0) tool = "search";
    const ids = [...known.keys()].sort();
    let args, churn = false;
    if (tool === "search") {
      args = { query: pick(queries), limit: pick([3, 5, 10]) };
    } else if (tool === "outline") {
      const docIds = [...new Set([pick(ids), pick(ids)])];
      args = { doc_ids: docIds };
      churn = docIds.some((id) => known.get(id));
    } else {
      const docId = pick(ids);
      churn = known.get(docId);
      args = tool === "grep" ? { pattern: pick(patterns), doc_id: docId } : { doc_id: docId, limit: pick([1, 5, 20, 80]) };
      if (tool === "grep" && rand() < 0.3) args.output_mode = "count";
    }
    const started = performance.now();
    let result, error = null;
    try {
      result = await session.callTool({ name: tool, arguments: args });
    } catch (exc) {
      error = `${tool}: transport: ${exc}`;
    }
    (out.latencies[tool] ??= []).push((performance.now() - started) / 1000);
    out.calls++;
    if (!error && result.isError) {
      const text = result.content?.[0]?.text ?? "";
      if (churn && text.includes("is not an indexed document")) {
        out.gone++;
        for (const id of args.doc_ids ?? [args.doc_id]) known.delete(id);
      } else {
        error = `${tool}: is_error ${JSON.stringify(args)}: ${text.slice(0, 300)}`;
      }
    } else if (!error && tool === "search") {
      out.searches++;
      if (result.structuredContent.indexing) out.whileEmbedding++;
      for (const hit of result.structuredContent.results) if (!known.has(hit.doc_id)) known.set(hit.doc_id, hit.path.includes("churn/"));
    }
    if (error) out.errors.push(error);
  }
  await session.close();
  return out;
}

const results = await Promise.all([...Array(clients).keys()].map(client));
console.log(JSON.stringify(results));
"""


def ts_load(url: str, args: argparse.Namespace, stats: Stats) -> None:
    """The load from `args.clients` TypeScript-SDK clients in one Node process (search, read, grep, outline)."""
    from ts_sdk import ts_script

    script = ts_script("linkly-load.mjs", TS_CLIENTS)
    if script is None:
        raise RuntimeError("--ts needs node and npm")
    mix = json.dumps({"queries": QUERIES, "patterns": GREP_PATTERNS})
    completed = subprocess.run(
        ["node", str(script), url, str(args.clients), str(args.calls), str(args.seed), str(args.budget), mix],
        capture_output=True, text=True, timeout=args.budget + 120,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"the TypeScript clients failed: {completed.stderr[-2000:]}")
    for result in json.loads(completed.stdout.strip().splitlines()[-1]):
        stats.calls += result["calls"]
        stats.gone += result["gone"]
        stats.searches_answered += result["searches"]
        stats.searches_while_embedding += result["whileEmbedding"]
        for tool, seconds in result["latencies"].items():
            stats.latencies[tool].extend(seconds)
        stats.greps += len(result["latencies"].get("grep", []))
        for error in result["errors"]:
            stats.errors.append(error)
            stats.grep_refused += error.startswith("grep:") and "took longer than" in error


class Writer(threading.Thread):
    """Creates, edits and deletes files under `churn/` (and edits one copied note) until stopped."""

    def __init__(self, library: Path, seed: int, pace_s: float) -> None:
        super().__init__(daemon=True)
        self.library = library
        self.rng = random.Random(seed)
        self.pace_s = pace_s
        self.stopped = threading.Event()
        self.changes = 0
        self.error: str | None = None

    def run(self) -> None:
        churn = self.library / "churn"
        edited = self.library / "rust-book" / "ch04-03-slices.md"
        try:
            while not self.stopped.is_set():
                present = sorted(churn.glob("*.md"))
                action = self.rng.choice(["create", "create", "edit", "delete", "edit-note"])
                if action == "create" or (not present and action != "edit-note"):
                    number = self.rng.randrange(10**6)
                    body = "\n".join(f"Line {i}: zephyr churn note {number} about ownership {i}." for i in range(self.rng.randint(3, 60)))
                    (churn / f"note-{number}.md").write_text(f"# Churn note {number}\n\n## Part\n\n{body}\n", encoding="utf-8")
                elif action == "edit":
                    with self.rng.choice(present).open("a", encoding="utf-8") as handle:
                        handle.write(f"\nEdited: zephyr churn {self.rng.random()}\n")
                elif action == "delete":
                    self.rng.choice(present).unlink()
                else:
                    with edited.open("a", encoding="utf-8") as handle:
                        handle.write(f"\nA churn line {self.rng.random()}.\n")
                self.changes += 1
                self.stopped.wait(self.pace_s)
        except Exception as exc:
            self.error = f"{type(exc).__name__}: {exc}"


def lsp_loop(env: dict[str, str], data_dir: Path, library: Path, stop: threading.Event, result: dict) -> None:
    """A linkly-ls over the same data dir (a reader beside the server), queried in a loop."""

    async def run() -> None:
        from lsprotocol import types
        from pytest_lsp import ClientServerConfig, client_capabilities

        config = ClientServerConfig(server_command=[sys.executable, "-m", "linkly_ls"], server_env=env)
        client = await config.start()
        client.set_configuration({"embeddingModel": "none", "mcp": {"enabled": False}}, section="linkly")
        await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[],
            initialization_options={"dataDir": str(data_dir), "mcp": {"enabled": False},
                                    "libraries": [{"name": "load", "paths": [str(library)]}]},
        ))
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                status = await client.protocol.send_request_async("linkly/status", {})
                if not getattr(status, "indexing", False):
                    break
                await asyncio.sleep(0.2)
            rng = random.Random(7)
            while not stop.is_set():
                query = rng.choice(["ownership", "firewall", "path", "struct", "enum", "logging"])
                started = time.perf_counter()
                try:
                    symbols = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
                    result["latencies"].append(time.perf_counter() - started)
                    result["calls"] += 1
                    if symbols:
                        uri = symbols[0].location.uri
                        started = time.perf_counter()
                        answer = await client.protocol.send_request_async("linkly/read", {"uri": uri, "limit": 5})
                        result["latencies"].append(time.perf_counter() - started)
                        result["calls"] += 1
                        if answer is None:
                            result["errors"].append(f"linkly/read {uri}: empty answer")
                except Exception as exc:
                    result["calls"] += 1
                    message = str(exc)
                    if "churn" not in message:  # a symbol of a file the writer just deleted
                        result["errors"].append(f"lsp {type(exc).__name__}: {message[:200]}")
                await asyncio.sleep(0.01)
        finally:
            await client.shutdown_session()
            await client.stop()

    try:
        asyncio.run(run())
    except Exception as exc:
        result["errors"].append(f"lsp client failed: {type(exc).__name__}: {exc}")


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50": 0.0, "p95": 0.0, "p99": 0.0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    return {"p50": round(at(0.50), 1), "p95": round(at(0.95), 1), "p99": round(at(0.99), 1)}


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="linkly-load-", dir=args.workdir))
    library, data_dir, config = build_home(root, args.hybrid)
    documents = sum(1 for path in library.rglob("*") if path.is_file())
    env = {**os.environ, "LINKLY_CONFIG": str(config), "LINKLY_DATA_DIR": str(data_dir), "PYTHONUNBUFFERED": "1"}
    env.pop("LINKLY_MCP_TOKEN", None)
    server = Server(env, root)
    stats = Stats()
    writer = Writer(library, args.seed, args.change_pace)
    lsp_result: dict[str, Any] = {"calls": 0, "errors": [], "latencies": []}
    lsp_stop = threading.Event()
    lsp_thread = None
    try:
        url = server.wait_listening()

        async def prepare() -> None:
            from contextlib import AsyncExitStack

            async with AsyncExitStack() as stack:
                await wait_indexed(await open_session(url, stack), documents)

        asyncio.run(prepare())
        coverage_before = asyncio.run(vector_coverage(url))
        batches_before = len(server.batches())
        if args.lsp:
            lsp_thread = threading.Thread(target=lsp_loop, args=(env, data_dir, library, lsp_stop, lsp_result), daemon=True)
            lsp_thread.start()
        writer.start()
        started = time.monotonic()

        async def load() -> None:
            stop_at = time.monotonic() + args.budget
            await asyncio.gather(*(client(n, url, args.calls, args.seed, stats, stop_at) for n in range(args.clients)))

        if args.ts:
            ts_load(url, args, stats)
        else:
            asyncio.run(load())
        elapsed = time.monotonic() - started
        writer.stopped.set()
        writer.join(10)
        lsp_stop.set()
        if lsp_thread:
            lsp_thread.join(60)
        coverage_after = asyncio.run(vector_coverage(url))
        time.sleep(2.0)  # the watcher's last batch
        batches = server.batches()[batches_before:]
        files_in_batches = sum(int(m.group(1)) + int(m.group(2)) for line in batches
                               if (m := re.search(r"(\d+) indexed, \d+ unchanged, \d+ failed, (\d+) removed", line)))
        if writer.error:
            stats.errors.append(f"writer: {writer.error}")
        if server.process.poll() is not None:
            stats.errors.append(f"server died: {''.join(server.stderr)[-1000:]}")
        everything = [value for values in stats.latencies.values() for value in values]
        summary = {
            "clients": args.clients,
            "calls_per_client": args.calls,
            "total_calls": stats.calls,
            "errors": len(stats.errors) + len(lsp_result["errors"]),
            "first_errors": (stats.errors + lsp_result["errors"])[:10],
            "seconds": round(elapsed, 1),
            "calls_per_s": round(stats.calls / elapsed, 1) if elapsed else 0.0,
            "latency_ms": {"overall": percentiles(everything),
                           **{tool: {**percentiles(values), "calls": len(values)} for tool, values in sorted(stats.latencies.items())}},
            "deleted_doc_answers": stats.gone,
            "greps": stats.greps,
            "grep_refused": stats.grep_refused,
            "vector_coverage": {"before": coverage_before, "after": coverage_after},
            "searches_while_embedding": stats.searches_while_embedding,
            "searches_answered": stats.searches_answered,
            "file_changes": writer.changes,
            "reindex_batches": len(batches),
            "files_reindexed": files_in_batches,
            "lsp": {"calls": lsp_result["calls"], "errors": len(lsp_result["errors"]),
                    "latency_ms": percentiles(lsp_result["latencies"])} if args.lsp else None,
            "hybrid": args.hybrid,
            "clients_sdk": "typescript" if args.ts else "python",
        }
    finally:
        writer.stopped.set()
        lsp_stop.set()
        code = server.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    if code not in (0, None):
        summary["errors"] += 1
        summary["first_errors"].append(f"server exit code {code}")
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--calls", type=int, default=1000, help="calls per client")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--change-pace", type=float, default=0.25, help="seconds between file changes")
    parser.add_argument("--budget", type=float, default=1800, help="give up after this many seconds")
    parser.add_argument("--lsp", action="store_true", help="also query a linkly-ls over the same data dir")
    parser.add_argument("--hybrid", action="store_true", help="bundled embedding model (default: none)")
    parser.add_argument("--ts", action="store_true",
                        help="TypeScript-SDK clients in Node (search, read, grep, outline) instead of Python-SDK ones")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    summary = run(args)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"clients {summary['clients']} x {summary['calls_per_client']} calls: {summary['total_calls']} calls "
              f"in {summary['seconds']} s = {summary['calls_per_s']} calls/s; errors {summary['errors']}")
        for error in summary["first_errors"]:
            print(f"  error: {error}")
        print(f"{'tool':15} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
        for tool, figures in summary["latency_ms"].items():
            print(f"{tool:15} {figures.get('calls', summary['total_calls']):>6} {figures['p50']:>8} {figures['p95']:>8} {figures['p99']:>8}")
        print(f"answers 'not an indexed document' for churn files deleted meanwhile: {summary['deleted_doc_answers']}")
        print(f"greps refused for their time budget: {summary['grep_refused']} of {summary['greps']}")
        if summary["hybrid"]:
            coverage = summary["vector_coverage"]
            print(f"vector coverage of the library: {coverage['before']} before the load, {coverage['after']} after; "
                  f"searches answered while vectors were computed: {summary['searches_while_embedding']} "
                  f"of {summary['searches_answered']}")
        print(f"file changes {summary['file_changes']}; watcher re-index batches {summary['reindex_batches']} "
              f"({summary['files_reindexed']} files indexed or removed)")
        if summary["lsp"]:
            print(f"lsp: {summary['lsp']}")
    return 1 if summary["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
