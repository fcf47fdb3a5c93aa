"""`explore` and `list_libraries` on a known library."""

from __future__ import annotations

from linkly_ls.core.tools import call_tool


def test_explore_and_list_libraries(engine):
    overview = call_tool(engine, "explore", {}).to_json()
    assert {"type": "md", "count": 7} in overview["doc_types"]
    root = overview["directories"][0]
    assert root["file_count"] == 9 and root["median_word_count"] > 0
    assert any(child["path"].endswith("/papers") for child in root["children"])
    assert any(k["keyword"].lower().startswith("shopping") for k in overview["keywords"])
    (library,) = call_tool(engine, "list_libraries", {}).to_json()["libraries"]
    assert library["name"] == "docs" and library["document_count"] == 9 and library["paths"] == [str(engine.root)]


def test_explore_of_an_empty_index_or_library_says_why_as_search_does(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    nothing = Engine(Config(data_dir=tmp_path / "none"))
    try:
        answer = call_tool(nothing, "explore", {})
        assert answer.to_json()["notice"] == "No libraries yet: nothing is indexed."
        made, add = answer.to_json()["guidance"]
        assert made.startswith(f"The index folder {tmp_path / 'none'} did not exist before this process made it: ")
        assert made.endswith("set LINKLY_DATA_DIR or data_dir in the config file.") and "then explore again" in add
        assert "### Types" not in answer.to_markdown()
    finally:
        nothing.close()
    (tmp_path / "empty").mkdir()
    empty = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="empty", paths=[tmp_path / "empty"])]))
    try:
        empty.index()
        answer = call_tool(empty, "explore", {"library": "empty"}).to_json()
        assert answer["notice"] == "No documents indexed yet." and "(empty)" in answer["guidance"][0]
    finally:
        empty.close()


def test_explore_of_a_library_with_documents_has_no_notice(engine):
    assert "notice" not in call_tool(engine, "explore", {}).to_json()


def test_copies_of_a_file_count_once_under_a_keyword(tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    root = tmp_path / "notes"
    root.mkdir()
    text = "# Tides\n\nSpring tides and neap tides follow the moon; tides tides tides.\n"
    for name in ("tides.md", "tides copy.md", "backup-tides.md"):
        (root / name).write_text(text, encoding="utf-8")
    (root / "moon.md").write_text("# Moon\n\nThe moon raises tides twice a day; tides again.\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        keywords = {entry["keyword"].lower(): entry for entry in call_tool(engine, "explore", {}).to_json()["keywords"]}
        tides = keywords["tides"]
        assert tides["count"] == 2 and sorted(document["title"] for document in tides["documents"]) == ["Moon", "Tides"]
    finally:
        engine.close()
