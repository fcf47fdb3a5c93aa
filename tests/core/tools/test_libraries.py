"""`list_libraries` names the files that failed, and a search scoped to one says why it finds nothing."""

from __future__ import annotations

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool
from linkly_ls.core.tools.common import FAILURES_SHOWN


@pytest.fixture()
def with_failures(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "kept.md").write_text("# Kept\n\nwombat\n", encoding="utf-8")
    for number in range(FAILURES_SHOWN + 2):
        (root / f"empty-{number:02}.pdf").write_bytes(b"")  # no PDF is empty: failed files
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    engine.index()
    engine.root = root  # type: ignore[attr-defined]
    yield engine
    engine.close()


def test_list_libraries_names_the_first_failed_files_and_why(with_failures):
    result = call_tool(with_failures, "list_libraries", {})
    (library,) = result.to_json()["libraries"]
    assert library["failed_count"] == FAILURES_SHOWN + 2 and len(library["failed"]) == FAILURES_SHOWN
    assert library["failed"][0] == {"path": str(with_failures.root / "empty-00.pdf"), "message": "empty file (0 bytes)"}
    text = result.to_markdown()
    assert f"  failed: {with_failures.root / 'empty-00.pdf'}: empty file (0 bytes)" in text
    assert "  ... and 2 more failed (`linkly status` lists them)" in text


def test_a_search_scoped_to_a_file_that_failed_says_so_instead_of_sending_to_find_paths(with_failures):
    result = call_tool(with_failures, "search", {"query": "wombat", "path_glob": "empty-03"})
    assert result.miss and result.results == []
    lead = result.guidance[0]
    assert f"'{with_failures.root / 'empty-03.pdf'}' matches it but could not be indexed: empty file (0 bytes)." in lead
    assert "find_paths" not in lead
    elsewhere = call_tool(with_failures, "search", {"query": "wombat", "path_glob": "no-such-folder/"})
    assert "Call `find_paths`" in elsewhere.guidance[0]


def test_a_long_running_process_judges_the_config_file_as_it_stands_now(tmp_path):
    """A table added after the process started read as "no longer in the config file", and a table deleted
    meanwhile left the library impossible to remove until the editor was closed."""
    from linkly_ls.core.config import load_config
    from linkly_ls.core.tools.remove_library import remove_library

    for name in ("first", "second"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.md").write_text(f"# {name}\n\ntext\n", encoding="utf-8")
    config_file = tmp_path / "config.toml"

    def write_config(*names: str) -> None:
        tables = "".join(f'[[library]]\nname = "{name}"\npaths = ["{tmp_path / name}"]\n\n' for name in names)
        config_file.write_text(f'[index]\ndata_dir = "{tmp_path / "data"}"\n\n[embedding]\nmodel = "none"\n\n{tables}', encoding="utf-8")

    write_config("first")
    engine = Engine(load_config(config_file))
    try:
        engine.index()

        def notes() -> dict[str, str | None]:
            return {library["name"]: library.get("note") for library in call_tool(engine, "list_libraries", {}).to_json()["libraries"]}

        write_config("first", "second")
        assert notes() == {"first": None, "second": None}
        write_config("second")
        assert notes()["first"].startswith("no longer in the config file")
        assert engine.writer_lock.try_acquire()
        assert remove_library(engine, "first").library == "first"
    finally:
        engine.close()


def test_explore_names_the_files_that_failed_too(with_failures):
    result = call_tool(with_failures, "explore", {})
    data = result.to_json()
    assert data["failed_count"] == FAILURES_SHOWN + 2 and len(data["failed"]) == FAILURES_SHOWN
    assert data["failed"][0] == {"path": str(with_failures.root / "empty-00.pdf"), "message": "empty file (0 bytes)"}
    text = result.to_markdown()
    assert f"### Failed ({FAILURES_SHOWN + 2} files could not be indexed)" in text
    assert "- ... and 2 more (`linkly status` lists them)" in text


def test_a_library_without_documents_claims_no_vector_coverage_in_text():
    from linkly_ls.core.store.records import LibraryRecord
    from linkly_ls.core.tools.libraries import LibrariesResult, LibraryInfo

    empty = LibraryInfo(LibraryRecord("empty", ["/x"]), 0, 0, vector_coverage=1.0, first_pass_coverage=1.0)
    full = LibraryInfo(LibraryRecord("full", ["/y"]), 3, 0, vector_coverage=1.0, first_pass_coverage=1.0)
    lines = LibrariesResult([empty, full]).to_markdown().splitlines()
    assert "- **empty**: 0 documents" in lines
    assert any(line.startswith("- **full**: 3 documents") and "vectors 100%" in line for line in lines)
