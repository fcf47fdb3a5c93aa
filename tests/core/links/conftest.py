"""A small linked notes folder (fixtures/linked-notes), copied and indexed for real."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.store.records import make_doc_id

LINKED_NOTES = Path(__file__).resolve().parents[3] / "fixtures" / "linked-notes"


@pytest.fixture
def notes(tmp_path: Path):
    root = tmp_path / "notes"
    shutil.copytree(LINKED_NOTES, root)
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="notes", paths=[root])]))
    engine.index()
    engine.root = root
    engine.doc = lambda relative: make_doc_id(str(root / relative))
    yield engine
    engine.close()
