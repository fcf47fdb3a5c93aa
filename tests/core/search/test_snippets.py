"""Snippets and short excerpts of them show the query's terms."""

from linkly_ls.core.search.snippets import excerpt


def test_an_excerpt_starts_at_the_sentence_of_the_first_marked_term():
    text = "Nothing to see in this opening sentence at all, it just goes on and on. " * 3 + "Here the **watcher** restarts."
    short = excerpt(text, 80)
    assert short.startswith("… Here the **watcher**") and len(short) <= 82
    assert excerpt("The **watcher** restarts.", 80) == "The **watcher** restarts."
    assert excerpt("word " * 40, 30).endswith(" …") and len(excerpt("word " * 40, 30)) <= 32
