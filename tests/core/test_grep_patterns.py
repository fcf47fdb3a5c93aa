"""grep's faster paths find exactly the lines the straightforward matcher finds."""

import bisect

import pytest
import regex

from linkly_ls.core.line_cache import DocumentText
from linkly_ls.core.tools.grep import find_matching_lines
from linkly_ls.core.tools.grep_patterns import is_literal, line_local_pattern

LINES = [
    "Usage",
    "lm(formula, data = data.frame(x))",
    "  glm.fit(x, y) # the fit",
    "",
    "The quick brown",
    "fox jumps over the lazy dog",
    "Usage: see glm() and lm()",
    "café crème Straße ΣΊΣΥΦΟΣ € \U0001f600",
    "tab\there",
    "Examples",
    "",
    "the end; the END",
    "aaa aaa aaa",
    "[x] {y} (z) a+b a.b",
    "Usage",
]


def reference(lines: list[str], pattern: regex.Pattern) -> list[tuple[int, int]]:
    """The matcher these paths replace: per line when anchored, else over the space-joined text."""
    source = pattern.pattern
    if any(token in source for token in ("^", "$", "\\A", "\\Z")):
        return [(n, n) for n, line in enumerate(lines, start=1) if pattern.search(line)]
    text = " ".join(lines)
    starts, position = [], 0
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    matched: dict[int, int] = {}
    for found in pattern.finditer(text):
        if found.end() == found.start():
            continue
        first = bisect.bisect_right(starts, found.start())
        matched.setdefault(first, bisect.bisect_right(starts, max(found.end() - 1, found.start())))
    return list(matched.items())


PATTERNS = [
    "the", "The", "lm", "glm", "Usage", "zzz", "aaa", "a", " ", "fox jumps", "brown fox", "the end",
    r"\bthe\b", r"\b[a-z]+\.[a-z]+\(", r"\w+\(", r"[^a-z ]+", r"\s+", r"e\s+f", ".", "a*", "x|y|z",
    "^Usage", "^Usage$", "Usage$", "^", "$", "^$", r"^\s*$", "^[^a-z]", r"^\S+$", r"^the\b", "^.{5}$",
    r"\AUsage", r"Usage\Z", r"^(?=U)", r"(?<=^)U", "^[]x]", r"^[\s]", "^tab\there", r"^\w+$", "^(?:a+ )+",
    "d$", r"\)$", "^E|^U", r"^[a-c]+", "^caf", "ΣΊΣ", "σίσ", "STRASSE", "€", "\U0001f600", r"\[x\]", "{y}",
    "a+b", r"a\+b", "a.b", r"^\[", "^.*$", r"^(\w)\w*\1?", "^a{1,2}",
    r"^\s+\w", r"^\W", r"^\D+$", r"\s$", r"^[^\s]+$", r"^[\W]", r"^[^\W\d]+\s", r"^\w+\s+\w+$", r"\W$",
]


@pytest.mark.parametrize("line_index", [False, True], ids=["counting", "line-starts"])
@pytest.mark.parametrize("case_insensitive", [False, True])
@pytest.mark.parametrize("source", PATTERNS)
def test_same_lines_as_the_reference(source, case_insensitive, line_index):
    pattern = regex.compile(source, regex.V0 | (regex.IGNORECASE if case_insensitive else 0))
    document = DocumentText("\n".join(LINES), (1.0, "h"))
    if line_index:
        document.starts  # noqa: B018 - line numbers then come from the line starts
    found = find_matching_lines(document, pattern, case_insensitive)
    expected = reference(LINES, pattern)
    assert list(zip(found.first.tolist(), found.last.tolist())) == expected
    for match in found.page(0, 100):
        if match.start >= 0:
            assert document.line_numbers([match.start, match.last_char]) == [match.first, match.last]


def test_literals():
    assert is_literal("mahalanobis") and is_literal("two words") and is_literal("é€")
    assert not any(map(is_literal, ["", "a.b", "a+", "(a)", "a|b", "^a", "a$", "[a]", "a{2}", "\\d", "#"]))


@pytest.mark.parametrize(
    ("pattern", "rewritten"),
    [
        ("^Usage", "^Usage"),
        (r"^\w+\.\w+\(", r"^\w+\.\w+\("),
        ("^[^a-z]+$", "^[^\\na-z]+$"),
        (r"^[\d.]+$", r"^[\d.]+$"),
        ("^(?:ab){2,3}$", "^(?:ab){2,3}$"),
        (r"^\S+ \S+$", r"^\S+ \S+$"),
        (r"^\s*$", r"^[^\S\n]*$"),
        (r"^\W\D", r"^[^\w\n][^\d\n]"),
        (r"^[^\s,]+", r"^[^\n\s,]+"),
    ],
)
def test_line_local_patterns(pattern, rewritten):
    assert line_local_pattern(pattern) == rewritten


@pytest.mark.parametrize(
    "pattern",
    [r"^a\nb", r"\Aa", r"a\Z", "^(?=a)", "(?<=x)^", "(?s)^.", "^[]a]", r"^[\s]", r"^[\W]", r"^[a\D]",
     r"^(a)\1", "^[[:space:]]", r"^\p{L}", "^a{e<=1}", "^(?:abc){e<=1}", "^a\tb", r"^\x0a", r"^[\t-\r]", "^[a"],
)
def test_patterns_that_could_reach_past_a_line_are_refused(pattern):
    assert line_local_pattern(pattern) is None
