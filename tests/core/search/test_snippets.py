"""Snippets and short excerpts of them show the query's terms."""

from linkly_ls.core.search.snippets import QueryMatcher, best_snippet, excerpt


def test_an_excerpt_starts_at_the_sentence_of_the_first_marked_term():
    text = "Nothing to see in this opening sentence at all, it just goes on and on. " * 3 + "Here the **watcher** restarts."
    short = excerpt(text, 80)
    assert short.startswith("… Here the **watcher**") and len(short) <= 82
    assert excerpt("The **watcher** restarts.", 80) == "The **watcher** restarts."
    assert excerpt("word " * 40, 30).endswith(" …") and len(excerpt("word " * 40, 30)) <= 32


def test_a_snippet_without_a_query_word_sits_on_a_line_of_text_not_a_blank_one():
    from linkly_ls.core.search.snippets import QueryMatcher, best_snippet

    lines = ["", "Chapter 2: More Content", "", "Some words here."]
    snippet = best_snippet(QueryMatcher("zeppelin"), lines, 1, 4)
    assert snippet.line == 2 and snippet.text.startswith("Chapter 2")
    assert best_snippet(QueryMatcher("words"), lines, 1, 4).line == 4


def test_a_long_lines_snippet_shows_the_quoted_phrase_not_the_first_of_its_words():
    from linkly_ls.core.search.phrases import phrase_pattern

    filler = "Agents talk. " * 30
    line = f"Conversations of each agent go through other tools. {filler}They solve tasks through conversations with each other."
    matcher = QueryMatcher("through conversations with each other")
    focused = best_snippet(matcher, [line], 1, 1, focus=[phrase_pattern("through conversations with each other")])
    plain = best_snippet(matcher, [line], 1, 1)
    assert "through **conversations** with each other" in focused.text
    assert "with each other" not in plain.text  # the first of its words comes long before


def test_an_english_documents_words_are_marked_by_their_english_reading_only():
    # French reads "notes" as "not": an English document's "not" is no match for it, a French one's "notes" is
    matcher = QueryMatcher("notes")
    english, _ = matcher.in_language("en").mark("Expressions do not include notes.")
    assert english == "Expressions do not include **notes**."
    french, _ = matcher.in_language("fr").mark("Les notes de cours.")
    assert french == "Les **notes** de cours."
    assert matcher.in_language(None).mark("not notes")[0] == "not **notes**"


def test_only_the_querys_words_are_bold_in_a_snippet():
    # a note's own **bold** read as a match (and doubled a matched word's marks); a query's `s` matched `that’s`
    assert best_snippet(QueryMatcher("layouts"), ["**Layouts** sind **JavaScript expressions**"], 1, 1).text == (
        "**Layouts** sind JavaScript expressions"
    )
    assert QueryMatcher("cannot borrow s").mark("a number that’s too large; it’s s")[0] == "a number that’s too large; it’s **s**"
    assert QueryMatcher("peter scan").mark("Peter’s ‘scan’")[0] == "**Peter’s** ‘**scan**’"


def test_a_snippet_starts_where_the_query_is_written_as_typed():
    # `apt full-upgrade` holds the same terms by their stems; the line with `apt-get dist-upgrade` is the one
    lines = ["To upgrade, use apt full-upgrade now.", "Then reboot.", "The older apt-get dist-upgrade does the same.", "end"]
    snippet = best_snippet(QueryMatcher("apt-get dist-upgrade"), lines, 1, 4)
    assert snippet.line == 3 and "The older **apt-get** **dist-upgrade**" in snippet.text and "full" not in snippet.text


def test_a_table_of_contents_reads_as_one_and_a_page_of_text_does_not():
    from linkly_ls.core.search.snippets import reads_as_contents

    contents = [
        "Table of Contents",
        "4.1 A specific example. . . . . . . . . . . . . . . . . . . 17",
        "4.2 The function tapply() and ragged arrays. . . . . . . . . . 17",
        "4.3 Ordered factors .................................... 19",
        "Preface                                                   iii",
    ]
    assert reads_as_contents(contents)
    prose = [
        "4.2 The function tapply() and ragged arrays",
        "To continue the previous example, suppose we have the incomes of the same tax accountants",
        "in another vector (in suitably large units of money), 17 of them in all.",
    ]
    assert not reads_as_contents(prose) and not reads_as_contents(contents[:1])


def test_decomposed_accents_words_against_chinese_and_elided_words_are_marked():
    import unicodedata

    marked, seen = QueryMatcher("Besançon postgresql hôtel").mark(
        unicodedata.normalize("NFD", "à Besançon, ") + "使用PostgreSQL数据库, l'hôtel"
    )
    assert marked == "à **Besançon**, 使用**PostgreSQL**数据库, **l'hôtel**" and seen == {0, 1, 2}
    assert QueryMatcher("hôtel").mark("d’hôtel et d'hôtels")[1] == {0}
    assert QueryMatcher("s").mark("it’s we’re")[1] == set(), "an English contraction keeps its first part"


