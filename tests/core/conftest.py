"""Shared fixtures: an engine over a temporary library, and one over the real shared corpus."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
CORPUS_EXCLUDES = ["/README.md", "/MANIFEST.tsv"]


def make_engine(data_dir: Path, libraries: list[LibraryConfig]) -> Engine:
    return Engine(Config(data_dir=data_dir, libraries=libraries))


@pytest.fixture
def library_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    folder.mkdir()
    return folder


@pytest.fixture
def engine_for(tmp_path: Path) -> Iterator:
    """engine_for(folder, name="lib", **library options) -> an Engine with that one library."""
    engines: list[Engine] = []

    def build(folder: Path, name: str = "lib", **options) -> Engine:
        engine = make_engine(tmp_path / f"data-{len(engines)}", [LibraryConfig(name=name, paths=[folder], **options)])
        engines.append(engine)
        return engine

    yield build
    for engine in engines:
        engine.close()


@pytest.fixture(scope="session")
def corpus_copy(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writable copy of the shared corpus (the root conftest's `corpus`) with the file times of its MANIFEST."""
    target = tmp_path_factory.mktemp("corpus") / "corpus"
    shutil.copytree(corpus, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    subprocess.run([sys.executable, str(target / ".restore-mtimes.py"), str(target)], check=True, capture_output=True)
    return target


@pytest.fixture(scope="session")
def corpus_index(corpus_copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Engine, list]]:
    """The whole corpus (odd/ included) indexed once for the session: (engine, reports)."""
    engine = make_engine(
        tmp_path_factory.mktemp("corpus-data"),
        [LibraryConfig(name="corpus", paths=[corpus_copy], exclude=CORPUS_EXCLUDES)],
    )
    reports = engine.index()
    yield engine, reports
    engine.close()


@pytest.fixture(scope="session")
def corpus_engine(corpus_index: tuple[Engine, list]) -> Engine:
    return corpus_index[0]
