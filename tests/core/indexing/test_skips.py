"""What an indexing run leaves out: counted per reason in its report, stored per folder in the catalog."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.indexing.skips import SkipTally, describe
from linkly_ls.core.tools.explore import explore
from linkly_ls.core.tools.libraries import list_libraries


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def research_folder(root: Path) -> Path:
    """A notes repository that keeps its papers out of git, as people do."""
    write(root / ".gitignore", "*.pdf\narchive/\n")
    write(root / "notes.md", "# Notes\n\nreading list\n")
    write(root / "paper-a.pdf", "%PDF-1.4 not really")
    write(root / "paper-b.pdf", "%PDF-1.4 not really")
    write(root / "archive/old.md", "# Old\n")
    write(root / "scripts/plot.py", "print(1)\n")
    write(root / "big.md", "# Big\n\n" + "word " * 400)
    return root


def test_a_tally_sums_per_reason_in_a_fixed_order():
    tally = SkipTally()
    tally.add("/a", "unsupported", 2)
    tally.add("/b", "gitignore")
    tally.add("/a", "gitignore", 3)
    assert tally.by_reason() == {"gitignore": 4, "unsupported": 2} and tally.total() == 6
    assert describe(tally.by_reason()) == ".gitignore/.ignore 4, unsupported type 2"


def test_the_report_library_list_and_explore_say_what_was_skipped_and_why(tmp_path):
    folder = research_folder(tmp_path / "research")
    limits = ExtractLimits(ocr=False, max_file_bytes=1000)
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig("research", [folder])], limits=limits))
    try:
        [report] = engine.index()
        assert report.indexed == 1 and report.failed == 1  # big.md is over the size limit: an error line too
        assert report.skipped == {"gitignore": 3, "unsupported": 1, "too_large": 1}
        assert report.summary().endswith("; 5 skipped (.gitignore/.ignore 3, unsupported type 1, too large 1)")
        [info] = list_libraries(engine).to_json()["libraries"]
        assert info["skipped_count"] == 5 and info["skipped"] == report.skipped and info["respect_gitignore"] is True
        assert "5 skipped (.gitignore/.ignore 3" in list_libraries(engine).to_markdown()
        overview = explore(engine).to_json()
        assert overview["skipped_count"] == 5
        assert overview["skipped_folders"][0] == {
            "path": str(folder),
            "skipped_count": 3,
            "reasons": {"gitignore": 2, "too_large": 1},
        }
        assert {entry["path"] for entry in overview["skipped_folders"]} == {
            str(folder),
            str(folder / "archive"),
            str(folder / "scripts"),
        }
        assert "### Skipped (5 files not indexed; top folders)" in explore(engine).to_markdown()
    finally:
        engine.close()


def test_a_library_that_ignores_gitignore_indexes_those_files_and_the_counts_follow(tmp_path):
    folder = research_folder(tmp_path / "research")
    data = tmp_path / "data"
    library = LibraryConfig("research", [folder], respect_gitignore=False)
    engine = Engine(Config(data_dir=data, libraries=[library], limits=ExtractLimits(ocr=False)))
    try:
        [report] = engine.index()
        assert report.skipped == {"unsupported": 1}
        paths = {Path(path).name for path in engine.catalog.paths()} | {
            Path(error.path).name for error in engine.catalog.errors()
        }
        assert {"old.md", "paper-a.pdf", "paper-b.pdf"} <= paths
    finally:
        engine.close()
    engine = Engine(Config(data_dir=data, libraries=[LibraryConfig("research", [folder])], limits=ExtractLimits(ocr=False)))
    try:
        [report] = engine.index()  # respected again: the ignored files leave the index
        assert report.skipped == {"gitignore": 3, "unsupported": 1} and report.removed >= 1
        assert "old.md" not in {Path(path).name for path in engine.catalog.paths()}
    finally:
        engine.close()


def test_a_document_of_a_library_inside_this_ones_folder_is_counted_as_in_another_library(tmp_path):
    outer = tmp_path / "extra dir"
    write(outer / "top.md", "# Top\n\ntop note\n")
    write(outer / "sub folder" / "cafe.md", "# Café\n\ncrème brûlée\n")
    engine = Engine(Config(data_dir=tmp_path / "data", limits=ExtractLimits(ocr=False)))
    try:
        engine.add_library([outer / "sub folder"], "inner")
        engine.index(["inner"])
        engine.add_library([outer], "outer")
        [report] = engine.index(["outer"])
        assert report.indexed == 1 and report.skipped == {"other_library": 1}
        assert report.summary().endswith("; 1 skipped (in another library 1)")
    finally:
        engine.close()


def _too_deep_folder(parent: Path) -> Path:
    """A folder whose path is longer than the system allows (PATH_MAX): listed by name, it cannot be read,
    as a folder without read permission cannot (for root too, who reads every folder)."""
    import os

    parent.mkdir(parents=True, exist_ok=True)
    name = "d" * 200
    fd = os.open(parent, os.O_RDONLY)
    try:
        for _ in range(22):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("deep.md", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w", encoding="utf-8") as handle:
            handle.write("# Deep\n")
    finally:
        os.close(fd)
    return parent / name


def test_links_and_a_folder_that_cannot_be_read_are_counted_and_named(tmp_path):
    """Both were left out without a word after the run's own error line: `status`, `explore` and
    `list_libraries` showed a library that looked whole."""
    folder = tmp_path / "downloads"
    write(folder / "notes.md", "# Notes\n\nreading list\n")
    write(tmp_path / "elsewhere" / "outside.md", "# Outside\n")
    (folder / "link to outside.md").symlink_to(tmp_path / "elsewhere" / "outside.md")
    (folder / "linked folder").symlink_to(tmp_path / "elsewhere")
    deep = _too_deep_folder(folder / "deep")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig("dl", [folder])], limits=ExtractLimits(ocr=False)))
    try:
        [report] = engine.index()
        assert report.indexed == 1 and report.skipped == {"symlink": 2, "unreadable": 1}
        assert "symbolic link (not followed) 2, folder that cannot be read 1" in report.summary()
        folders = {entry["path"]: entry["reasons"] for entry in explore(engine).to_json()["skipped_folders"]}
        assert folders[str(folder)] == {"symlink": 2}
        assert any(path.startswith(str(deep)) and reasons == {"unreadable": 1} for path, reasons in folders.items())
        [info] = list_libraries(engine).to_json()["libraries"]
        assert info["skipped"] == {"symlink": 2, "unreadable": 1}
    finally:
        engine.close()
