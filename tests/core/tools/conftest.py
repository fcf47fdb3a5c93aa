"""The `engine` of the tool tests: the known library of `support.tool_library`, built once per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from linkly_ls.core.engine import Engine
from support.tool_library import build_tool_library


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    engine = build_tool_library(tmp_path_factory.mktemp("tools"))
    yield engine
    engine.close()
