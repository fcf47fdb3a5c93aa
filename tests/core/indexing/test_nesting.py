"""A library inside another: its folder's files are its own, whichever library indexed them first."""

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine


def _tree(root):
    inner = root / "outer" / "inner"
    inner.mkdir(parents=True)
    for name in ("a.md", "b.md"):
        (inner / name).write_text(f"# {name}\n\nquokka\n", encoding="utf-8")
    (root / "outer" / "top.md").write_text("# Top\n\nnumbat\n", encoding="utf-8")
    return root / "outer", inner


@pytest.mark.parametrize("first", ["outer", "inner"])
def test_the_innermost_library_holds_its_folders_files_whichever_indexed_first(tmp_path, first):
    outer, inner = _tree(tmp_path)
    libraries = {"outer": LibraryConfig(name="outer", paths=[outer]), "inner": LibraryConfig(name="inner", paths=[inner])}
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[libraries[first]], raw={"embedding": {"model": "none"}}))
    engine.index()
    engine.close()
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=list(libraries.values()), raw={"embedding": {"model": "none"}}))
    try:
        for _ in range(2):  # and a second run changes nothing
            reports = {report.library: report for report in engine.index()}
            held = {path.rsplit("/", 1)[-1]: engine.catalog.by_path(path).library for path in engine.catalog.paths()}
            assert held == {"a.md": "inner", "b.md": "inner", "top.md": "outer"}
        assert reports["outer"].skipped.get("other_library") == 2
    finally:
        engine.close()
