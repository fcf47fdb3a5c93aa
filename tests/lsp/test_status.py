"""`linkly/status` from the first moment (`starting`) to `ready`, with the numbers of `linkly status`;
forgetting libraries from the editor: `linkly.removeLibrary` and a closed workspace folder."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from .conftest import INDEX_TIMEOUT_S, Session, start_session, stop_session

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLIENT = "visual-studio-code"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def started(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Session, dict]]:
    """A server and the answer to the first `linkly/status`, sent as soon as the session is initialized."""
    session = await start_session(tmp_path_factory.mktemp("status"), CLIENT, client_capabilities(CLIENT))
    first = await session.status()
    yield session, first
    await stop_session(session)


async def wait_for_state(session: Session, state: str, timeout: float = INDEX_TIMEOUT_S) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status = await session.status()
        if status["state"] == state:
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"no {state!r} state in {timeout} s: {status}")
        await asyncio.sleep(0.1)


async def wait_for_libraries(session: Session, done, timeout: float = INDEX_TIMEOUT_S) -> dict[str, dict]:
    """`linkly.listLibraries` by name once `done(libraries)` holds (the last answer when time runs out)."""
    deadline = time.monotonic() + timeout
    while True:
        libraries = {library["name"]: library for library in (await session.command("linkly.listLibraries"))["libraries"]}
        if done(libraries) or time.monotonic() > deadline:
            return libraries
        await asyncio.sleep(0.1)


async def test_status_answers_while_the_server_starts_then_says_ready_with_the_numbers(started) -> None:
    session, first = started
    assert first["state"] == "starting" and first["writer"] is False
    status = await wait_for_state(session, "ready")
    assert status["writer"] is True and status["indexing"] is False
    assert isinstance(status["writer_pid"], int) and status["activity"] == "watching"
    details = {library["name"]: library for library in status["library_details"]}
    assert set(details) == {"notes", "books", "papers"} and status["libraries"] == 3
    for library in details.values():
        assert {"document_count", "skipped_count", "skipped", "failed_count", "ocr_pending_count", "vector_coverage"} <= set(library)
    assert details["books"]["failed_count"] == 1 and status["failed"] >= 1  # the truncated DOCX
    assert status["documents"] == sum(library["document_count"] for library in details.values())


async def test_files_a_gitignore_keeps_out_are_counted_in_the_reindex_report_and_the_status(started) -> None:
    session, _ = started
    await wait_for_state(session, "ready")
    notes = session.folders["notes"]
    ignored = sorted(notes.glob("*.md"))[0]
    (notes / ".gitignore").write_text(f"{ignored.name}\n", encoding="utf-8")
    answer = await session.command("linkly.reindex", {"library": "notes"})
    (report,) = answer["reports"]
    assert report["skipped"] == {"gitignore": 1} and report["removed"] == 1
    status = await wait_for_state(session, "ready")
    notes_status = next(library for library in status["library_details"] if library["name"] == "notes")
    assert notes_status["skipped_count"] == 1 and notes_status["skipped"] == {"gitignore": 1}


async def test_a_settings_library_is_refused_and_a_removed_workspace_folder_is_forgotten(started) -> None:
    """Runs last: it removes libraries."""
    session, _ = started
    await wait_for_state(session, "ready")
    with pytest.raises(JsonRpcException, match="linkly.libraries"):
        await session.command("linkly.removeLibrary", {"name": "papers"})
    papers = {"name": "papers", "paths": [str(session.folders["papers"])], "description": "PDF papers"}
    late_folder = session.root / "late"
    late_folder.mkdir()
    (late_folder / "late.md").write_text("# Late\n\nA glimmerwort note.\n", encoding="utf-8")
    late = {"name": "late", "paths": [str(late_folder)]}
    session.client.set_configuration([papers, late], section="linkly.libraries")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    listed = await wait_for_libraries(session, lambda libraries: libraries.get("late", {}).get("document_count") == 1)
    assert listed["late"]["source"] == "editor" and listed["late"]["document_count"] == 1
    with pytest.raises(JsonRpcException, match="linkly.libraries"):
        await session.command("linkly.removeLibrary", {"name": "late"})
    session.client.set_configuration([papers], section="linkly.libraries")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert "late" not in await wait_for_libraries(session, lambda libraries: "late" not in libraries)
    assert (late_folder / "late.md").exists()
    books = session.folders["books"]
    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[], removed=[types.WorkspaceFolder(uri=books.as_uri(), name="books")]
            )
        )
    )
    deadline = time.monotonic() + 30
    while True:
        libraries = {library["name"] for library in (await session.command("linkly.listLibraries"))["libraries"]}
        if "books" not in libraries or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert libraries == {"notes", "papers"}
    assert any(books.iterdir())  # the folder itself is untouched
    removed = await session.command("linkly.removeLibrary", {"name": "notes"})
    assert removed["library"] == "notes" and removed["removed_documents"] > 0
    status = await wait_for_state(session, "ready")
    assert [library["name"] for library in status["library_details"]] == ["papers"]
    assert status["documents"] == status["library_details"][0]["document_count"]
    with pytest.raises(JsonRpcException, match="does not exist"):
        await session.command("linkly.removeLibrary", {"name": "notes"})


@pytest.mark.asyncio(loop_scope="function")
async def test_an_index_that_cannot_be_opened_is_failed_and_not_indexing(tmp_path) -> None:
    """A `dataDir` that is a file: the status bar span "indexing…" for good, `indexing` being true."""
    import os
    import sys

    from pytest_lsp import ClientServerConfig

    (tmp_path / "a-file").write_text("not an index\n", encoding="utf-8")
    environment = {**os.environ, "LINKLY_DATA_DIR": str(tmp_path / "unused"), "LINKLY_CONFIG": str(tmp_path / "none.toml")}
    client = await ClientServerConfig(server_command=[sys.executable, "-m", "linkly_ls"], server_env=environment).start()
    client.set_configuration({"embeddingModel": "none"}, section="linkly")
    await client.initialize_session(
        types.InitializeParams(capabilities=client_capabilities(CLIENT), initialization_options={"dataDir": str(tmp_path / "a-file")})
    )
    try:
        deadline = time.monotonic() + 30
        while (status := await client.protocol.send_request_async("linkly/status", {})).state != "failed" and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert (status.state, status.indexing) == ("failed", False), status
        assert "it is a file, not a folder" in status.error
    finally:
        await client.shutdown_session()
        await client.stop()
