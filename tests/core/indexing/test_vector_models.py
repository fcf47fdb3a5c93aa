"""The writer removes the vectors of models the configuration no longer uses, and only those."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.embedding.settings import BUNDLED_MODEL_ID
from linkly_ls.core.embedding.static import STATIC_MODEL_ID
from linkly_ls.core.engine import Engine
from linkly_ls.core.store.vector_rows import VectorRows, stored_models

OLD_MODEL = "sentence-transformers/old-model"
BUNDLED_FOLDER = "linkly-all-MiniLM-L6-v2-int8-384"
FIRST_PASS_FOLDER = "linkly-all-MiniLM-L6-v2-contextual-384-1-384"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# Ownership\n\nEach value has one owner.\n", encoding="utf-8")
    return tmp_path


@contextmanager
def indexed(root: Path, model: str, first_pass: bool = True) -> Iterator[Engine]:
    config = Config(
        data_dir=root / "data",
        libraries=[LibraryConfig(name="notes", paths=[root / "notes"])],
        raw={"embedding": {"model": model, "first_pass": first_pass}},
    )
    engine = Engine(config)
    try:
        engine.index()
        yield engine
    finally:
        engine.close()


def plant_old_vectors(engine: Engine) -> tuple[Path, Path]:
    """Rows and an index folder of a model used before, and a folder no model's rows name."""
    doc_id = engine.catalog.all_documents()[0].doc_id
    VectorRows(engine.catalog, OLD_MODEL).commit([(OLD_MODEL, 1, doc_id, 0, 1, 3, 7)], [(OLD_MODEL, doc_id, "hash", 1)])
    old = engine.config.data_dir / "vectors" / "sentence-transformers-old-model-768"
    orphan = engine.config.data_dir / "vectors" / "left-by-a-crash-384"
    for folder in (old, orphan):
        folder.mkdir(parents=True)
        (folder / "index.usearch").write_bytes(b"\0" * 64)
    return old, orphan


def vector_folders(engine: Engine) -> list[str]:
    return sorted(folder.name for folder in (engine.config.data_dir / "vectors").iterdir())


def test_a_model_no_longer_configured_loses_its_rows_and_folder_when_the_writer_embeds(root):
    with indexed(root, "bundled") as engine:
        old, orphan = plant_old_vectors(engine)
        assert OLD_MODEL in stored_models(engine.catalog)
        assert engine.vectors.run_until_complete(wait_for_model=True) == 1
        models = stored_models(engine.catalog)
        assert OLD_MODEL not in models and models[BUNDLED_MODEL_ID] >= 1
        assert not old.exists() and not orphan.exists()
        assert vector_folders(engine) == [FIRST_PASS_FOLDER, BUNDLED_FOLDER]


def test_the_first_pass_turned_off_loses_its_table_vectors(root):
    with indexed(root, "bundled") as engine:
        assert engine.vectors.run_first_pass() == 1
        assert STATIC_MODEL_ID in stored_models(engine.catalog)
    with indexed(root, "bundled", first_pass=False) as engine:
        assert engine.vectors.run_until_complete(wait_for_model=True) == 1
        assert list(stored_models(engine.catalog)) == [BUNDLED_MODEL_ID]
        assert vector_folders(engine) == [BUNDLED_FOLDER]


def test_with_vectors_turned_off_nothing_is_removed(root):
    with indexed(root, "none") as engine:
        old, orphan = plant_old_vectors(engine)
        assert engine.vectors.run_until_complete() == 0
        assert OLD_MODEL in stored_models(engine.catalog) and old.exists() and orphan.exists()
