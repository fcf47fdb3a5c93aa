#!/usr/bin/env python3
"""Freshness: a file saved in a watched library -> found by search, as a user sees it.

    /work/venv/bin/python bench/freshness.py                   # `linkly serve`, MCP search, 50 saves
    /work/venv/bin/python bench/freshness.py --via lsp         # linkly-ls, workspace/symbol
    /work/venv/bin/python bench/freshness.py --via reader      # `linkly serve` writes, another process searches
    /work/venv/bin/python bench/freshness.py --saves 20 --no-vectors

A library of a few corpus files (Markdown, text, HTML, a PDF) is copied into a
temporary folder and indexed by a running watcher: `linkly serve` (MCP over
HTTP, the server's own watcher), or `linkly-ls` with the library as its
workspace folder. Then, `--saves` times, one Markdown file gets a new unique
word and is saved, alternately as editors do (written to a temporary file
beside it, then renamed over it) and in place; the search is polled through
the client's own path (MCP `search` tool call, LSP `workspace/symbol`, or the
core `search` tool on the same index from this process while `linkly serve`
writes) until the saved file is among the hits. Prints p50/p95/max of
save -> found.
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
import statistics
import string
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_client import LspProcess, initialize_params  # noqa: E402
from figures import percentile  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
#: ../shared/corpus beside the repository (or beside the folder holding this working copy)
CORPUS = next((c for c in (REPO.parent / "shared/corpus", REPO.parent.parent / "shared/corpus") if c.is_dir()),
              REPO.parent / "shared/corpus")
BIN = Path(sys.executable).parent
SOURCES = [
    "notes/learning-rust/ch03-01-variables-and-mutability.md",
    "notes/learning-rust/ch04-02-references-and-borrowing.md",
    "notes/learning-rust/ch06-02-match.md",
    "notes/learning-rust/ch01-02-hello-world.md",
    "web/debian-handbook/en-US/sect.backup.html",
    "web/debian-handbook/en-US/sect.network-config.html",
]
TARGETS = 4  # Markdown files the saves rotate over
POLL_S = 0.02
FOUND_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_home(root: Path, corpus: Path, vectors: bool) -> tuple[Path, Path, Path]:
    library, data_dir, config = root / "library", root / "data", root / "config.toml"
    library.mkdir(parents=True)
    for relative in SOURCES:
        source = corpus / relative
        if source.exists():
            shutil.copy2(source, library / source.name)
    for index in range(TARGETS):
        (library / f"note-{index}.md").write_text(f"# Note {index}\n\nA note that will be edited.\n", encoding="utf-8")
    model = "bundled" if vectors else "none"
    config.write_text(
        f'[embedding]\nmodel = "{model}"\n\n'
        f'[[library]]\nname = "fresh"\npaths = [{json.dumps(str(library))}]\n',
        encoding="utf-8",
    )
    return library, data_dir, config


def environment(data_dir: Path, config: Path, code: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["LINKLY_DATA_DIR"] = str(data_dir)
    env["LINKLY_CONFIG"] = str(config)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH", "")]))
    return env


def unique_word(rng: random.Random) -> str:
    return "fresh" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10))


def save(path: Path, word: str, atomic: bool) -> None:
    """Append a paragraph with `word`: via a temporary file renamed over `path`, or in place."""
    text = path.read_text(encoding="utf-8") + f"\nA saved paragraph mentions {word} here.\n"
    if atomic:
        temporary = path.with_name(f".{path.name}.swp")
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    else:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)


class Serve:
    """`linkly serve` on a free port; its stdout says where it listens."""

    def __init__(self, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            [str(BIN / "linkly"), "serve", "--port", str(free_port())],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )
        self.lines: list[str] = []
        for stream in (self.process.stdout, self.process.stderr):
            threading.Thread(target=lambda s=stream: self.lines.extend(s), daemon=True).start()

    def url(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if match := re.match(r"MCP server listening on (\S+)", line):
                    return match.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError(f"linkly serve did not start: {''.join(self.lines)[-2000:]}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(5)


#: (path, snippet) of every hit for a query
Finder = Callable[[str], Awaitable[list[tuple[str, str]]]]


def found(hits: list[tuple[str, str]], path: Path, word: str) -> bool:
    """The file is a hit and its snippet shows the word (hybrid search also returns neighbours by meaning)."""
    return any(hit_path == str(path) and word in snippet.lower() for hit_path, snippet in hits)


async def measure(library: Path, find: Finder, saves: int, seed: int) -> list[tuple[str, float]]:
    """(how it was saved, seconds from save to found) for every save."""
    rng = random.Random(seed)
    targets = sorted(library.glob("note-*.md"))
    timings: list[tuple[str, float]] = []
    for number in range(saves):
        target = targets[number % len(targets)]
        word = unique_word(rng)
        atomic = number % 2 == 0
        await asyncio.to_thread(save, target, word, atomic)
        saved = time.perf_counter()
        while not found(await find(word), target, word):
            if time.perf_counter() - saved > FOUND_TIMEOUT_S:
                raise RuntimeError(f"{target.name} not found by {word!r} within {FOUND_TIMEOUT_S} s")
            await asyncio.sleep(POLL_S)
        timings.append(("rename" if atomic else "in place", time.perf_counter() - saved))
        await asyncio.sleep(rng.uniform(0.2, 0.4))
    return timings


async def wait_until(find: Finder, word: str, path: Path, timeout: float = 180.0) -> None:
    deadline = time.monotonic() + timeout
    while not found(await find(word), path, word):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the library was not indexed within {timeout} s")
        await asyncio.sleep(0.2)


async def via_mcp(library: Path, env: dict[str, str], saves: int, seed: int) -> list[tuple[str, float]]:
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    server = Serve(env)
    try:
        url = server.url()
        async with AsyncExitStack() as stack:
            http = await stack.enter_async_context(create_mcp_http_client())
            read, write, *_ = await stack.enter_async_context(streamable_http_client(url, http_client=http))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()

            async def find(word: str) -> list[tuple[str, str]]:
                result = await session.call_tool("search", {"query": word, "limit": 5})
                hits = (result.structured_content or {}).get("results", [])
                return [(hit["path"], hit["snippet"]) for hit in hits]

            await wait_until(find, "edited", library / "note-0.md")
            return await measure(library, find, saves, seed)
    finally:
        server.stop()


async def via_reader(library: Path, env: dict[str, str], saves: int, seed: int) -> list[tuple[str, float]]:
    """`linkly serve` keeps the index current; this process searches the same index, as `linkly search` would."""
    os.environ.update({key: env[key] for key in ("LINKLY_DATA_DIR", "LINKLY_CONFIG")})
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.tools import call_tool

    server = Serve(env)
    engine = None
    try:
        server.url()
        engine = Engine()

        async def find(word: str) -> list[tuple[str, str]]:
            result = call_tool(engine, "search", {"query": word, "limit": 5})
            return [(hit.path, hit.snippet) for hit in result.results]

        await wait_until(find, "edited", library / "note-0.md")
        return await measure(library, find, saves, seed)
    finally:
        if engine is not None:
            engine.close()
        server.stop()


async def via_lsp(library: Path, env: dict[str, str], saves: int, seed: int) -> list[tuple[str, float]]:
    server = LspProcess([str(BIN / "linkly-ls")], env)
    try:
        server.wait(server.request("initialize", initialize_params(library, {"mcp": {"enabled": False}})))
        server.notify("initialized", {})

        async def find(word: str) -> list[tuple[str, str]]:
            answer = await asyncio.to_thread(server.wait, server.request("workspace/symbol", {"query": word}))
            symbols = answer.body.get("result") or []
            return [(symbol["containerName"].split(" · ", 2)[-1], symbol["name"]) for symbol in symbols]

        await wait_until(find, "edited", library / "note-0.md")
        return await measure(library, find, saves, seed)
    finally:
        server.close()


def report(timings: list[tuple[str, float]]) -> None:
    groups: dict[str, list[float]] = {"all": [seconds for _, seconds in timings]}
    for kind, seconds in timings:
        groups.setdefault(kind, []).append(seconds)
    for name, values in groups.items():
        print(
            f"  {name:<9} n={len(values):<3} p50 {statistics.median(values):6.3f}  "
            f"p95 {percentile(values, 0.95):6.3f}  max {max(values):6.3f}  min {min(values):6.3f}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--via", choices=["mcp", "lsp", "reader"], default="mcp")
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--no-vectors", dest="vectors", action="store_false", help='[embedding] model = "none"')
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument(
        "--code", type=Path, default=REPO, help="run linkly_ls from this working copy (default: this one), to compare"
    )
    args = parser.parse_args()
    if args.saves < 1:
        parser.error("--saves must be at least 1")
    root = Path(tempfile.mkdtemp(prefix="linkly-freshness-"))
    try:
        library, data_dir, config = build_home(root, args.corpus, args.vectors)
        code = args.code.resolve()
        sys.path.insert(0, str(code))  # `--via reader` searches with this copy's core
        env = environment(data_dir, config, code)
        runner = {"mcp": via_mcp, "lsp": via_lsp, "reader": via_reader}[args.via]
        try:
            timings = asyncio.run(runner(library, env, args.saves, args.seed))
        except (RuntimeError, ExceptionGroup) as error:  # not found in time, or the server did not start
            while isinstance(error, ExceptionGroup):  # raised inside the MCP client's task group
                error = error.exceptions[0]
            print(f"freshness: {error}", file=sys.stderr)
            return 1
        print(f"linkly_ls from {code}")
        print(f"save -> found by search, via {args.via}, vectors {'on' if args.vectors else 'off'} (seconds):")
        report(timings)
    finally:
        if args.keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
