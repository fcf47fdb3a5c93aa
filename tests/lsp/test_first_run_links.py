"""A note opened while the server's first index run goes on: its link warnings wait for the run's end."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from .conftest import start_session, stop_session

pytestmark = pytest.mark.asyncio(loop_scope="function")


async def test_links_are_not_flagged_missing_before_the_first_run_has_indexed_their_targets(tmp_path) -> None:
    """A new vault's every link read "link target not found" for the 20 s of its first run."""
    session = await start_session(tmp_path, "visual-studio-code", client_capabilities("visual-studio-code"))
    published: list[list[types.Diagnostic]] = []  # each set of diagnostics the note showed, as polled

    def look() -> None:
        shown = session.client.diagnostics.get(uri)
        if shown is not None and (not published or shown is not published[-1]):
            published.append(shown)

    try:
        note = session.folders["notes"] / "zz-reading-list.md"
        uri = note.as_uri()
        text = "# Reading\n\n[[ch04-01-what-is-ownership]] then [[no-such-note-zz]]\n"
        note.write_text(text, encoding="utf-8")
        session.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
            )
        )
        deadline = time.monotonic() + 60
        while not any(d.code == "link-missing" for d in (published[-1] if published else [])) and time.monotonic() < deadline:
            look()
            await asyncio.sleep(0.01)
        flagged = [[d.message for d in diagnostics if d.code == "link-missing"] for diagnostics in published]
        assert flagged and flagged[-1] == ["link target not found: no-such-note-zz"], flagged
        assert not any("what-is-ownership" in message for messages in flagged for message in messages), flagged
    finally:
        await stop_session(session)
