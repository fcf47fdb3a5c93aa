"""Patterns read against a page's layout: `grep` runs unanchored patterns over a document's lines joined
by newlines, and a phrase a PDF broke across two lines, indented, or set with two spaces between its
words must still match (`across_line_breaks`); a pattern anchored by `^` or `$` is matched line by line
instead (`has_anchor`, which tells a real anchor from an escaped `\\$` or a set's `^`).
"""

from __future__ import annotations

import re

from linkly_ls.core.search.analysis import ACCENT_FOLDS, CJK_RUN
from linkly_ls.core.search.grep_patterns import SPECIAL_CHARS

_BLANK = "[ \\t\\xa0]"
#: what a space of a pattern matches across line breaks: blanks holding at most one newline, at least one
#: character; possessive (taken whole, never given back), so that a long gap costs one pass, not its square
SPACE_RUN = f"(?:{_BLANK}++\\n?+{_BLANK}*+|\\n{_BLANK}*+)"
#: the same, giving characters back, before a part of the pattern that may match blanks too (`a \\s`, `a (b)`)
SPACE_RUN_YIELDING = f"(?:{_BLANK}+(?:\\n{_BLANK}*)?|\\n{_BLANK}*)"
#: a space the pattern starts with: the blank on the line just before what follows (` memory` is on the line
#: of "memory"); one character, as a match is tried at every blank of the text (a run there cost 10x)
LEADING_BLANKS = _BLANK
#: a quantified space, or one inside a group (which a quantifier may repeat): one character, as grep reads it
ONE_SPACE = "[ \\n]"
_RUNS = (SPACE_RUN, SPACE_RUN_YIELDING, LEADING_BLANKS)
#: what may fall between two CJK characters of a pattern: a line break and the blanks around it
CJK_BREAK = f"(?:{_BLANK}*+\\n{_BLANK}*+)?+"


