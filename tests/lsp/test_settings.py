"""The editor's `linkly` settings: what is read, and what is said about what cannot be."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.lsp.settings import parse_settings


def test_libraries_are_read_from_the_settings_and_a_later_source_wins(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    first = {"linkly": {"libraries": [{"name": "one", "paths": [str(tmp_path / "a")]}], "dataDir": str(tmp_path / "d1")}}
    second = {"dataDir": str(tmp_path / "d2"), "embeddingModel": " none "}
    settings = parse_settings(first, second)
    assert [(library.name, library.paths, library.origin) for library in settings.libraries] == [("one", [tmp_path / "a"], "editor")]
    assert settings.data_dir == tmp_path / "d2" and settings.embedding_model == "none" and settings.warnings == []


def test_a_library_with_an_unknown_key_is_skipped_with_a_warning_naming_the_key(tmp_path: Path) -> None:
    """A typo in a library (`exlude`) was ignored without a word, so it ran on the default it meant to change."""
    (tmp_path / "d").mkdir()
    settings = parse_settings({"libraries": [
        {"name": "three", "paths": str(tmp_path / "c"), "exlude": ["drafts/"]},
        {"name": "four", "paths": [str(tmp_path / "d")], "respectGitignore": False},
    ]})
    assert [library.name for library in settings.libraries] == ["four"]
    (warning,) = settings.warnings
    assert "library 'three'" in warning and "exlude" in warning and "did you mean exclude?" in warning
    assert "this library is skipped" in warning


def test_a_library_without_paths_or_of_the_wrong_shape_is_skipped_with_a_warning() -> None:
    settings = parse_settings({"libraries": [{"name": "x"}, "notes", {"name": "bad name!", "paths": ["/tmp"]}]})
    assert settings.libraries == [] and len(settings.warnings) == 3
    assert parse_settings({"libraries": "notes"}).warnings == ["linkly.libraries must be a list of {name, paths, ...}; ignored"]


def test_relative_paths_are_read_from_the_workspace_folder_and_doubtful_libraries_are_named(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    entries = {"libraries": [
        {"name": "rel", "paths": ["notes"]},
        {"name": "gone", "paths": [str(tmp_path / "missing")]},
        {"name": "dup", "paths": ["notes"]},
        {"name": "dup", "paths": [str(tmp_path)]},
    ]}
    settings = parse_settings(entries, base=tmp_path)
    assert {library.name: library.paths for library in settings.libraries} == {
        "rel": [tmp_path / "notes"], "gone": [tmp_path / "missing"], "dup": [tmp_path],
    }
    assert any("'gone'" in warning and "missing" in warning for warning in settings.warnings)
    assert any("'dup' more than once" in warning for warning in settings.warnings)
    without_folder = parse_settings({"libraries": [{"name": "rel", "paths": ["notes"]}]})
    assert without_folder.libraries == [] and "relative" in without_folder.warnings[0]
