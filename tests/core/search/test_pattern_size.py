"""`pattern_size`: an upper bound of what compiling a grep pattern makes, read from its text."""

from __future__ import annotations

import pytest

from linkly_ls.core.search.pattern_size import MAX_COPIES, expanded_size


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("a{100}", 100),
        ("a{2,7}", 7),
        ("a{5,}", 5),
        ("x{,5}", 5),
        ("(ab){10}", 20),
        ("((a{10}){10}){10}", 1000),
        ("(?:ab|cd){10}", 50),  # `:` counts as a part, the operators `?` and `|` do not
        (r"\d{4}-\d{2}-\d{2}", 10),
        (r"\p{Greek}{3}", 3),  # the braces of a named property are not a repeat
        ("[{}]{5}", 5),  # nor braces inside a set
        ("[]{]{5}", 5),
        ("[[:alpha:]]{50}", 50),
        ("a{}", 3),  # not a quantifier: three literal characters
        ("(a{10}", 10),  # unclosed: still bounded
    ],
)
def test_expanded_size(pattern, size):
    assert expanded_size(pattern) == size


def test_the_limit_sits_between_real_patterns_and_memory_bombs():
    assert expanded_size(r"[0-9a-f]{40}") < expanded_size(".{10000,}") <= MAX_COPIES
    assert expanded_size("a{99999999}") > MAX_COPIES
    assert expanded_size("((a{100}){100}){1000}") > MAX_COPIES  # 21 characters, 2.9 GB compiled