def has_anchor(pattern: str) -> bool:
    """True when the pattern holds a `^`, `$`, `\\A` or `\\Z` that anchors: not an escaped `\\$` (a shell
    prompt in a manual) nor a `^` or `$` inside a set (`[^x]`). A set this cannot read counts as one."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            if pattern[index + 1 : index + 2] in ("A", "Z"):
                return True
            index += 2
        elif char == "[":
            end = _set_end(pattern, index)
            if end is None:
                return True
            index = end + 1
        elif char in "^$":
            return True
        else:
            index += 1
    return False


def across_line_breaks(pattern: str) -> str | None:
    """The pattern with its spaces matching the way text is laid out, for a run over newline-joined lines.

    A space (or `\\ `, or several side by side) matches a run of spaces and tabs holding at
    most one line break (`SPACE_RUN`): a phrase matches where a PDF broke it across two
    lines, where the next line is indented, and where justified text put two spaces between
    its words; a blank line between them still stops it. A space the pattern starts with
    matches the blank just before what follows, on its line (`LEADING_BLANKS`). A quantified space (`a +b`), a space in a
    group or in a set match a newline as one more character. Between two Chinese or Japanese characters
    side by side in the pattern, a line break (with the spaces around it) may fall: CJK
    text has no spaces to break at.

    None when the pattern's spaces cannot be told from its text: verbose mode (`(?x)`, where a space is
    no character), nested sets (`[[:space:]]`, set operations) or a set opened with `]`.
    """
    if "(?" in pattern and re.search(r"\(\?[a-zA-Z]*x", pattern):
        return None
    out: list[str] = []
    index = depth = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and pattern[index + 1 : index + 2] == " ":
            _add_space(out, pattern, index + 2, depth)
            index += 2
        elif char == "\\" and index + 1 < len(pattern):
            out.append(pattern[index : index + 2])
            index += 2
        elif char == "[":
            end = _set_end(pattern, index)
            if end is None:
                return None
            members = pattern[index:end]
            out.append(members + "\\n]" if " " in members else members + "]")
            index = end + 1
        elif char == " ":
            _add_space(out, pattern, index + 1, depth)
            index += 1
        else:
            depth += 1 if char == "(" else -1 if char == ")" else 0
            joined = _is_cjk(char) and index + 1 < len(pattern) and _is_cjk(pattern[index + 1])
            out.append(char + CJK_BREAK if joined else char)
            index += 1
    return "".join(out)


#: what a typed quote of a pattern also matches: typeset text has curly ones (`don’t`, “so”), a keyboard
#: types straight ones, and `don't` found nothing in a typeset book
TYPOGRAPHIC_QUOTES = {"'": "'‘’‚‛ʼ", '"': '"“”„‟'}


def with_typographic_quotes(pattern: str) -> str:
    """The pattern with each straight quote (`'`, `"`, escaped or not, in a set or not) matching its curly
    forms too. Unchanged when it holds a set this cannot read (nested sets)."""
    if "'" not in pattern and '"' not in pattern:
        return pattern
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and pattern[index + 1 : index + 2] in TYPOGRAPHIC_QUOTES:
            char = pattern[index + 1]
            index += 1
        elif char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if char == "[":
            end = _set_end(pattern, index)
            if end is None:
                return pattern
            negated = pattern.startswith("^", index + 1)
            members = pattern[index + 1 + negated : end]
            # the curly forms lead the set: in place, `'` of `['-/]` would open a range from `ʼ` to `/`
            extra = "".join(forms[1:] for quote, forms in TYPOGRAPHIC_QUOTES.items() if quote in members)
            out.append(f"[{'^' if negated else ''}{extra}{members}]")
            index = end + 1
            continue
        out.append(f"[{TYPOGRAPHIC_QUOTES[char]}]" if char in TYPOGRAPHIC_QUOTES else char)
        index += 1
    return "".join(out)


def with_accented_letters(pattern: str) -> str:
    """The pattern with each plain Latin letter (outside sets, escapes and group syntax) matching its accented
    forms too, as search folds them (`lopez` finds `López`, `soren` finds `Søren`): for `case_insensitive`.
    Unchanged when it holds a set this cannot read."""
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            end = index + 2
            if pattern[index + 1 : index + 2] in ("p", "P", "N", "x", "u", "U") and pattern[end : end + 1] == "{":
                end = pattern.find("}", end) + 1 or len(pattern)
            out.append(pattern[index:end])
            index = end
        elif char == "[":
            end = _set_end(pattern, index)
            if end is None:
                return pattern
            out.append(pattern[index : end + 1])
            index = end + 1
        elif pattern.startswith("(?", index):  # flags, a group's name or a back-reference: no letters to widen
            closing = ")" if pattern.startswith("(?P=", index) else ">" if pattern.startswith("(?P<", index) else None
            if closing is not None:
                end = pattern.find(closing, index)
                end = len(pattern) - 1 if end < 0 else end
            else:
                end = next((at for at in range(index + 2, len(pattern)) if pattern[at] in ":)>=!"), len(pattern) - 1)
            out.append(pattern[index : end + 1])
            index = end + 1
        elif char == "{":  # a count
            end = pattern.find("}", index)
            end = index if end < 0 else end
            out.append(pattern[index : end + 1])
            index = end + 1
        else:
            forms = _ACCENTED.get(char.lower())
            out.append(f"[{char}{forms}]" if forms else char)
            index += 1
    return "".join(out)


def _accented_forms() -> dict[str, str]:
    """Each plain Latin letter -> its accented letters, upper and lower case, as `fold_accents` folds them."""
    forms: dict[str, str] = {}
    for code, base in ACCENT_FOLDS.items():
        forms[base.lower()] = forms.get(base.lower(), "") + chr(code)
    return forms


_ACCENTED = _accented_forms()


def _add_space(out: list[str], pattern: str, after: int, depth: int) -> None:
    """What a space of the pattern matches (see `across_line_breaks`). Spaces side by side are one run
    (each one a run, two could step over a blank line)."""
    if pattern[after : after + 1] in ("*", "+", "?", "{") or depth > 0:
        out.append(ONE_SPACE)  # a run of runs would backtrack exponentially over a long gap
    elif out and out[-1] in _RUNS:
        return
    elif not out:
        out.append(LEADING_BLANKS)
    else:
        follower = _after_spaces(pattern, after)
        plain = follower == "" or not (follower in SPECIAL_CHARS or follower.isspace())
        out.append(SPACE_RUN if plain else SPACE_RUN_YIELDING)


def _after_spaces(pattern: str, index: int) -> str:
    """The pattern's character after the spaces from `index` on (a quantified space is that character), or ""."""
    while index < len(pattern):
        width = 2 if pattern.startswith("\\ ", index) else 1 if pattern[index] == " " else 0
        if not width or pattern[index + width : index + width + 1] in ("*", "+", "?", "{"):
            return pattern[index]
        index += width
    return ""


def _is_cjk(char: str) -> bool:
    return CJK_RUN.fullmatch(char) is not None


def _set_end(pattern: str, index: int) -> int | None:
    """The index of the `]` that closes the set opened at `index`; None for sets this cannot read."""
    position = index + 1
    if pattern.startswith("^", position):
        position += 1
    if pattern.startswith("]", position):
        return None
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
        elif char == "[":
            return None
        elif char == "]":
            return position
        else:
            position += 1
    return None
