"""Unlinked mentions on a notes folder indexed for real: whole words, any case, outside links."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.links.mentions import find_mentions, mention_names
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.store.records import make_doc_id

NOTES = {
    "sailing.md": "# Sailing\n\nBoats and wind.\n",
    "trip.md": "# Trip\n\nWe went SAILING on Sunday.\nThe sailings were cancelled; presailing checks.\n"
    "Sailing again, and sailing once more.\n",
    "club.md": "# Club\n\nThe [Sailing club](https://example.com/sailing) meets on Fridays.\n",
    "linked.md": "# Linked\n\nSee [[Sailing]]. Sailing is fun.\n",
    "copy-of-sailing.md": "# Sailing\n\nBoats and wind.\n",
    "what-is-ownership.md": "# What Is Ownership?\n\nRules.\n",
    "rust.md": "# Rust\n\nFirst read what is ownership, then what-is  ownership.\nNot what is the ownership.\n",
    "deep-work.md": "# Focus\n\nLong hours.\n",
    "habits.md": "# Habits\n\nDeep work needs care; deep-working is different.\nGoing deep\nwork comes later.\n",
    "go.md": "# Go\n\nA language.\n",
    "the.md": "# The\n\nOnly a stopword.\n",
    "notes/index.md": "# Garden Plan\n\nBeds.\n",
    "日本語.md": "# 日本語\n\n本文。\n",
    "japanese.md": "# Japanese\n\nこれは日本語の文書です。\n",
    "harbour.md": "# Harbour\n\nUnser [Segel-Sailing](/de/sailing/) Kurs.\nSee https://sailing.example.org/club today.\n"
    "Mail <mailto:sailing@example.org> now.\nAnd sailing at noon.\n",
}


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mentions") / "notes"
    for name, text in NOTES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    engine = Engine(Config(data_dir=root.parent / "data", libraries=[LibraryConfig(name="notes", paths=[root])]))
    engine.index()
    engine.doc = lambda relative: make_doc_id(str(root / relative))
    yield engine
    engine.close()


def mentions_of(engine: Engine, relative: str) -> list[tuple[str, int, str]]:
    record = engine.catalog.get(engine.doc(relative))
    linking = {link.source_id for link in LinkResolver(engine.catalog).backlinks(record)}
    found = find_mentions(engine.catalog, engine.keyword, record, linking)
    return [(Path(mention.path).name, mention.line, mention.text[mention.start : mention.end]) for mention in found.mentions]


def test_whole_words_in_any_case_one_per_line(notes):
    assert [hit for hit in mentions_of(notes, "sailing.md") if hit[0] != "harbour.md"] == [("trip.md", 3, "SAILING"), ("trip.md", 5, "Sailing")]


def test_the_document_its_copies_linking_documents_and_link_text_are_left_out(notes):
    sources = {name for name, _, _ in mentions_of(notes, "sailing.md")}
    assert sources.isdisjoint({"sailing.md", "copy-of-sailing.md", "linked.md", "club.md"})


def test_a_name_inside_any_written_link_is_left_out_not_only_inside_the_links_the_catalog_keeps(notes):
    """The text of a link to a site path (`[Installations-Guide](/de/install/)`) and a bare web address
    (`https://guide.munin-monitoring.org/`) were listed as mentions."""
    assert [(line, text) for name, line, text in mentions_of(notes, "sailing.md") if name == "harbour.md"] == [(6, "sailing")]


def test_a_title_matches_with_any_spacing_or_punctuation_between_its_words(notes):
    assert mentions_of(notes, "what-is-ownership.md") == [("rust.md", 3, "what is ownership")]
    record = notes.catalog.get(notes.doc("what-is-ownership.md"))
    assert [name.text for name in mention_names(record)] == ["What Is Ownership?"]  # the file name says the same
    found = find_mentions(notes.catalog, notes.keyword, record, set())
    assert found.mentions[0].snippet() == "First read **what is ownership**, then what-is  ownership."


def test_the_file_name_is_a_name_too_and_a_name_never_spans_two_lines(notes):
    assert mentions_of(notes, "deep-work.md") == [("habits.md", 3, "Deep work")]
    names = [name.text for name in mention_names(notes.catalog.get(notes.doc("deep-work.md")))]
    assert names == ["Focus", "deep-work"]


def test_short_generic_and_stopword_names(notes):
    assert mention_names(notes.catalog.get(notes.doc("go.md"))) == []
    assert [name.text for name in mention_names(notes.catalog.get(notes.doc("notes/index.md")))] == ["Garden Plan"]
    assert mentions_of(notes, "the.md") == []  # "the" has no indexed term: nothing to look for


def test_cjk_names_match_inside_cjk_text(notes):
    assert mentions_of(notes, "日本語.md") == [("japanese.md", 3, "日本語")]


def test_a_long_line_is_shortened_around_the_mention(notes):
    record = notes.catalog.get(notes.doc("sailing.md"))
    mention = find_mentions(notes.catalog, notes.keyword, record, set()).mentions[0]
    mention.text = "x" * 200 + " sailing " + "y" * 200
    mention.start, mention.end = 201, 208
    snippet = mention.snippet()
    assert snippet.startswith("…") and snippet.endswith("…") and "**sailing**" in snippet and len(snippet) < 170
