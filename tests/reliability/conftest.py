"""Shared fixtures for the reliability tests: engines over temporary libraries, the `linkly` command,
and a way to make file permissions bind a test subprocess even when the tests run as root."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract.base import ExtractLimits

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench"
EMBEDDING_OFF = {"embedding": {"model": "none"}}


def permission_bound_prefix() -> list[str]:
    """A command prefix under which file permissions apply: root normally overrides them.

    Drops CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding set, so the
    command runs as root but is refused what the mode bits refuse.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be made to apply")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def linkly(env: dict[str, str], *args: str, prefix: list[str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(prefix or []), sys.executable, "-m", "linkly_ls.cli", *args],
        env=env, capture_output=True, text=True, timeout=timeout,
    )


def write_config(path: Path, libraries: dict[str, Path], limits: str = "") -> Path:
    text = '[embedding]\nmodel = "none"\n\n[limits]\nocr = false\n' + limits + "\n"
    for name, folder in libraries.items():
        text += f'\n[[library]]\nname = "{name}"\npaths = ["{folder}"]\n'
    path.write_text(text, encoding="utf-8")
    return path


def cli_env(config: Path, data_dir: Path) -> dict[str, str]:
    return {**os.environ, "LINKLY_CONFIG": str(config), "LINKLY_DATA_DIR": str(data_dir)}


@pytest.fixture
def make_engine(tmp_path: Path) -> Iterator[Callable[..., Engine]]:
    """make_engine({"name": folder, ...}, limits=ExtractLimits(...)) -> an Engine over those libraries."""
    engines: list[Engine] = []

    def build(libraries: dict[str, Path], limits: ExtractLimits | None = None, data_dir: Path | None = None) -> Engine:
        config = Config(
            data_dir=data_dir or tmp_path / f"data-{len(engines)}",
            libraries=[LibraryConfig(name=name, paths=[folder]) for name, folder in libraries.items()],
            limits=limits or ExtractLimits(ocr=False),
            raw=EMBEDDING_OFF,
        )
        engine = Engine(config)
        engines.append(engine)
        return engine

    yield build
    for engine in engines:
        engine.close()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
