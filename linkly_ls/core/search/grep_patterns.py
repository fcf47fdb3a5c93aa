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

Unanchored patterns run over the lines joined by newlines, their spaces read
as the page lays text out (`grep_layout.across_line_breaks`), while `.` stays
within a line, as in grep (`the.*file` ran from the first line's "the" to the
last "file" of the document). `is_confined`
tells when a pattern can match neither a space nor a newline and looks at
nothing around its match but word boundaries: its matches are then the same
in the newline-joined text, each inside one line. Such a pattern that starts
with a character class (`\\b[a-z]+\\.[a-z]+\\(`) makes the regex engine try a
match at almost every character, about 20 ns a character, while one that
starts with a literal is much cheaper: the engine skips to that character.
`literal_suffix` gives the part from the first plain literal on: every match
of the pattern holds a match of that suffix on the same line, so the lines
where the suffix matches are the only ones to search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


#: characters that make a pattern more than a plain literal (`#` only matters in verbose mode)
SPECIAL_CHARS = frozenset(".^$*+?{}[]\\|()#")
#: escapes that never match a newline: word boundaries, digits, word characters, non-space
_LINE_LOCAL_ESCAPES = frozenset("bBdwS")
#: escapes that can match a newline, and what they mean on a single line
_WITHOUT_NEWLINE = {"s": "[^\\S\\n]", "W": "[^\\w\\n]", "D": "[^\\d\\n]"}
_QUANTIFIER = re.compile(r"\{\d*(?:,\d*)?\}")
def is_literal(pattern: str) -> bool:
    """True for a non-empty pattern without any regex syntax: it matches its own text."""
    return bool(pattern) and not any(char in SPECIAL_CHARS for char in pattern)


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


@dataclass(frozen=True)
class _Item:
    """One top-level element of a pattern, with its quantifier."""

    text: str
    literal: bool  # a single character matched as itself, not quantified
    consumes: bool  # matches characters (not only a position, like `\\b`)


def is_confined(pattern: str) -> bool:
    """True when no match can hold a space or a newline, and nothing but `\\b` and `\\B` looks around it.

    Accepted: literal characters other than a space, escaped punctuation,
    `\\b \\B \\d \\w \\S`, sets of those (and ranges), negated sets holding
    `\\s`, `\\W` or `\\D`, groups `( )` and `(?: )`, `|` and quantifiers.
    Every match then lies inside one line, and is found there alike whether
    lines are joined by newlines or by spaces: `\\b` and `\\B` see a newline,
    a space and either end of the text the same way.
    """
    return _top_level(pattern) is not None


def literal_suffix(pattern: str) -> str | None:
    """The pattern from its first unquantified literal character on, when searching for it first pays, or None.

    Only for confined patterns (`is_confined`). None also when the pattern has
    a top-level `|`, no such literal, or nothing that matches characters
    before it (then the engine already skips to the literal).
    """
    branches = _top_level(pattern)
    if branches is None or len(branches) != 1:
        return None
    items = branches[0]
    for index, item in enumerate(items):
        if item.literal:
            if not any(before.consumes for before in items[:index]):
                return None
            return "".join(rest.text for rest in items[index:])
    return None


def _top_level(pattern: str) -> list[list[_Item]] | None:
    """The branches of a confined pattern, or None."""
    parsed = _sequence(pattern, 0)
    return parsed[0] if parsed is not None and parsed[1] == len(pattern) else None


def _sequence(pattern: str, index: int) -> tuple[list[list[_Item]], int] | None:
    """The `|`-separated branches of confined items from `index` to a `)` or the end, and where they stop."""
    branches: list[list[_Item]] = [[]]
    while index < len(pattern) and pattern[index] != ")":
        if pattern[index] == "|":
            branches.append([])
            index += 1
            continue
        atom = _atom(pattern, index)
        if atom is None:
            return None
        end, literal, consumes = atom
        quantified_end = _quantifier_end(pattern, end)
        if quantified_end is None:
            return None
        item = _Item(pattern[index:quantified_end], literal and quantified_end == end, consumes)
        branches[-1].append(item)
        index = quantified_end
    return branches, index


def _atom(pattern: str, index: int) -> tuple[int, bool, bool] | None:
    """(end, is a literal character, consumes characters) of the confined atom at `index`, or None."""
    char = pattern[index]
    if char == "\\":
        if index + 1 >= len(pattern):
            return None
        escaped = pattern[index + 1]
        if escaped in "bB":
            return index + 2, False, False
        if escaped in "dwS":
            return index + 2, False, True
        return (index + 2, True, True) if _is_escaped_punctuation(escaped) else None
    if char == "[":
        end = _confined_set_end(pattern, index)
        return None if end is None else (end, False, True)
    if char == "(":
        start = index + 3 if pattern.startswith("(?:", index) else index + 1
        if pattern.startswith("(?", index) and start == index + 1:
            return None
        inner = _sequence(pattern, start)
        if inner is None or inner[1] >= len(pattern):
            return None
        consumes = any(item.consumes for branch in inner[0] for item in branch)
        return inner[1] + 1, False, consumes
    if char in ".^$*+?{}|)" or _is_space_or_control(char):
        return None
    return index + 1, True, True


def _quantifier_end(pattern: str, index: int) -> int | None:
    """Where the quantifier (with its lazy or possessive suffix) at `index` ends; `index` if there is none."""
    if index >= len(pattern) or pattern[index] not in "*+?{":
        return index
    if pattern[index] == "{":
        quantifier = _QUANTIFIER.match(pattern, index)
        if quantifier is None:
            return None
        index = quantifier.end()
    else:
        index += 1
    if index < len(pattern) and pattern[index] in "?+":
        index += 1
    if index < len(pattern) and pattern[index] in "*+?{":
        return None
    return index


def _confined_set_end(pattern: str, index: int) -> int | None:
    """The index after the set at `index` when it matches neither a space nor a newline, else None.

    A set of literal characters, escaped punctuation, ranges between them and
    `\\d \\w \\S` cannot match either (both sort below every allowed
    character); a negated set cannot when it holds `\\s`, `\\W` or `\\D`.
    """
    position = index + 1
    negated = pattern.startswith("^", position)
    if negated:
        position += 1
    if pattern.startswith("]", position):
        return None
    excludes_space = False
    while position < len(pattern) and pattern[position] != "]":
        char = pattern[position]
        if char == "[" or _is_space_or_control(char):
            return None
        if char == "\\":
            escaped = pattern[position + 1 : position + 2]
            if escaped in ("s", "W", "D"):
                excludes_space = True
            elif escaped not in ("d", "w", "S") and not _is_escaped_punctuation(escaped):
                return None
            position += 2
            continue
        position += 1
    if position >= len(pattern) or excludes_space != negated:
        return None
    return position + 1


def _is_space_or_control(char: str) -> bool:
    return char <= " " or char in "\x7f\x85\u2028\u2029"


def _is_escaped_punctuation(char: str) -> bool:
    """True for the character after a backslash that makes it match itself, except a space."""
    return bool(char) and not (char.isalnum() or char == "_" or _is_space_or_control(char))
