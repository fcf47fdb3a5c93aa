"""`status`: a library folder that cannot be walked now is reported, not only in the output of the run that met it."""

from __future__ import annotations

import shutil
from pathlib import Path

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools.status import status


def test_a_missing_or_emptied_library_folder_is_reported_with_its_documents_kept(tmp_path: Path) -> None:
    folders = {name: tmp_path / name for name in ("kept", "moved", "unmounted")}
    for name, folder in folders.items():
        folder.mkdir()
        (folder / f"{name}.md").write_text(f"# {name}\n\nnarwhal\n", encoding="utf-8")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name=name, paths=[folder]) for name, folder in folders.items()],
                           raw={"embedding": {"model": "none"}}))
    try:
        engine.index()
        assert status(engine).folder_problems == []
        folders["moved"].rename(tmp_path / "elsewhere")
        shutil.rmtree(folders["unmounted"])
        folders["unmounted"].mkdir()  # a mount point left empty
        result = status(engine)
        problems = {library: problem for library, _, problem in result.folder_problems}
        assert set(problems) == {"moved", "unmounted"}
        assert "missing" in problems["moved"] and "empty although documents were indexed" in problems["unmounted"]
        assert {entry["library"] for entry in result.to_json()["folder_problems"]} == {"moved", "unmounted"}
        assert "### Library folders that cannot be read now" in result.to_markdown()
        assert sum(library.document_count for library in result.libraries) == 3, "their documents are kept"
    finally:
        engine.close()
