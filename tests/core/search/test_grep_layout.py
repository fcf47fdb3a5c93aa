"""Patterns read against a page's layout: spaces as blank runs across a line break, real anchors."""

from linkly_ls.core.search.grep_layout import (
    CJK_BREAK,
    LEADING_BLANKS,
    SPACE_RUN,
    SPACE_RUN_YIELDING,
    across_line_breaks,
    has_anchor,
    with_typographic_quotes,
)


def test_spaces_of_a_pattern_match_a_newline_too_where_they_can_be_read():
    assert across_line_breaks("the.*file") == "the.*file"
    assert across_line_breaks(r"quick brown\ fox") == f"quick{SPACE_RUN}brown{SPACE_RUN}fox"
    assert across_line_breaks("[^ ]+ [ ,]x") == f"[^ \\n]+{SPACE_RUN_YIELDING}[ ,\\n]x", "before a set: gives blanks back"
    assert across_line_breaks(r"[\]] x") == f"[\\]]{SPACE_RUN}x"
    assert across_line_breaks("a +b") == "a[ \\n]+b" and across_line_breaks(r"a\ {2}b") == "a[ \\n]{2}b", "quantified: one character"
    assert across_line_breaks("a  b") == across_line_breaks("a b") and across_line_breaks("a  +b") == f"a{SPACE_RUN_YIELDING}[ \\n]+b"
    assert across_line_breaks(" <- ") == f"{LEADING_BLANKS}<-{SPACE_RUN}" and across_line_breaks("x( )+y") == "x([ \\n])+y"
    for unreadable in ("(?x) a b", "(?ix)a", "[[:space:]]a", "[]] a", "[a"):
        assert across_line_breaks(unreadable) is None, unreadable


def test_only_a_caret_or_dollar_that_anchors_counts():
    assert all(map(has_anchor, ["^a", "a$", r"\Aa", r"a\Z", "(^|x)a", "[]^]a", "[a"]))
    assert not any(map(has_anchor, [r"\$ dquilt", "[^x]nd", "[$^]", r"a\^b", "a b"]))


def test_a_cjk_word_may_be_broken_between_any_two_of_its_characters():
    assert across_line_breaks("软件+包") == f"软{CJK_BREAK}件+包", "a quantified character keeps its quantifier"


def test_a_straight_quote_matches_the_curly_ones_typeset_text_has():
    """`don't` found nothing in a typeset book, which has `don’t`."""
    from linkly_ls.core.search.grep_lines import find_matching_lines
    from linkly_ls.core.store.line_cache import DocumentText

    assert with_typographic_quotes("don't") == "don['‘’‚‛ʼ]t"
    assert with_typographic_quotes('say "so"') == 'say ["“”„‟]so["“”„‟]'
    assert with_typographic_quotes("[a']\\'") == "[‘’‚‛ʼa']['‘’‚‛ʼ]"
    assert with_typographic_quotes("[^'-/]") == "[^‘’‚‛ʼ'-/]"
    assert with_typographic_quotes("a\\.b") == "a\\.b"
    document = DocumentText("I don’t know.\nI don't either.\nHe said “so” and left.\nnothing", (1.0, "h"))
    assert [match.first for match in find_matching_lines(document, "don't", False).page(0, 10)] == [1, 2]
    assert len(find_matching_lines(document, "don't", False)) == 2
    assert len(find_matching_lines(document, 'said "so"', False)) == 1
    assert len(find_matching_lines(document, "don['-/]t", False)) == 2


def test_case_insensitive_grep_also_ignores_accents_as_search_does():
    """`grep Lopez -i` found nothing in an article naming López four times."""
    from linkly_ls.core.search.grep_layout import with_accented_letters
    from linkly_ls.core.search.grep_lines import find_matching_lines
    from linkly_ls.core.store.line_cache import DocumentText

    document = DocumentText("María López said so.\nSøren Ågård agreed.\nlopez in lower case", (1.0, "h"))
    assert [match.first for match in find_matching_lines(document, "lopez", True).page(0, 10)] == [1, 3]
    assert [match.first for match in find_matching_lines(document, r"\bsoren agard\b", True).page(0, 10)] == [2]
    assert [match.first for match in find_matching_lines(document, "lopez", False).page(0, 10)] == [3]
    assert with_accented_letters(r"(?P<x>\d+)(?P=x)[a-z]{2}\p{L}") == r"(?P<x>\d+)(?P=x)[a-z]{2}\p{L}"
