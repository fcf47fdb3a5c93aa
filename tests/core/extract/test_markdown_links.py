"""Links found in Markdown lines, with the line and the columns an editor shows."""

from linkly_ls.core.extract.markdown_links import find_links

LINES = [
    "# Top",
    "",
    'See [the guide](guide.md#install-it "Title") and [[Other Note#Part|label]] and [[plain]].',
    "Ref [docs][d], [d] and <https://example.com> but not `[code](code.md)` nor ![img](pic.png).",
    '<a href="page.html#x">An <b>anchor</b></a> and [spaced](<a b.md>) and [x](url_(with)_parens).',
    "```",
    "[fenced](fence.md)",
    "```",
    "[d]: ./docs/index.md",
    "- [ ] a task, not a link <!-- [hidden](h.md) -->",
]


def spans(links):
    return [(link.line, LINES[link.line - 1][link.start : link.end]) for link in links]


def test_every_kind_of_markdown_link_with_its_line_and_columns():
    links = find_links(LINES)
    assert [(link.kind, link.target, link.text) for link in links] == [
        ("inline", "guide.md#install-it", "the guide"),
        ("wiki", "Other Note#Part", "label"),
        ("wiki", "plain", "plain"),
        ("reference", "./docs/index.md", "docs"),
        ("reference", "./docs/index.md", "d"),
        ("autolink", "https://example.com", "https://example.com"),
        ("html", "page.html#x", "An anchor"),
        ("inline", "a b.md", "spaced"),
        ("inline", "url_(with)_parens", "x"),
    ]
    assert spans(links)[:3] == [
        (3, '[the guide](guide.md#install-it "Title")'),
        (3, "[[Other Note#Part|label]]"),
        (3, "[[plain]]"),
    ]
    assert spans(links)[6] == (5, '<a href="page.html#x">An <b>anchor</b></a>')


def test_code_images_comments_task_boxes_and_definitions_hold_no_links():
    targets = {link.target for link in find_links(LINES)}
    assert not targets & {"code.md", "pic.png", "fence.md", "h.md"}
    assert all(link.line != 9 for link in find_links(LINES))


def test_line_numbers_start_where_the_body_starts():
    assert find_links(["[a](b.md)"], first_line=4)[0].line == 4


def test_a_reference_without_a_definition_is_plain_text():
    assert find_links(["[not a link] and [nor][this]"]) == []


def test_a_full_or_collapsed_reference_may_be_followed_by_a_colon_or_a_parenthesis():
    lines = ["* [`Writable`][]: streams; the [callback version][pipe]: and [V8][] (the engine)", "", "[`writable`]: #w", "[pipe]: p.md", "[v8]: https://v8.dev"]
    assert [(link.target, link.text) for link in find_links(lines)] == [
        ("#w", "Writable"),
        ("p.md", "callback version"),
        ("https://v8.dev", "V8"),
    ]
    assert [link.target for link in find_links(["see [pipe]: and [pipe](x.md)", "", "[pipe]: p.md"])] == ["x.md"]


def test_an_escaped_bracket_neither_opens_nor_closes_a_link():
    lines = [r"\[0, [`Number.MAX_SAFE_INTEGER`][]] range, [a \] b](x.md) and \[not](y.md)", "", "[`number.max_safe_integer`]: #max"]
    assert [(link.target, link.text, lines[0][link.start : link.end]) for link in find_links(lines)] == [
        ("#max", "Number.MAX_SAFE_INTEGER", "[`Number.MAX_SAFE_INTEGER`][]"),
        ("x.md", r"a \] b", r"[a \] b](x.md)"),
    ]


def test_link_text_loses_emphasis_but_keeps_underscores_inside_words():
    assert find_links(["[*the* __snake_case__ `MAX_LEN`](a.md)"])[0].text == "the snake_case MAX_LEN"


def test_a_footnote_is_not_a_link_but_its_text_may_hold_one():
    lines = ["Ed448 [^1] and [^note].", "", "[^1]: An [RFC](https://rfc.example) says so.", "[^note]: plain"]
    assert [(link.line, link.target) for link in find_links(lines)] == [(3, "https://rfc.example")]


def test_a_link_whose_text_wraps_stands_on_its_first_line():
    lines = ["in the [“Variables and Data Interacting with", "Move”][move] section and [a](b.md).", "", "[move]: own.html#move"]
    links = find_links(lines)
    assert [(link.line, link.target, link.text, link.start, link.end) for link in links] == [
        (1, "own.html#move", "“Variables and Data Interacting with Move”", 7, 44),
        (2, "b.md", "a", 25, 34),
    ]


def test_obsidian_comments_hold_no_links_and_an_unclosed_mark_hides_nothing():
    lines = ["a [[One]] %% [[Hidden]] %% b", "%%", "[[Hidden two]]", "%%", "after [[Two]]", "rate 50%% off [[Three]]"]
    assert [link.target for link in find_links(lines)] == ["One", "Two", "Three"]
