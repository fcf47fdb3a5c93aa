"""grep's faster paths find exactly the lines the straightforward matcher finds."""

import bisect
import random
import sys
import time

import pytest
import regex

from linkly_ls.core.store import line_cache
from linkly_ls.core.store.line_cache import DocumentText
from linkly_ls.core.search import grep_lines
from linkly_ls.core.errors import ToolError
from linkly_ls.core.search.grep_lines import compile_pattern, find_matching_lines
from linkly_ls.core.search.grep_layout import across_line_breaks, has_anchor
from linkly_ls.core.search.grep_patterns import is_confined, is_literal, line_local_pattern, literal_suffix

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
    "a phrase broken ",
    "   across lines",
    "justified  two  spaces",
    "Usage",
]


def reference(lines: list[str], pattern: regex.Pattern) -> list[tuple[int, int, int, int]]:
    """The matcher these paths replace: per line when anchored, else over the newline-joined text with
    the pattern's spaces matching newlines too (over the space-joined text where they cannot be read).

    Each matching line as (first line, last line, offset of the first and of the last character
    of its first match, which may be empty); the offsets are -1 for anchored patterns, matched line by line.
    """
    source = pattern.pattern
    if has_anchor(source):
        return [(n, n, -1, -1) for n, line in enumerate(lines, start=1) if pattern.search(line)]
    across = across_line_breaks(source)
    text = " ".join(lines) if across is None else "\n".join(lines)
    if across is not None:
        pattern = regex.compile(across, pattern.flags)
    starts, position = [], 0
    for line in lines:
        starts.append(position)
        position += len(line) + 1
    matched: dict[int, tuple[int, int, int, int]] = {}
    position = 0
    while position <= len(text):  # each line's first match; the next line searched from its start
        found = pattern.search(text, position)
        if found is None:
            break
        first = bisect.bisect_right(starts, found.start())
        last_char = max(found.end() - 1, found.start())
        matched.setdefault(first, (first, bisect.bisect_right(starts, last_char), found.start(), last_char))
        next_line = starts[first] if first < len(starts) else len(text) + 1
        position = max(found.end(), next_line)
    return list(matched.values())


def found_lines(document: DocumentText, source: str, case_insensitive: bool) -> list[tuple[int, int, int, int]]:
    found = find_matching_lines(document, source, case_insensitive)
    every = [(m.first, m.last, m.start, m.last_char) for m in found.page(0, len(found))]
    for offset in range(0, len(found), 7):  # a page is numbered on its own
        page = [(m.first, m.last, m.start, m.last_char) for m in found.page(offset, 3)]
        assert page == every[offset : offset + 3]
    return every


def same_as_reference(lines: list[str], source: str, case_insensitive: bool) -> None:
    pattern = compile_pattern(source, case_insensitive)  # as grep reads it: curly quotes, accents with -i
    document = DocumentText("\n".join(lines), (1.0, "h"))
    found = found_lines(document, source, case_insensitive)
    expected = reference(lines, pattern)
    if expected and expected[0][2] == -1:  # anchored: lines only (the one-pass path also knows offsets)
        assert [match[:2] for match in found] == [match[:2] for match in expected]
    else:
        assert found == expected
    for first, last, start, last_char in found:
        if start >= 0:
            assert document.line_numbers([start, last_char]) == [first, last]


PATTERNS = [
    "the", "The", "lm", "glm", "Usage", "zzz", "aaa", "a", " ", "fox jumps", "brown fox", "the end",
    r"\bthe\b", r"\b[a-z]+\.[a-z]+\(", r"\w+\(", r"[^a-z ]+", r"\s+", r"e\s+f", ".", "a*", "x|y|z",
    "^Usage", "^Usage$", "Usage$", "^", "$", "^$", r"^\s*$", "^[^a-z]", r"^\S+$", r"^the\b", "^.{5}$",
    r"\AUsage", r"Usage\Z", r"^(?=U)", r"(?<=^)U", "^[]x]", r"^[\s]", "^tab\there", r"^\w+$", "^(?:a+ )+",
    "d$", r"\)$", "^E|^U", r"^[a-c]+", "^caf", "ΣΊΣ", "σίσ", "STRASSE", "€", "\U0001f600", r"\[x\]", "{y}",
    "broken across", "phrase broken across lines", r"broken [^x]cross", r"a\$? phrase", r"lines\$|spaces", "justified two", "two  spaces", "lines justified", r"broken\ across",
    "a+b", r"a\+b", "a.b", r"^\[", "^.*$", r"^(\w)\w*\1?", "^a{1,2}",
    r"^\s+\w", r"^\W", r"^\D+$", r"\s$", r"^[^\s]+$", r"^[\W]", r"^[^\W\d]+\s", r"^\w+\s+\w+$", r"\W$",
]

