"""A language server that only reads the index (another process is its writer) follows what that writer indexes."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from linkly_ls.core.config import Config
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.writer import IndexWriter

from .conftest import start_session, stop_session

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_a_reader_refreshes_its_warnings_when_the_writer_elsewhere_indexes(tmp_path) -> None:
    """A second editor kept `link target not found` for a note another process had just indexed, until a key
    was pressed in it."""
    engine = Engine(Config(data_dir=tmp_path / "index", raw={"embedding": {"model": "none"}}))
    writer = IndexWriter(engine, watch=False, on_reports=lambda reports: None)
    writer.claim()  # this process is the writer: the server started next only reads
    session = await start_session(tmp_path, "visual-studio-code", client_capabilities("visual-studio-code"))
    try:
        note = session.folders["notes"] / "reader-note.md"
        text = "# Reader\n\nSee [[reader-target-qq]].\n"
        note.write_text(text, encoding="utf-8")
        uri = note.as_uri()
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text))
        )

        async def warnings(present: bool) -> list[types.Diagnostic]:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                found = [d for d in session.client.diagnostics.get(uri, []) if d.code == "link-missing"]
                if bool(found) == present:
                    return found
                await asyncio.sleep(0.1)
            raise AssertionError(f"warnings {'never came' if present else 'stayed'}: {session.client.diagnostics.get(uri)}")

        assert [d.range.start.line for d in await warnings(True)] == [2]
        (session.folders["notes"] / "reader-target-qq.md").write_text("# Target\n\ntext\n", encoding="utf-8")
        notes = str(session.folders["notes"])
        deadline = time.monotonic() + 60  # the server records its workspace folders as libraries as it starts
        while not any(notes in library.paths for library in engine.libraries()) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        await asyncio.to_thread(writer.index)  # the libraries the server recorded, indexed by this process
        assert await warnings(False) == []
        (session.folders["notes"] / "reader-target-qq.md").unlink()  # and once more, later: the note goes
        await asyncio.to_thread(writer.index)
        assert [d.range.start.line for d in await warnings(True)] == [2]
        status = await session.request("linkly/status")
        assert not status["writer"]
    finally:
        await stop_session(session)
        writer.stop()
        engine.close()
