"""Completing the word being typed from the words of document names."""

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.search.word_completion import WordCompletions


def test_a_prefix_becomes_the_most_common_words_of_document_names_and_follows_the_catalog(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "zettelkasten.md").write_text("# Zettelkasten method\n\n## Zettel links\n\nnotes\n", encoding="utf-8")
    (notes / "reading.md").write_text("# Reading list\n\n## Zettelkasten books\n\nbooks\n", encoding="utf-8")
    (notes / "Übersicht.md").write_text("# Überblick\n\ntext\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[notes])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        completions = WordCompletions(engine.catalog)
        assert completions.complete("zett") == ["zettelkasten", "zettel"], "the first query waits for the first list"
        assert completions.wait_until_current(30)
        assert completions.complete("ZETTELK") == ["zettelkasten"]
        assert completions.complete("zettel") == [], "a whole word stays as typed"
        assert completions.complete("ze") == [] and completions.complete("qqq") == []
        assert completions.complete("übe") == ["überblick", "übersicht"]
        assert completions.completed_query("method zett") == "method zettelkasten zettel"
        assert completions.completed_query("zett ") == "zett ", "a space after the word says it is whole"
        (notes / "zetetic.md").write_text("# Zetetic astronomy\n", encoding="utf-8")
        engine.index()
        assert completions.complete("zet") == ["zettelkasten", "zettel"], "the older list, while the new one is built"
        assert completions.wait_until_current(30)
        assert completions.complete("zet") == ["zettelkasten", "zetetic", "zettel"]
    finally:
        engine.close()