#: patterns confined to a line, with a literal after something that matches characters: searched suffix first
SUFFIX_PATTERNS = [
    r"\b[a-z]+\.[a-z]+\(", r"\w+\(", r"[a-z]+\.fit\(", r"\d+\.\d+", r"[^\s(]+\(", r"\w+\.\w+", r"[A-Z][a-z]+e\b",
    r"(\w+)\.(\w+)\(", r"\w+(?:\.\w+)+\(", r"[a-z]+e", r"\w*a\w*", r"[^\W\d]+\.\d", r"\B\w\.", r"\w+\(\w*\)",
    r"[a-z]+?\.", r"\w++\.", r"[a-z]{2,3}\.", r"\w{2}\(\w", r"(?:lm|glm)\.", r"[.(]+a", r"\S+\)", r"[^\sa]+b",
    r"[^\Wb]+\.[^\D]", r"[a-zé]+\.\w+\(", r"\b\w+\b\.", r"\w+\.\B", r"[\w.]+\(", r"\w+_a", r"[a-c]+\)", r"\S\S\(",
    r"\w+[.]\w+\(", r"\w+\.\w+\(\)?", r"[A-Za-z]+\.", r"\w+é", r"(\w|\d)+\.", r"\w+#", r"\w+\]", r"[ab]+\-",
]

#: patterns whose literal-suffix search would not be exact or would not pay: searched over the whole text
NO_SUFFIX_PATTERNS = [
    r"\w+ \w+\(", r"[a-z]+\s*\(", r"\w+.\(", r"[^a]+b", r"\W+a", r"\D+\.", r"\w+\ a", r"[a-z ]+\.", r"\w+(?=\()",
    r"(?<=\.)\w+\(", r"\w+|\(", r"\w+\.|x", r"\bfit\(", r"\.\w+", r"a\w+\(", r"\w+\.?", r"\w+\.*", r"(\w)\1\.",
    r"[[:alpha:]]+\.", r"\p{L}+\.", r"(?i)\w+\.", r"\w+\t", r"\w+\n", r"\w+\x2e", r"[^\S]+\.", r"\w+\.{e<=1}",
]


@pytest.fixture(params=["suffix-first", "whole-text"])
def suffix_search(request, monkeypatch):
    """Run each pattern with the literal-suffix search, and with it giving up at its first match."""
    if request.param == "whole-text":
        monkeypatch.setattr(grep_lines, "SUFFIX_FREE_MATCHES", 0)
        monkeypatch.setattr(grep_lines, "SUFFIX_CHARS_PER_MATCH", sys.maxsize)
    return request.param


@pytest.fixture(params=[line_cache.CHECKPOINT_CHARS, 16], ids=["checkpoints", "close-checkpoints"])
def checkpoints(request, monkeypatch):
    """Line numbers counted from the previous match, and also from checkpoints every 16 characters."""
    monkeypatch.setattr(line_cache, "CHECKPOINT_CHARS", request.param)
    return request.param


@pytest.mark.parametrize("case_insensitive", [False, True])
@pytest.mark.parametrize("source", PATTERNS)
def test_same_lines_as_the_reference(source, case_insensitive, suffix_search, checkpoints):
    same_as_reference(LINES, source, case_insensitive)


@pytest.mark.parametrize("source", SUFFIX_PATTERNS)
def test_suffix_patterns_are_searched_suffix_first(source):
    suffix = literal_suffix(source)
    assert suffix is not None and source.endswith(suffix) and len(suffix) < len(source)


