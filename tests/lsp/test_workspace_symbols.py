"""`workspace/symbol` answers from the search tool's hits (the protocol side is in test_features)."""

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool
from linkly_ls.lsp.features.workspace_symbols import search_symbols
from linkly_ls.lsp.linemap import SourceFiles


def test_a_query_nothing_matches_gives_no_symbols_not_the_nearest_documents(tmp_path) -> None:
    """With vectors, a search nothing matches still lists the nearest documents (a miss): a symbol picker
    filled with every note, where marksman shows nothing."""
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in [("boats.md", "# Boats\n\nSailing boats and the wind.\n"), ("soil.md", "# Soil\n\nCompost for tomatoes.\n")]:
        (notes / name).write_text(text, encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[notes])]))
    try:
        engine.index()
        engine.vectors.run_until_complete(wait_for_model=True)
        assert call_tool(engine, "search", {"query": "zzzqqq"}).results, "the nearest documents are listed"
        assert search_symbols(engine, SourceFiles(), "zzzqqq", len, lambda: False) == []
        assert search_symbols(engine, SourceFiles(), "compost", len, lambda: False)
    finally:
        engine.close()


def test_the_word_being_typed_finds_the_documents_whose_names_it_begins(tmp_path) -> None:
    from linkly_ls.core.search.word_completion import WordCompletions

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "method.md").write_text("# Zettelkasten method\n\nOne idea a card, cards linked.\n", encoding="utf-8")
    (notes / "soil.md").write_text("# Soil\n\nCompost for tomatoes.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[notes])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        completions = WordCompletions(engine.catalog)
        assert completions.wait_until_current(30)
        assert search_symbols(engine, SourceFiles(), "zett", len, lambda: False) == [], "without completion: a miss"
        (found,) = search_symbols(engine, SourceFiles(), "zett", len, lambda: False, completions)
        assert found.name.startswith("Zettelkasten method") and found.location.uri.endswith("/method.md")
    finally:
        engine.close()
