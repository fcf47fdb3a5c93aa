"""Link requests through the real language server: definition, hover, references and `linkly.related`.

`linkly-ls` is spawned over stdio (`lsp_client.py`) on a data dir that holds
the notes folder beside filler (the 50k-chunk level of `search_build.py`);
the notes folder is its workspace folder. Once `linkly/status` says `ready`,
documents with links are opened (`didOpen`, as an editor does) and, one
request at a time, `textDocument/definition` and `textDocument/hover` are sent
on links of the open buffer (a sample, seeded), `textDocument/references` on
the first line, and `workspace/executeCommand linkly.related` for the
document. Each request is timed from write to answer; the server's CPU time
per request comes from /proc.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from figures import percentile
from lsp_client import LspProcess, RpcError, initialize_params
from lsp_start import process_cpu_s

from linkly_ls.core.extract.markdown_links import find_links

ANSWER_TIMEOUT_S = 120.0
READY_TIMEOUT_S = 600.0
#: how long `ready` must hold before timing starts
STEADY_S = 5.0
GOALS_MS = {"definition": 50.0, "hover": 50.0, "references": None, "related": 150.0}


@dataclass
class Timings:
    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    answered: int = 0  # non-empty answers

    def line(self, name: str) -> str:
        goal = GOALS_MS.get(name)
        p95 = percentile(self.wall_ms, 0.95)
        # /proc counts CPU in clock ticks (10 ms): a mean over many requests says more than a percentile
        cpu_mean = sum(self.cpu_ms) / len(self.cpu_ms) if self.cpu_ms else float("nan")
        verdict = "" if goal is None else (f"  goal p95 <= {goal:.0f} ms: " + ("met" if p95 <= goal else "NOT met"))
        return (
            f"{name:<11} n={len(self.wall_ms):<4} p50 {percentile(self.wall_ms, 0.5):6.1f} ms  p95 {p95:6.1f} ms  "
            f"max {max(self.wall_ms, default=float('nan')):6.1f} ms  server CPU mean {cpu_mean:5.1f} ms  "
            f"non-empty {self.answered}/{len(self.wall_ms)}{verdict}"
        )


def _utf16(text: str, column: int) -> int:
    return len(text[:column].encode("utf-16-le")) // 2


class LinkSession:
    """One language server over the index; requests timed one at a time."""

    def __init__(self, command: list[str], env: dict[str, str], workspace: Path, cwd: Path) -> None:
        self.server = LspProcess(command, env, cwd=cwd)
        self.timings: dict[str, Timings] = {name: Timings() for name in GOALS_MS}
        init = self.server.request("initialize", initialize_params(workspace, {"mcp": {"enabled": False}}))
        self.server.wait(init, ANSWER_TIMEOUT_S)
        self.server.notify("initialized", {})

    def wait_ready(self) -> tuple[float, float]:
        """Seconds until `linkly/status` has said `ready` for `STEADY_S` on end (the background
        re-index of every library, which starts a second after the index opens, is over), and the
        longest a status request waited for its answer meanwhile."""
        started = time.monotonic()
        slowest, ready_since = 0.0, None
        while time.monotonic() - started < READY_TIMEOUT_S:
            asked = time.monotonic()
            answer = self.server.wait(self.server.request("linkly/status", {}), READY_TIMEOUT_S).body.get("result") or {}
            slowest = max(slowest, time.monotonic() - asked)
            if answer.get("state") == "failed":
                raise RpcError(f"the server failed: {answer.get('error')}")
            if answer.get("state") != "ready":
                ready_since = None
            elif ready_since is None:
                ready_since = time.monotonic()
            elif time.monotonic() - ready_since >= STEADY_S:
                return ready_since - started, slowest
            time.sleep(0.5)
        raise RpcError(f"the server was not ready within {READY_TIMEOUT_S:.0f} s")

    def warm_up(self, path: Path, doc_id: str) -> None:
        """One untimed round on a document: the first `related` loads the embedding model."""
        saved = self.timings
        self.timings = {name: Timings() for name in GOALS_MS}
        try:
            self.document(path, doc_id, 1, random.Random(0))
        finally:
            self.timings = saved

    def timed(self, name: str, method: str, params: dict) -> object:
        pid = self.server.process.pid
        cpu = process_cpu_s(pid)
        started = time.perf_counter()
        answer = self.server.wait(self.server.request(method, params), ANSWER_TIMEOUT_S)
        wall = (answer.arrived - started) * 1000
        body = answer.body
        if "error" in body:
            raise RpcError(f"{method}: {body['error'].get('message')}")
        timing = self.timings[name]
        timing.wall_ms.append(wall)
        timing.cpu_ms.append((process_cpu_s(pid) - cpu) * 1000)
        result = body.get("result")
        timing.answered += bool(result)
        return result

    def document(self, path: Path, doc_id: str, links_per_document: int, rng: random.Random) -> None:
        """Open one document and time the link requests on it."""
        text = path.read_text(encoding="utf-8", errors="replace")
        uri = path.resolve().as_uri()
        self.server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "markdown", "version": 1, "text": text}})
        lines = text.split("\n")
        links = find_links(lines)
        for link in rng.sample(links, min(links_per_document, len(links))):
            line = lines[link.line - 1]
            position = {"line": link.line - 1, "character": _utf16(line, min(link.start + 1, len(line)))}
            params = {"textDocument": {"uri": uri}, "position": position}
            self.timed("definition", "textDocument/definition", params)
            self.timed("hover", "textDocument/hover", params)
        references = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}, "context": {"includeDeclaration": False}}
        self.timed("references", "textDocument/references", references)
        self.timed("related", "workspace/executeCommand", {"command": "linkly.related", "arguments": [{"doc_id": doc_id}]})
        self.server.notify("textDocument/didClose", {"textDocument": {"uri": uri}})

    def cpu_s(self) -> float:
        return process_cpu_s(self.server.process.pid)

    def close(self) -> None:
        self.server.close()