@pytest.mark.parametrize("source", NO_SUFFIX_PATTERNS)
def test_patterns_that_could_cross_a_line_or_start_with_their_literal_are_searched_whole(source):
    assert literal_suffix(source) is None


@pytest.mark.parametrize(
    "source",
    ["the", r"\bthe\b", r"\w+", r"[^\s]+", r"(a|b)+c", r"\d{2,3}", "é€", r"[!-~]+", r"[^\W_]", r"\.\w+", "a|b", "#"],
)
def test_patterns_that_match_neither_a_space_nor_a_newline_are_confined(source):
    assert is_confined(source)


@pytest.mark.parametrize(
    "source",
    [" ", "a b", ".", r"\s", r"\W", r"\D", "[^a]", "[a ]", r"\ ", "^a", "a$", r"(?=a)", r"(?i)a", r"(a)\1", r"a\nb",
     "a\tb", r"[\s]", r"\p{L}", "[[:alpha:]]", "a{e<=1}", "a)", "(a", r"\Aa", "a{", "*a", "a**", "[a", "\\"],
)
def test_patterns_that_could_match_a_space_a_newline_or_look_around_are_not_confined(source):
    assert not is_confined(source)


@pytest.mark.parametrize(
    ("pattern", "suffix"),
    [
        (r"\b[a-z]+\.[a-z]+\(", r"\.[a-z]+\("),
        (r"\w+(?:\.\w+)+\(", r"\("),
        (r"[a-z]{2,3}\.", r"\."),
        (r"\w+a+\.b", r"\.b"),
        (r"[^\s(]+\(x", r"\(x"),
        (r"\w+_fit\(", r"_fit\("),
    ],
)
def test_the_suffix_starts_at_the_first_unquantified_literal(pattern, suffix):
    assert literal_suffix(pattern) == suffix


def _generated_lines(seed: int, count: int) -> list[str]:
    """Lines of R-like calls and noise: dots and parentheses at line edges, tabs, non-ASCII word characters."""
    pieces = ["lm", "glm.fit", "(", ")", ".", "a.b", "x.y(", "stats::", "_", "é", "1.5", "3", " ", "\t", "fit(",
              "Usage", "e", "ab", "-", "#", "]", "£", "\u00a0", "ΣΊ"]
    rng = random.Random(seed)
    return ["".join(rng.choice(pieces) for _ in range(rng.randrange(0, 14))) for _ in range(count)]


@pytest.mark.parametrize("case_insensitive", [False, True])
@pytest.mark.parametrize("source", SUFFIX_PATTERNS + NO_SUFFIX_PATTERNS[:20] + PATTERNS[:25])
def test_generated_text_gives_the_same_lines_and_offsets_as_the_reference(
    source, case_insensitive, suffix_search, checkpoints
):
    same_as_reference(_generated_lines(7, 400), source, case_insensitive)


def test_plain_words_line_edges_and_repeats_match_the_reference(checkpoints):
    lines = ["the the", "", "xthe", "the", "athe the", "the", "th", "e the", "the"] * 3
    for source in ["the", "th", "e", "he t", "the the", "x"]:
        same_as_reference(lines, source, False)


def test_a_catastrophic_pattern_on_a_line_its_suffix_matches_still_stops():
    document = DocumentText("x\n" + "a" * 5000 + "c b.\nend", (1.0, "h"))
    cpu = time.thread_time()  # what the budget counts: a busy machine stretches the wall time, not this
    with pytest.raises(ToolError, match="took longer than 1 s"):
        find_matching_lines(document, r"(a+)+b\.", False)
    assert 1.0 <= time.thread_time() - cpu < 2.5


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


def test_dot_stays_within_a_line_spaces_cross_line_breaks_and_empty_matches_count():
    """As grep reads a pattern line by line, but a phrase a PDF broke across lines still matches."""
    document = DocumentText("\n".join(["the cat", "a file", "the file", "", "zzz"]), (1.0, "h"))

    def lines(source: str) -> list[tuple[int, int]]:
        found = find_matching_lines(document, source, False)
        return [(match.first, match.last) for match in found.page(0, len(found))]

    assert lines("the.*file") == [(3, 3)], "not from line 1's `the` to line 3's `file`"
    assert lines("cat a") == [(1, 2)] and lines(r"cat\s+a") == [(1, 2)] and lines("cat[ ,]a") == [(1, 2)]
    assert lines("[^ ]+ file") == [(2, 2), (3, 3)], "a set without the space does not take the newline either"
    assert [first for first, _ in lines(r"\b")] == [1, 2, 3, 5]
    assert [first for first, _ in lines("z*")] == [1, 2, 3, 4, 5]


