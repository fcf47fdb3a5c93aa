"""A remote's answers are held to the tools' output schemas before anything reads them."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from linkly_ls.core.remote import RemoteSet
from linkly_ls.core.remote.answers import MAX_REMOTE_TEXT, UnfitAnswer, check_answer
from linkly_ls.core.remote.client import RemoteError

GOOD_HIT = {"doc_id": "aaaaaaaaaaaa", "title": "Remote guide", "path": "/x/guide.md", "relevance": 0.9,
            "passage": {"start_line": 1, "end_line": 3}, "keywords": ["guide"], "library": "docs"}


class _Answering:
    """A remote client answering every call with `payload` (after `delay` seconds)."""

    def __init__(self, payload: Any, delay: float = 0.0) -> None:
        self.payload, self.delay = payload, delay

    def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        time.sleep(self.delay)
        return self.payload

    def close(self) -> None:
        pass


def test_an_answer_that_fits_the_contract_is_kept_as_it_is():
    payload = {"results": [GOOD_HIT], "total": 1, "mode": "keyword", "miss": False, "truncated": True, "_meta": {"now": "x"}}
    assert check_answer("search", payload) is payload


@pytest.mark.parametrize(
    "tool, payload, where",
    [
        ("search", {"results": [{**GOOD_HIT, "passage": [1, 2]}]}, "`results/0/passage`"),
        ("search", {"results": "none"}, "`results`"),
        ("search", {"results": [{**GOOD_HIT, "keywords": "abc"}]}, "`results/0/keywords`"),
        ("read", {"lines": [{"line": "one", "text": "x"}]}, "`lines/0/line`"),
        ("explore", {"document_count": "many"}, "`document_count`"),
        ("list_libraries", {"libraries": [{"name": "b", "paths": "abc"}]}, "`libraries/0/paths`"),
        ("search", ["not", "an", "object"], "not a JSON object"),
        ("search", {"results": [{**GOOD_HIT, "snippet": "x" * (MAX_REMOTE_TEXT + 1)}]}, "`results/0/snippet` holds"),
    ],
)
def test_an_answer_of_other_types_or_oversized_text_is_refused_saying_where(tool, payload, where):
    with pytest.raises(UnfitAnswer, match=where.replace("(", r"\(")):
        check_answer(tool, payload)


def test_an_answer_nested_beyond_reading_is_refused():
    node: dict[str, Any] = {"id": "1", "title": "t", "children": []}
    deepest = node
    for _ in range(3000):
        child = {"id": "1", "title": "t", "children": []}
        deepest["children"].append(child)
        deepest = child
    with pytest.raises(UnfitAnswer, match="nested too deeply"):
        check_answer("outline", {"documents": [{"doc_id": "a", "nodes": [node]}]})


def _remotes(**clients: Any) -> RemoteSet:
    remotes = RemoteSet([])
    remotes.clients.update(clients)
    return remotes


def test_a_single_remote_call_out_of_contract_is_a_remote_error():
    remotes = _remotes(evil=_Answering({"lines": "all of them"}))
    with pytest.raises(RemoteError, match="remote 'evil' answered `read` with `lines` of another type"):
        remotes.call("evil", "read", {"doc_id": "aaaaaaaaaaaa"})


_SLOW_REMOTE = """
import sys, time
from linkly_ls.core.remote import RemoteSet

class Silent:
    def call_tool(self, tool, arguments):
        time.sleep(30)
    def close(self):
        pass

remotes = RemoteSet([])
remotes.clients["slow"] = Silent()
print("asking", flush=True)
remotes.ask_all({"slow": ("search", {"query": "x"})}, local=lambda: time.sleep(30))
"""


def test_ctrl_c_during_a_merged_call_ends_it_without_waiting_for_a_silent_remote(tmp_path):
    """A pool's threads are joined at exit: Ctrl-C on a search over a suspended remote waited its whole timeout."""
    process = subprocess.Popen(
        [sys.executable, "-c", _SLOW_REMOTE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # as a terminal starts it: a suite run in the background (`scripts/test &`) passes SIGINT on ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout.readline().strip() == "asking"
    time.sleep(0.3)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    process.wait(timeout=20)
    assert time.monotonic() - started < 5 and "KeyboardInterrupt" in process.stderr.read()
