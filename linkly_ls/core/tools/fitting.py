"""Answers cut to a size by whole units: the lines of `read`, the matches of `grep`, the documents of `outline`.

A face with a size limit (the MCP server's `max_response_chars`) renders an
answer and, when it is too long, takes the result's first N units for the
largest N whose rendering fits. The shortened result is still a whole answer
of its tool: its `next_offset` points at the first unit left out, so an agent
that pages by it reads every line once. Cutting the rendered text instead
left JSON without `lines` or `next_offset`, and a client paging by
`next_offset` stopped in the middle of a document without an error.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Shortenable(Protocol):
    """A result made of units that can be shown in part."""

    #: what the units are: "lines", "matches", "documents"
    units: str

    def unit_count(self) -> int: ...

    def first_units(self, count: int) -> Any:
        """A copy holding the first `count` units, with its paging fields set for the rest."""
        ...

    def continuation(self, count: int) -> str:
        """How to ask for what a copy of the first `count` units leaves out."""
        ...


@runtime_checkable
class Foldable(Protocol):
    """A result that can be shown whole with less detail: an outline with its deeper levels collapsed,
    for a document whose whole tree is over the limit alone."""

    def foldings(self) -> Iterator[Any]:
        """Copies with less and less detail, the most detailed first."""
        ...

    def folding_note(self, limit: int, limit_name: str) -> str:
        """What such a copy says of itself."""
        ...


def fit(result: Shortenable, fits: Callable[[Any], bool]) -> tuple[Any, int] | None:
    """The result shortened to the most units for which `fits` holds, and that count; None when not even
    one unit fits (or the result has no unit to drop)."""
    best: tuple[Any, int] | None = None
    low, high = 1, result.unit_count() - 1
    while low <= high:  # the rendering grows with the units shown
        middle = (low + high) // 2
        candidate = result.first_units(middle)
        if fits(candidate):
            best, low = (candidate, middle), middle + 1
        else:
            high = middle - 1
    return best


def shortened_note(result: Shortenable, shown: int, limit: int, limit_name: str) -> str:
    """What a shortened answer says of itself, `result` being the whole one."""
    return (
        f"shortened to {shown} of {result.unit_count()} {result.units} to stay within this server's limit of "
        f"{limit:,} characters ({limit_name}); {result.continuation(shown)}"
    )
