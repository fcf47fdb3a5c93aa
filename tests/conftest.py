"""The suite's tiers: markers applied at collection, and the one rule for what is not on this machine.

- `corpus`: needs the shared test data (`support.shared`). Applied to every test that uses the
  `corpus` fixture (directly or through another fixture) or carries `@pytest.mark.corpus(part, ...)`.
  Before such a test is set up, each part it needs is looked for; without it the test is skipped
  with one reason, or failed with LINKLY_REQUIRE_SHARED=1.
- `editors`: every test under tests/editors (real VS Code and Neovim). Their tools are checked by
  the tests themselves through `support.toolchain` (skip, or fail with LINKLY_REQUIRE_EDITORS=1).
- `network`, `slow`: set by the test modules.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support import shared, toolchain

TESTS = Path(__file__).resolve().parent
EDITORS = TESTS / "editors"
#: fixtures that hand a test a part of the shared data
SHARED_FIXTURES = {"corpus": "corpus"}
NEEDS = pytest.StashKey[tuple[str, ...]]()


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [shared.describe(), toolchain.describe()]


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Where the shared data and the editors' tools were found, said again at the end: `scripts/test` runs
    pytest with `-q`, which leaves the header out."""
    if config.get_verbosity() < 0:
        for line in pytest_report_header(config):
            terminalreporter.write_line(line)


def shared_needs(item: pytest.Item) -> tuple[str, ...]:
    parts: list[str] = []
    for mark in item.iter_markers("corpus"):
        parts.extend(mark.args or ("corpus",))
    parts.extend(part for name, part in SHARED_FIXTURES.items() if name in getattr(item, "fixturenames", ()))
    return tuple(dict.fromkeys(parts))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Runs before `-m` selects, so `-m "not corpus"` and `-m "not editors"` see these markers."""
    for item in items:
        needs = shared_needs(item)
        item.stash[NEEDS] = needs
        if needs and item.get_closest_marker("corpus") is None:
            item.add_marker(pytest.mark.corpus(*needs))
        if item.path.is_relative_to(EDITORS):
            item.add_marker(pytest.mark.editors)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or fail) before any fixture copies or indexes data that is not there."""
    for part in item.stash.get(NEEDS, ()):
        shared.shared_path(part)


@pytest.fixture(scope="session")
def corpus() -> Path:
    """The shared corpus: real documents of every format, described by its MANIFEST.tsv."""
    return shared.shared_path("corpus")


@pytest.fixture(autouse=True)
def tool_answers_match_their_output_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every tool answer a test gets in this process is held to the tool's published output schema:
    an MCP client validates structured content against it and refuses an answer that does not match."""
    from support.output_schemas import checked_call

    from linkly_ls.core.tools.registry import Tool

    monkeypatch.setattr(Tool, "call", checked_call(Tool.call))