def test_a_cjk_word_a_line_break_split_still_matches():
    document = DocumentText("\n".join(["Debian 软件", "包管理", "软件包", "软件", "无关"]), (1.0, "h"))
    found = find_matching_lines(document, "软件包", False)
    assert [(match.first, match.last) for match in found.page(0, len(found))] == [(1, 2), (3, 3)]


def test_a_phrase_matches_however_its_words_are_laid_out_but_not_across_a_blank_line():
    """A PDF's or a man page's layout: an indented next line, a space left before the break, justified spaces."""
    text = [
        "the packages listed",  # 1
        "    here are installed",  # 2
        "packages listed ",  # 3
        "\there are kept",  # 4
        "listed  here  twice",  # 5
        "listed",  # 6
        "",  # 7
        "here after a blank line",  # 8
        "所列的软件",  # 9
        "    包中",  # 10
    ]
    document = DocumentText("\n".join(text), (1.0, "h"))

    def lines(source: str, case_insensitive: bool = False) -> list[tuple[int, int]]:
        found = find_matching_lines(document, source, case_insensitive)
        return [(match.first, match.last) for match in found.page(0, len(found))]

    assert lines("listed here") == [(1, 2), (3, 4), (5, 5)]
    assert lines("LISTED HERE", case_insensitive=True) == [(1, 2), (3, 4), (5, 5)]
    assert lines(r"listed\ here\ are") == [(1, 2), (3, 4)]
    assert lines("here twice") == [(5, 5)] and lines("listed here twice") == [(5, 5)]
    assert lines("软件包中") == [(9, 10)]
    assert lines("listed  here") == lines("listed here") == lines(r"listed \ here"), "spaces side by side are one"
    assert (6, 8) not in lines("listed here") and lines("listed here after") == [], "a blank line ends a phrase"


def test_only_a_caret_or_dollar_that_anchors_makes_a_pattern_match_line_by_line():
    document = DocumentText("\n".join(["run dquilt refresh", "$ dquilt diff", "Victoria and", "Western Australia."]), (1.0, "h"))
    for source, expected in [(r"refresh \$ dquilt", [(1, 2)]), ("Victoria [^x]nd Western", [(3, 4)]), (r"and Western Australia\.$", [])]:
        found = find_matching_lines(document, source, False)
        assert [(match.first, match.last) for match in found.page(0, len(found))] == expected, source


@pytest.mark.parametrize("pattern", [" ", "x y", " <- ", "x( )+y", "e s", "a \\s+q"])
def test_a_long_gap_of_blanks_costs_one_pass_not_its_square(pattern):
    """`grep ' '` on the R manual (lines of thousands of spaces) took over a second and was stopped."""
    document = DocumentText("\n".join(["x" + " " * 4000 + "z", "w " * 2000, "e" + " " * 4000 + "t"] * 30), (1.0, "h"))
    cpu = time.thread_time()
    find_matching_lines(document, pattern, False)
    assert time.thread_time() - cpu < 0.5, pattern


def test_a_pattern_that_starts_with_a_space_matches_on_the_line_of_what_follows():
    document = DocumentText("\n".join(["the heap", "    memory here", "memory", "a memory"]), (1.0, "h"))
    found = find_matching_lines(document, " memory", False)
    assert [(match.first, match.last) for match in found.page(0, len(found))] == [(2, 2), (4, 4)]


def test_a_quantified_space_over_a_long_gap_does_not_backtrack_for_ever():
    document = DocumentText("x" + " " * 20_000 + "y\n" + "x" + " " * 20_000, (1.0, "h"))
    cpu = time.thread_time()
    found = find_matching_lines(document, "x +y", False)
    assert [(match.first, match.last) for match in found.page(0, len(found))] == [(1, 1)]
    assert time.thread_time() - cpu < 0.9