def test_the_snippet_points_at_the_line_of_an_elided_word():
    lines = ["Un guide de voyage.", "", "Nous avons réservé", "une chambre à l'hôtel du centre."]
    snippet = best_snippet(QueryMatcher("hôtel"), lines, 1, 4)
    assert snippet.line == 4 and "**l'hôtel**" in snippet.text


def test_a_long_line_without_spaces_keeps_its_text_and_adjacent_chinese_terms_are_one_bold_run():
    line = "数据库管理系统是一种软件。" * 30 + "它提供向量检索功能，" + "以及其他的功能。" * 40
    snippet = best_snippet(QueryMatcher("向量检索"), [line], 1, 1)
    assert "**向量检索**" in snippet.text and len(snippet.text) > 100
    assert QueryMatcher("数据库 管理").mark("数据库管理系统")[0] == "**数据库管理**系统"
    assert excerpt("段落" + "文字" * 200, 60).endswith(" …") and len(excerpt("段落" + "文字" * 200, 60)) > 50


def test_a_cjk_word_a_line_break_split_is_one_word_of_the_snippet():
    snippet = best_snippet(QueryMatcher("管理系统"), ["数据库管理", "系统很重要", "English line"], 1, 3)
    assert snippet.text == "数据库**管理系统**很重要 English line"


def test_a_word_a_line_break_hyphenated_is_joined_and_marked_whole():
    snippet = best_snippet(QueryMatcher("analyses conducted"), ["the analyses con-", "ducted by Smith-", "Jones"], 1, 3)
    assert snippet.text == "the **analyses** **con-ducted** by Smith- Jones", "a name's hyphen before a capital stays"
    assert QueryMatcher("email").mark("send an e-mail")[0] == "send an **e-mail**"


def test_the_letter_an_apostrophe_leaves_marks_nothing_on_its_own():
    from linkly_ls.core.search.snippets import QueryMatcher

    assert QueryMatcher("trustee's fee").mark("28 U.S.C. the trustee's fee")[0] == "28 U.S.C. the **trustee's** **fee**"
    assert QueryMatcher("compiler d'une noyau").mark("le d-i et une noyau")[0] == "le d-i et **une** **noyau**"
    assert QueryMatcher("C language").mark("the C language")[0] == "the **C** **language**"


def test_a_code_span_holding_a_match_is_bold_whole_and_a_link_target_stays_as_written():
    """`pymdownx.**blocks**.**tab**` shows its asterisks, and `](./plugins/**tab**.md)` is another path."""
    marked, seen = QueryMatcher("tab blocks").mark("Using `pymdownx.blocks.tab` with [`tab`](./plugins/tab.md) and blocks.")
    assert marked == "Using **`pymdownx.blocks.tab`** with [**`tab`**](./plugins/tab.md) and **blocks**."
    assert seen == {0, 1}
    assert QueryMatcher("tab").mark("see [the docs](./tab.md)")[0] == "see [the docs](./tab.md)"
    assert QueryMatcher("tab").mark("see [the docs](./tab.md)")[1] == {0}, "a match in a link's target still counts"


def test_a_snippet_opens_on_the_paragraph_holding_every_query_word_not_the_one_before():
    """A Word paragraph is one long line: the window opening on the paragraph before (one common query word,
    many times) won on matches and was cut before the sentence holding all three words."""
    before = "Rollout churn warehouse margin shrinkage " + " ".join(["capex logistics supplier warehouse pricing"] * 20)
    lines = [before, "The Fjordline warehouse consolidation saves 3.9 million euros per year from 2027.", "Next steps."]
    snippet = best_snippet(QueryMatcher("Fjordline warehouse consolidation"), lines, 1, 3)
    assert snippet.line == 2
    assert snippet.text.startswith("The **Fjordline** **warehouse** **consolidation** saves")


def test_a_name_with_a_one_letter_prefix_is_marked_and_its_line_shown():
    """`O'Brien` was read as `O`: never marked, and the snippet showed the document's first lines."""
    lines = ["HOLLIS & PARK LLP", "Plaintiffs' counsel", "Defendant Daniel O'Brien directed procurement staff.", "It's o'clock."]
    snippet = best_snippet(QueryMatcher("O'Brien"), lines, 1, 4)
    assert snippet.line == 3 and "**O'Brien**" in snippet.text
    assert QueryMatcher("O’Brien").mark("DANIEL O’BRIEN: yes")[0] == "DANIEL **O’BRIEN**: yes"


def test_a_link_target_in_angle_brackets_is_not_marked():
    """`[the complaint](<filings/Tidewater v Bayport - Complaint.pdf>)`: bold inside it broke the link."""
    marked, _ = QueryMatcher("Bayport complaint").mark("See [the complaint](<filings/Tidewater v Bayport - Complaint.pdf>) now.")
    assert marked == "See [the **complaint**](<filings/Tidewater v Bayport - Complaint.pdf>) now."
