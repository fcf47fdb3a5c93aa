"""`$/progress` while indexing: only for clients that offer `window.workDoneProgress`."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import client_capabilities

from .conftest import Session, capabilities_without_progress, start_session, stop_session

pytestmark = pytest.mark.asyncio(loop_scope="module")
VARIANTS = {
    "visual-studio-code": lambda: client_capabilities("visual-studio-code"),
    "neovim@v0.11.0 without workDoneProgress": lambda: capabilities_without_progress("neovim@v0.11.0"),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=list(VARIANTS))
async def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    tmp_root = tmp_path_factory.mktemp("progress")
    session = await start_session(tmp_root, request.param, VARIANTS[request.param]())
    await session.wait_indexed()
    yield session
    await stop_session(session)


def runs(session: Session) -> list[list[object]]:
    return list(session.client.progress_reports.values())


async def test_indexing_reports_progress_only_when_the_client_supports_it(session: Session) -> None:
    supported = session.client.capabilities.window.work_done_progress
    if not supported:
        assert runs(session) == []
        await session.command("linkly.reindex", {})
        assert runs(session) == []
        return
    (first,) = runs(session)
    assert isinstance(first[0], types.WorkDoneProgressBegin) and first[0].title == "Indexing documents"
    assert isinstance(first[-1], types.WorkDoneProgressEnd) and "indexed" in first[-1].message
    reports = [value for value in first if isinstance(value, types.WorkDoneProgressReport)]
    assert reports and reports[-1].percentage == 100
    await session.command("linkly.reindex", {"library": "notes"})
    assert len(runs(session)) == 2

