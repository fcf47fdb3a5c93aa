"""How an extraction worker's death is told, and what a run remembers of its workers' deaths.

A worker's death is put down to its file only when a second worker dies on it
too (`workers.py`); here are the errors a file gets for it, and the errors
earlier versions recorded after a single death, whose files are read again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from linkly_ls.core.indexing.workers import TaskOutcome

#: the errors earlier versions marked a file with after one worker had died on it
_ONE_DEATH_ERRORS = re.compile(
    r"the extractor process died while reading this file|the extractor crashed \(signal \d+\); the file is probably malformed"
)


def death_reason(signal_number: int | None, twice: bool = False) -> str:
    """How a worker ended (`signal_number`: the signal that killed it, if one did); `twice`: as the
    error of the file on which two workers ended so."""
    if signal_number is None:
        return "the extractor process died" + (" twice while reading this file" if twice else "")
    if twice:
        return f"the extractor crashed (signal {signal_number}) twice on this file; the file is probably malformed"
    return f"the extractor crashed (signal {signal_number})"


def marked_after_one_death(error: str) -> bool:
    """An error an earlier version recorded after a single worker death, which may not have been the
    file's doing (the out-of-memory killer, a signal): such a file is read again once, as an
    unchanged failed file otherwise is not; the error it then gets, if any, is never this one."""
    return _ONE_DEATH_ERRORS.fullmatch(error) is not None


@dataclass
class Deaths:
    """A run's worker deaths: the tasks that killed one worker (each is read once more by a fresh one),
    the deaths since the last answer, and the outcomes held back until some worker answers."""

    retried: set[Any] = field(default_factory=set)
    in_a_row: int = 0
    answered: bool = False
    held: list[tuple[TaskOutcome, int]] = field(default_factory=list)
    last_reason: str = ""
