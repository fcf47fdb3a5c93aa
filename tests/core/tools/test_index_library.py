"""`index_library` on a long-running server: the libraries of the config file as it stands."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.config import load_config
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool


def test_a_library_added_to_the_config_file_while_serving_can_be_indexed_by_name(tmp_path: Path, monkeypatch) -> None:
    """It was "does not exist" until some other `linkly` command had recorded the new table."""
    first, added = tmp_path / "first", tmp_path / "added"
    for folder, word in ((first, "aardvark"), (added, "pangolin")):
        folder.mkdir()
        (folder / "note.md").write_text(f"# Note\n\n{word}\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    table = '[[library]]\nname = "{name}"\npaths = ["{path}"]\n'
    config.write_text('[embedding]\nmodel = "none"\n' + table.format(name="first", path=first), encoding="utf-8")
    monkeypatch.setenv("LINKLY_DATA_DIR", str(tmp_path / "data"))
    engine = Engine(load_config(config))
    try:
        engine.index()
        with config.open("a", encoding="utf-8") as handle:
            handle.write(table.format(name="added", path=added))
        result = call_tool(engine, "index_library", {"library": "added"}).to_json()
        assert [(entry["library"], entry["indexed"]) for entry in result["libraries"]] == [("added", 1)]
        assert [hit.path for hit in call_tool(engine, "search", {"query": "pangolin"}).results] == [str(added / "note.md")]
    finally:
        engine.close()
