"""grep's budget counts the grepping thread's own CPU time: runaway patterns stop, waiting does not count."""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator

import pytest
import regex

from linkly_ls.core.errors import ToolError
from linkly_ls.core.search import grep_lines
from linkly_ls.core.search.grep_lines import MatchBudget, budgeted_finditer, find_matching_lines
from linkly_ls.core.store.line_cache import DocumentText

WORDS = "the quick brown fox der Hund le chat jumps over a lazy dog and then some more words".split()


def prose(lines: int) -> DocumentText:
    text = "\n".join(" ".join(WORDS[(n + k) % len(WORDS)] for k in range(12)) for n in range(lines))
    return DocumentText(text, (1.0, "h"))


@pytest.fixture
def busy_process() -> Iterator[None]:
    """Other threads of this process burning CPU: two outside the GIL (hashing), one holding it in turns."""
    stop = threading.Event()
    block = b"x" * (1 << 22)

    def hash_forever() -> None:
        while not stop.is_set():
            hashlib.sha256(block).digest()  # releases the GIL: the process's CPU clock runs ahead

    def spin_forever() -> None:
        while not stop.is_set():
            sum(range(1000))  # Python code: the grep waits for the GIL between matches

    threads = [threading.Thread(target=target, daemon=True) for target in (hash_forever, hash_forever, spin_forever)]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    yield
    stop.set()
    for thread in threads:
        thread.join()


def test_a_runaway_pattern_still_stops_with_the_same_error():
    document = DocumentText("x\n" + "a" * 3000 + "c\nend", (1.0, "h"))
    cpu = time.thread_time()  # what the budget counts: a busy machine stretches the wall time, not this
    with pytest.raises(ToolError, match=r"took longer than 1 s on this document and was stopped.*\(a\+\)\+"):
        find_matching_lines(document, r"(a|aa)+\d", False)
    assert 1.0 <= time.thread_time() - cpu < 2.5


@pytest.mark.parametrize("pattern", [r"(a+)+$", r"^(a|aa)+$", r"(a+)+b\.", r"(\w+\s?)+\d"])
def test_runaway_patterns_stop_on_every_path_while_other_threads_burn_cpu(pattern, busy_process, monkeypatch):
    """Anchored (one pass or line by line), with a literal suffix, unconfined: each stops at its budget."""
    monkeypatch.setattr(grep_lines, "TIME_BUDGET_S", 0.1)
    document = DocumentText("x\n" + "a" * 3000 + "c b.\n" + "word " * 2000 + "\nend", (1.0, "h"))
    cpu, started = time.thread_time(), time.monotonic()
    with pytest.raises(ToolError, match="took longer than"):
        find_matching_lines(document, pattern, False)
    assert time.thread_time() - cpu >= 0.1  # its own CPU time ran out, not the process's
    assert time.monotonic() - started < 10


def test_a_benign_grep_is_not_refused_while_other_threads_burn_cpu(busy_process, monkeypatch):
    """The process's CPU clock runs about three times faster than the grep's own, and the grep waits for
    the GIL between matches: a budget of wall or process time would stop it; its own CPU time does not."""
    document = prose(10_000)
    quiet = time.thread_time()
    expected = find_matching_lines(document, "the|der|le", False)
    own_cpu = time.thread_time() - quiet
    monkeypatch.setattr(grep_lines, "TIME_BUDGET_S", max(4 * own_cpu, 0.05))
    for pattern in ("the|der|le", r"\b(?:fox|Hund)\b", "^the", r"(?i)^(the|a)\s"):
        found = find_matching_lines(document, pattern, False)
        assert len(found) > 1000
    assert find_matching_lines(document, "the|der|le", False).start == expected.start


def test_an_iterator_timed_out_by_other_threads_goes_on_where_it_stood(monkeypatch):
    """An engine timeout with budget left resumes after the last match: every match, once, in order."""
    pattern = regex.compile(r"\b\w+\b|(?<=x)")
    text = "ab x cd  x" * 200
    real = pattern.finditer(text)
    calls = []

    class Flaky:
        """The first 39 iterators time out after 0-3 matches, as other threads' CPU time would make them."""

        def __init__(self, compiled):
            self.compiled = compiled
            self.pattern = compiled.pattern

        def finditer(self, text, position, timeout):
            calls.append(position)
            inner = self.compiled.finditer(text, position, timeout=timeout)
            if len(calls) < 40:
                for _ in range(len(calls) % 4):
                    yield next(inner)
                raise TimeoutError
            yield from inner

    found = [match.span() for match in budgeted_finditer(Flaky(pattern), text, MatchBudget(5.0))]
    assert found == [match.span() for match in real]
    assert len(calls) > 20


def test_the_budget_counts_this_threads_cpu_time_not_sleep():
    budget = MatchBudget(0.05)
    time.sleep(0.1)
    assert budget.remaining() > 0.04
    deadline = time.thread_time() + 0.06
    while time.thread_time() < deadline:
        pass
    with pytest.raises(TimeoutError):
        budget.remaining()
