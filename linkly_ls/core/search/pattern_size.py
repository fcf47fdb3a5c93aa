"""How large a `grep` pattern grows when the regex engine compiles it.

The engine compiles a counted repeat `x{n}` by copying `x` n times, about 250
bytes a copy: `a{99999999}` asked for 24 GB before a single character was
matched, and `((a{100}){100}){1000}`, 21 characters, for 2.9 GB. The CPU
budget that stops a runaway match (`grep_lines.MatchBudget`) starts only after
compiling, so a pattern is measured from its text first and refused above
`MAX_COPIES`. The measure is an upper bound: a repeat's largest count (its
lower one when it has no upper) times the size of what it repeats, nested
groups multiplied, everything else one each.
"""

from __future__ import annotations

import re

#: the most copies of a pattern's parts compiling may make (about 25 MB and 0.03 s)
MAX_COPIES = 100_000
_COUNTED = re.compile(r"\{(\d*)(?:,(\d*))?\}")
#: escapes followed by a braced name or number (`\p{Greek}`), whose braces are no repeat
_BRACED_ESCAPES = frozenset("pPNxuU")


def expanded_size(pattern: str) -> int:
    """An upper bound of how many parts compiling `pattern` makes, counted repeats expanded."""
    groups: list[list[int]] = [[0, 0]]  # for each open group: [its size so far, the size of its last part]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "(":
            groups.append([0, 0])
            index += 1
            continue
        if char == ")" and len(groups) > 1:
            _add(groups, max(1, groups.pop()[0]))
            index += 1
            continue
        counted = _COUNTED.match(pattern, index) if char == "{" else None
        if counted and (counted.group(1) or counted.group(2)):
            count = max(int(counted.group(1) or 0), int(counted.group(2) or 0), 1)
            group = groups[-1]
            group[0] += group[1] * (count - 1)
            group[1] *= count
            index = counted.end()
            continue
        if char in "|*+?":  # operators, no part of their own
            index += 1
            continue
        index = _escape_end(pattern, index) if char == "\\" else _set_end(pattern, index) if char == "[" else index + 1
        _add(groups, 1)
    while len(groups) > 1:  # an unclosed group: the engine refuses it, the bound still holds
        _add(groups, max(1, groups.pop()[0]))
    return groups[0][0]


def _add(groups: list[list[int]], size: int) -> None:
    groups[-1][0] += size
    groups[-1][1] = size


def _escape_end(pattern: str, index: int) -> int:
    if pattern[index + 1 : index + 2] in _BRACED_ESCAPES and pattern.startswith("{", index + 2):
        closing = pattern.find("}", index + 3)
        return len(pattern) if closing == -1 else closing + 1
    return index + 2


def _set_end(pattern: str, index: int) -> int:
    """The index after the set that opens at `index` (its end of text when it never closes)."""
    position = index + 1
    if pattern.startswith("^", position):
        position += 1
    if pattern.startswith("]", position):  # a leading `]` is a member
        position += 1
    while position < len(pattern):
        if pattern[position] == "\\":
            position += 2
        elif pattern.startswith("[:", position) and ":]" in pattern[position + 2 :]:
            position = pattern.index(":]", position + 2) + 2
        elif pattern[position] == "]":
            return position + 1
        else:
            position += 1
    return len(pattern)
