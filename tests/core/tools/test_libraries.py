"""`list_libraries` names the files that failed, and a search scoped to one says why it finds nothing."""

from __future__ import annotations

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool
from linkly_ls.core.tools.libraries import FAILURES_SHOWN


@pytest.fixture()
def with_failures(tmp_path):
    root = tmp_path / "notes"
    root.mkdir()
    (root / "kept.md").write_text("# Kept\n\nwombat\n", encoding="utf-8")
    for number in range(FAILURES_SHOWN + 2):
        (root / f"empty-{number:02}.md").write_bytes(b"")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="n", paths=[root])], raw={"embedding": {"model": "none"}}))
    engine.index()
    engine.root = root  # type: ignore[attr-defined]
    yield engine
    engine.close()


def test_list_libraries_names_the_first_failed_files_and_why(with_failures):
    result = call_tool(with_failures, "list_libraries", {})
    (library,) = result.to_json()["libraries"]
    assert library["failed_count"] == FAILURES_SHOWN + 2 and len(library["failed"]) == FAILURES_SHOWN
    assert library["failed"][0] == {"path": str(with_failures.root / "empty-00.md"), "message": "empty file (0 bytes)"}
    text = result.to_markdown()
    assert f"  failed: {with_failures.root / 'empty-00.md'}: empty file (0 bytes)" in text
    assert "  ... and 2 more failed (`linkly status` lists them)" in text


def test_a_search_scoped_to_a_file_that_failed_says_so_instead_of_sending_to_find_paths(with_failures):
    result = call_tool(with_failures, "search", {"query": "wombat", "path_glob": "empty-03"})
    assert result.miss and result.results == []
    lead = result.guidance[0]
    assert f"'{with_failures.root / 'empty-03.md'}' matches it but could not be indexed: empty file (0 bytes)." in lead
    assert "find_paths" not in lead
    elsewhere = call_tool(with_failures, "search", {"query": "wombat", "path_glob": "no-such-folder/"})
    assert "Call `find_paths`" in elsewhere.guidance[0]
