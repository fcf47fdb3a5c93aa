"""What `grep` can tell from a pattern's text alone, to pick a faster but equivalent way to match.

`grep` matches patterns with `^`, `$`, `\\A` or `\\Z` against each line on its
own. Calling the regex engine once per line costs a few microseconds (most
of it the time-budget check), over half a second on a 140,000-line document.
When a pattern can never match a newline and never looks at text around its
match, every match in the newline-joined text lies inside one line and is
found exactly where a line-by-line search finds it, so one MULTILINE pass
over the whole text gives the same lines. `line_local_pattern` decides that
conservatively from the pattern's syntax: anything it does not know to be
safe sends the pattern back to the line-by-line search.
"""

from __future__ import annotations

import re

#: characters that make a pattern more than a plain literal (`#` only matters in verbose mode)
_SPECIAL = frozenset(".^$*+?{}[]\\|()#")
#: escapes that never match a newline: word boundaries, digits, word characters, non-space
_LINE_LOCAL_ESCAPES = frozenset("bBdwS")
#: escapes that can match a newline, and what they mean on a single line
_WITHOUT_NEWLINE = {"s": "[^\\S\\n]", "W": "[^\\w\\n]", "D": "[^\\d\\n]"}
_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")


def is_literal(pattern: str) -> bool:
    """True for a non-empty pattern without any regex syntax: it matches its own text."""
    return bool(pattern) and not any(char in _SPECIAL for char in pattern)


def line_local_pattern(pattern: str) -> str | None:
    """The pattern made safe for one MULTILINE pass over newline-joined lines, or None.

    Accepted: literal characters (no control characters), escaped punctuation,
    `\\b \\B \\d \\w \\S`, `.`, `^`, `$`, `|`, groups `( )` and `(?: )`,
    quantifiers `* + ?` and `{m,n}` (with their lazy/possessive suffixes), and
    character sets whose members are of the same kinds. A newline is taken out
    of what may match where that changes nothing on a single line: `\\s`,
    `\\W` and `\\D` become `[^\\S\\n]`, `[^\\w\\n]` and `[^\\d\\n]`, a
    negated set gets a newline added (and may then hold those three too).
    Everything else (lookarounds, inline flags, backreferences, `\\A`, `\\Z`,
    `\\p{..}`, POSIX classes, fuzzy matching, `\\s` inside a plain set)
    returns None.
    """
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char < " " or char in "\x7f\x85\u2028\u2029":
            return None
        if char == "\\":
            escape = _escape(pattern, index)
            if escape is None and pattern[index + 1 : index + 2] in _WITHOUT_NEWLINE:
                escape = _WITHOUT_NEWLINE[pattern[index + 1]]
            if escape is None:
                return None
            out.append(escape)
            index += 2
        elif char == "[":
            end, text = _character_set(pattern, index)
            if text is None:
                return None
            out.append(text)
            index = end
        elif char == "(":
            if pattern.startswith("(?", index) and not pattern.startswith("(?:", index):
                return None
            out.append(char)
            index += 1
        elif char == "{":
            quantifier = _QUANTIFIER.match(pattern, index)
            if quantifier is None:
                return None
            out.append(quantifier.group(0))
            index = quantifier.end()
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _escape(pattern: str, index: int) -> str | None:
    if index + 1 >= len(pattern):
        return None
    escaped = pattern[index + 1]
    if escaped.isalnum() or escaped == "_":
        return pattern[index : index + 2] if escaped in _LINE_LOCAL_ESCAPES else None
    if escaped < " " or escaped in "\x7f\x85\u2028\u2029":
        return None
    return pattern[index : index + 2]


def _character_set(pattern: str, index: int) -> tuple[int, str | None]:
    """(index after the set, the set's safe text or None) for the set that starts at `index`."""
    position = index + 1
    negated = pattern.startswith("^", position)
    if negated:
        position += 1
    if pattern.startswith("]", position):  # a leading `]` is a member; keep it simple and refuse
        return position, None
    members: list[str] = []
    while position < len(pattern) and pattern[position] != "]":
        char = pattern[position]
        if char == "[" or char < " " or char in "\x7f\x85\u2028\u2029":
            return position, None
        if char == "\\":
            escape = _escape(pattern, position)
            if escape is None and negated and pattern[position + 1 : position + 2] in _WITHOUT_NEWLINE:
                escape = pattern[position : position + 2]  # the set can no longer match a newline
            if escape is None:
                return position, None
            members.append(escape)
            position += 2
            continue
        members.append(char)
        position += 1
    if position >= len(pattern):
        return position, None
    head = "[^\\n" if negated else "["
    return position + 1, head + "".join(members) + "]"
