"""`find_paths`: folders bucketed by match, file-name-only matches dropped."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.tools import call_tool
from support.tool_library import rel, search


def test_find_paths_buckets_folders_and_drops_filename_only_matches(engine):
    result = call_tool(engine, "find_paths", {"patterns": ["notion", "NOTION-export"]}).to_json()
    (folder,) = result["directories"]
    assert folder["path"] == str(engine.root / "Notion-Export-c58e") + "/"
    assert folder["file_count"] == 2 and result["total_files"] == 2 and result["truncated"] is False
    escaped = call_tool(engine, "find_paths", {"patterns": ["draft"]}).to_json()["directories"][0]
    assert escaped["path_glob"] == str(engine.root) + r"/papers/\[draft]\*/"
    hits = search(engine, path_glob=escaped["path_glob"]).results
    assert rel(engine, hits) == ["papers/[draft]*/notes.txt"]
    truncated = call_tool(engine, "find_paths", {"patterns": ["papers", "Notion"], "limit": 1}).to_json()
    assert truncated["truncated"] is True and len(truncated["directories"]) == 1
    assert truncated["total_files"] == 5


def test_no_folder_matching_says_so_and_what_to_do_in_json_as_in_text(engine):
    """A JSON reader got `directories: []` and no word of calling `search` instead."""
    answer = call_tool(engine, "find_paths", {"patterns": ["zzznope"]})
    data = answer.to_json()
    assert data["directories"] == [] and data["notice"] == "No folder matches zzznope."
    assert data["guidance"] == ["Matches in file names alone are not listed: call `search` directly."]
    assert answer.to_markdown() == "**No folder matches zzznope.** Matches in file names alone are not listed: call `search` directly."


def test_a_pattern_that_spans_folders_buckets_under_the_folder_where_it_ends(engine):
    spanning = call_tool(engine, "find_paths", {"patterns": ["papers/[draft"]}).to_json()["directories"]
    assert [folder["path"] for folder in spanning] == [str(engine.root / "papers" / "[draft]*") + "/"]
    trailing = call_tool(engine, "find_paths", {"patterns": ["papers/"]}).to_json()["directories"]
    assert [folder["path"] for folder in trailing] == [str(engine.root / "papers") + "/"]


def test_a_folders_path_glob_scopes_a_search_to_that_folder_not_its_namesakes(tmp_path):
    """`projects` as a substring scoped a search to `projects-old` too."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "lib"
    for folder in ("projects", "projects-old"):
        (root / folder).mkdir(parents=True)
        (root / folder / "plan.md").write_text("# Plan\n\nbilling roadmap\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="p", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        folders = call_tool(engine, "find_paths", {"patterns": ["projects"]}).to_json()["directories"]
        current = next(folder for folder in folders if folder["path"] == f"{root}/projects/")
        assert current["path_glob"] == current["path"]
        hits = call_tool(engine, "search", {"query": "billing roadmap", "path_glob": current["path_glob"]}).results
        assert [hit.path for hit in hits] == [f"{root}/projects/plan.md"]
    finally:
        engine.close()


def test_folders_are_found_whatever_the_case_and_accents_of_the_pattern(tmp_path):
    import unicodedata

    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "lib"
    for folder in ("Café", unicodedata.normalize("NFD", "Français"), "Übersicht", "İstanbul", "Søren Ågård", "Stanisław Lem"):
        (root / folder).mkdir(parents=True)
        (root / folder / "note.md").write_text("# Note\n\ntext\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="p", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        decomposed = unicodedata.normalize("NFD", "Français")  # the path as written on disk, which opens
        for pattern, folder in [("cafe", "Café"), ("CAFÉ", "Café"), ("FRANÇAIS", decomposed), ("francais", decomposed),
                                ("uebersicht", None), ("ubersicht", "Übersicht"), ("İstanbul", "İstanbul"),
                                ("soren agard", "Søren Ågård"), ("SØREN", "Søren Ågård"), ("stanislaw", "Stanisław Lem")]:
            found = call_tool(engine, "find_paths", {"patterns": [pattern]}).to_json()["directories"]
            assert [entry["path"] for entry in found] == ([f"{root}/{folder}/"] if folder else []), pattern
            assert all(Path(entry["path"]).is_dir() for entry in found)
    finally:
        engine.close()


def test_a_folder_named_the_pattern_is_found_before_folders_that_hold_it_in_their_name():
    """`de` (the German pages) was counted under `web-dev/`, the first folder holding the two letters."""
    from linkly_ls.core.tools.find_paths import bucket_for

    assert bucket_for("/c/notes/web-dev/astro-docs/de/guide/x.md", ["de"]) == "/c/notes/web-dev/astro-docs/de"
    assert bucket_for("/c/notes/web-dev/astro-docs/en/x.md", ["de"]) == "/c/notes/web-dev"
    assert bucket_for("/c/Notes/Web-Dev/DE/x.md", ["german", "de"]) == "/c/Notes/Web-Dev/DE"
