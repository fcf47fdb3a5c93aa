"""Every language-server feature, on a real server, once per client (Neovim 0.11 and VS Code capabilities)."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException, JsonRpcRequestCancelled
from pytest_lsp import client_capabilities

from linkly_ls.lsp.linemap import normalise

from .conftest import Session, has_extractor, session_fixture

session = session_fixture(client_capabilities)
pytestmark = pytest.mark.asyncio(loop_scope="module")

OWNERSHIP = "ch04-01-what-is-ownership.md"
#: how long to wait for the server to index a change or publish a diagnostic: a deadline for a busy machine
WATCH_TIMEOUT_S = 60.0
needs_pdf = pytest.mark.skipif(not has_extractor("pdf"), reason="the PDF extractor does not exist yet")
needs_epub = pytest.mark.skipif(not has_extractor("epub"), reason="the EPUB extractor does not exist yet")
needs_docx = pytest.mark.skipif(not has_extractor("docx"), reason="the DOCX extractor does not exist yet")


def flatten(symbols: list[types.DocumentSymbol]) -> list[types.DocumentSymbol]:
    out: list[types.DocumentSymbol] = []
    for symbol in symbols:
        out.append(symbol)
        out.extend(flatten(symbol.children or []))
    return out


def flatten_outline(nodes: list[dict]) -> list[dict]:
    out: list[dict] = []
    for node in nodes:
        out.append(node)
        out.extend(flatten_outline(node.get("children", [])))
    return out


async def open_file(session: Session, path: Path, language: str = "markdown") -> str:
    uri = path.as_uri()
    text = path.read_text(encoding="utf-8", errors="replace") if language != "binary" else ""
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=1, text=text)
        )
    )
    return uri


async def document_symbols(session: Session, uri: str) -> list[types.DocumentSymbol]:
    return await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def workspace_symbols(session: Session, query: str) -> list[types.SymbolInformation]:
    return await session.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))


async def test_capabilities_advertised(session: Session) -> None:
    capabilities = session.initialize_result.capabilities
    assert capabilities.document_symbol_provider
    assert capabilities.workspace_symbol_provider
    assert list(capabilities.workspace.text_document_content.schemes) == ["linkly"]
    assert {
        "linkly.search",
        "linkly.grep",
        "linkly.outline",
        "linkly.read",
        "linkly.listLibraries",
        "linkly.explore",
        "linkly.findPaths",
        "linkly.links",
        "linkly.related",
        "linkly.reindex",
    } <= set(capabilities.execute_command_provider.commands)


async def test_settings_libraries_and_workspace_folders(session: Session) -> None:
    status = await session.status()
    assert Path(status["data_dir"]) == session.data_dir  # the dataDir setting wins over LINKLY_DATA_DIR
    assert status["mcp_url"] is None  # mcp.enabled=false from workspace/configuration wins
    libraries = await session.command("linkly.listLibraries", {})
    assert {library["name"] for library in libraries["libraries"]} == {"notes", "books", "papers"}


async def test_document_symbols_of_an_open_markdown_file(session: Session) -> None:
    path = session.path(OWNERSHIP)
    uri = await open_file(session, path)
    symbols = await document_symbols(session, uri)
    outline = await session.command("linkly.outline", {"doc_ids": [await session.doc_id(OWNERSHIP)]})
    titles = [node["title"] for node in flatten_outline(outline["documents"][0]["nodes"])]
    assert [symbol.name for symbol in flatten(symbols)] == titles
    assert symbols[0].name == "What Is Ownership?" and symbols[0].kind == types.SymbolKind.Namespace
    buffer = path.read_text(encoding="utf-8").split("\n")
    for symbol in flatten(symbols):
        heading = buffer[symbol.selection_range.start.line]
        assert "#" in heading and normalise(symbol.name) in normalise(heading), (symbol.name, heading)
        assert symbol.range.start.line <= symbol.selection_range.start.line <= symbol.range.end.line
        for child in symbol.children or []:
            assert symbol.range.start.line <= child.range.start.line <= child.range.end.line <= symbol.range.end.line


@pytest.mark.parametrize("name", ["draft.md", "my draft #1 (é).md"])
async def test_document_symbols_of_an_unsaved_buffer(session: Session, name: str) -> None:
    """A name the client quotes in the URI (`my%20draft%20%231%20%28%C3%A9%29.md`) is the same buffer."""
    uri = (session.root / "scratch" / name).as_uri()
    text = "---\ntitle: draft\n---\n# Plan\n\nintro\n\n## Step one\n\ntext\n\n## Step two\nmore"
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text=text)
        )
    )
    symbols = await document_symbols(session, uri)
    assert [(s.name, s.selection_range.start.line) for s in flatten(symbols)] == [
        ("Plan", 3),
        ("Step one", 7),
        ("Step two", 11),
    ]
    assert symbols[0].range.end.line == 12


@pytest.mark.parametrize("uri_of", [lambda root: "untitled:Untitled-1", lambda root: (root / "scratch" / "plan.mdtext").as_uri()])
async def test_document_symbols_of_a_buffer_named_by_no_type_follow_its_language(session: Session, uri_of) -> None:
    """A new note is first an untitled buffer: its language, not its name, says it is Markdown."""
    uri = uri_of(session.root)
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=1, text="# New note\n\n## Sub\ntext")
        )
    )
    symbols = await document_symbols(session, uri)
    assert [(s.name, s.selection_range.start.line) for s in flatten(symbols)] == [("New note", 0), ("Sub", 2)]


async def test_a_relative_path_is_read_from_the_workspace_folder_that_has_it(session: Session) -> None:
    name = "sect.backup.html"  # in the `books` workspace folder, the second
    view = await session.request("linkly/uriForPath", {"path": name})
    assert view["doc_id"] == await session.doc_id(name)


@needs_pdf
async def test_document_symbols_of_a_pdf_view_are_its_outline(session: Session) -> None:
    view = await session.request("linkly/uriForPath", {"path": str(session.path("pdflatex-outline.pdf"))})
    assert re.fullmatch(r"linkly://doc/[0-9a-f]{12}", view["uri"])
    symbols = flatten(await document_symbols(session, view["uri"]))
    outline = await session.command("linkly.outline", {"doc_ids": [view["doc_id"]]})
    nodes = flatten_outline(outline["documents"][0]["nodes"])
    assert len(nodes) >= 3
    assert [(s.name, s.range.start.line + 1, s.range.end.line + 1) for s in symbols] == [
        (node["title"], node["start_line"], node["end_line"]) for node in nodes
    ]


async def test_workspace_symbol_points_into_markdown_files(session: Session) -> None:
    symbols = await workspace_symbols(session, "ownership")
    assert symbols and symbols[0].location.uri == session.path(OWNERSHIP).as_uri()
    for symbol in symbols:
        assert symbol.location.uri.startswith("file://")
        line = (
            Path(symbol.location.uri.removeprefix("file://"))
            .read_text(encoding="utf-8")
            .split("\n")[symbol.location.range.start.line]
        )
        assert "ownership" in line.lower() or "owner" in line.lower(), (symbol.name, line)


@needs_pdf
async def test_workspace_symbol_points_into_pdf_views(session: Session) -> None:
    symbols = await workspace_symbols(session, "gefburn")
    assert symbols and symbols[0].location.uri.startswith("linkly://doc/")
    text = await session.request("linkly/read", {"uri": symbols[0].location.uri})
    assert "gefburn" in text["text"].split("\n")[symbols[0].location.range.start.line]


@needs_pdf
async def test_workspace_symbol_names_say_the_page_and_their_containers_the_section(session: Session) -> None:
    """VS Code matches a query against a name's first 128 characters only: a long title and section path
    before the snippet hid most of a PDF's hits from Ctrl+T."""
    symbols = await workspace_symbols(session, "gefburn")
    pdf = next(symbol for symbol in symbols if symbol.location.uri.startswith("linkly://doc/"))
    assert re.match(r"^.+ · p\. \d+: .*gefburn", pdf.name, re.IGNORECASE), pdf.name
    assert re.match(r"^(Foo|Bar|Baz) · papers · pdf · /", pdf.container_name), pdf.container_name
    notes = await workspace_symbols(session, "ownership")
    assert notes[0].name.startswith("What Is Ownership?: "), notes[0].name
    assert notes[0].container_name.startswith("What Is Ownership?") and " · notes · md · " in notes[0].container_name
    assert " · p. " not in notes[0].name
    assert all(len(symbol.name) <= 128 for symbol in symbols + notes)


async def test_empty_query_is_an_empty_list(session: Session) -> None:
    assert await workspace_symbols(session, "   ") == []


async def test_a_word_typed_halfway_finds_the_notes_it_begins_the_name_of(session: Session) -> None:
    """The words of document names are gathered in the background, started by the first query: typing on
    finds them once they are (a keystroke later, here up to 30 s on a busy machine)."""
    deadline = time.monotonic() + 30
    symbols = await workspace_symbols(session, "Ownersh")
    while not symbols and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        symbols = await workspace_symbols(session, "Ownersh")
    assert symbols and symbols[0].name.startswith("What Is Ownership?"), [symbol.name for symbol in symbols]


async def test_read_and_text_document_content_serve_the_canonical_lines(session: Session) -> None:
    doc_id = await session.doc_id(OWNERSHIP)
    canonical: list[str] = []
    offset = 1
    while offset:
        page = await session.command("linkly.read", {"doc_id": doc_id, "offset": offset, "limit": 500})
        canonical += [line["text"] for line in page["lines"]]
        offset = page["next_offset"]
    whole = await session.request("linkly/read", {"doc_id": doc_id})
    assert whole["text"] == "\n".join(canonical) and whole["total_lines"] == len(canonical)
    assert whole["uri"] == f"linkly://doc/{doc_id}" and whole["next_offset"] is None
    page = await session.request("linkly/read", {"uri": whole["uri"], "offset": 11, "limit": 5})
    assert page["text"].split("\n") == canonical[10:15] and page["next_offset"] == 16
    by_path = await session.request("linkly/read", {"path": str(session.path(OWNERSHIP))})
    assert by_path["doc_id"] == doc_id
    content = await session.client.workspace_text_document_content_async(
        types.TextDocumentContentParams(uri=whole["uri"])
    )
    assert content.text == whole["text"]


@needs_epub
@needs_docx
async def test_binary_formats_map_to_their_views(session: Session) -> None:
    for name, word in (("sample-ebook.epub", "paragraph"), ("dpkg cheat sheet.docx", "dpkg")):
        view = await session.request("linkly/uriForPath", {"path": str(session.path(name))})
        read = await session.request("linkly/read", {"uri": view["uri"]})
        assert word in read["text"] and read["location_uri"] == view["uri"]


async def test_document_symbols_of_a_file_neither_open_nor_indexed_are_none(session: Session, tmp_path) -> None:
    outside = tmp_path / "outside secret.md"
    outside.write_text("# zebrafish key material\n\ntext\n", encoding="utf-8")
    assert not await document_symbols(session, outside.as_uri())  # the file is never read from disk
    indexed = await document_symbols(session, session.path(OWNERSHIP).as_uri())  # not open, but indexed
    assert indexed and indexed[0].name == "What Is Ownership?"


async def test_unknown_linkly_uris_and_paths_are_refused(session: Session) -> None:
    for uri in ("linkly://doc/000000000000", "linkly://doc/../../etc/passwd", "linkly://other/abc"):
        with pytest.raises(JsonRpcException):
            await session.client.workspace_text_document_content_async(types.TextDocumentContentParams(uri=uri))
        with pytest.raises(JsonRpcException):
            await session.request("linkly/read", {"uri": uri})
    with pytest.raises(JsonRpcException, match="not an indexed document: it is inside no library"):
        await session.request("linkly/read", {"path": "/etc/passwd"})
    # a note typed in a library's folder and not saved: not "outside every library" (backlinks, related, grep)
    with pytest.raises(JsonRpcException, match="is not an indexed document yet: it is not saved yet"):
        await session.request("linkly/read", {"path": str(session.folders["notes"] / "Brand new unsaved.md")})


async def test_every_command_returns_the_tools_json(session: Session) -> None:
    doc_id = await session.doc_id(OWNERSHIP)
    answers = {
        "linkly.search": await session.command("linkly.search", {"query": "ownership", "limit": 3}),
        "linkly.grep": await session.command("linkly.grep", {"pattern": "heap", "doc_id": doc_id, "limit": 2}),
        "linkly.outline": await session.command("linkly.outline", {"doc_ids": [doc_id]}),
        "linkly.read": await session.command("linkly.read", {"doc_id": doc_id, "limit": 3}),
        "linkly.listLibraries": await session.command("linkly.listLibraries"),
        "linkly.explore": await session.command("linkly.explore", {"library": "notes"}),
        "linkly.findPaths": await session.command("linkly.findPaths", {"patterns": ["notes"]}),
        "linkly.reindex": await session.command("linkly.reindex", {"library": "notes"}),
    }
    assert all("now" in answer["_meta"] for answer in answers.values())
    assert answers["linkly.search"]["results"][0]["doc_id"] == doc_id
    assert answers["linkly.grep"]["matches"] or answers["linkly.grep"].get("total_matches")
    assert len(answers["linkly.read"]["lines"]) == 3
    assert answers["linkly.reindex"]["reports"][0]["library"] == "notes"
    assert answers["linkly.reindex"]["reports"][0]["indexed"] == 0  # nothing changed


async def test_a_reindex_of_paths_that_cannot_be_paths_is_refused_as_such(session: Session) -> None:
    for paths in (["\u0000"], ["notes", ""], []):
        with pytest.raises(JsonRpcException, match="`paths` must be"):
            await session.command("linkly.reindex", {"paths": paths})


async def test_command_errors_carry_the_tool_message_only(session: Session) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await session.command("linkly.read", {"doc_id": "not-an-id"})
    assert "`doc_id` must be a document id" in caught.value.message and caught.value.data is None
    with pytest.raises(JsonRpcException) as caught:
        await session.command("linkly.read", {"doc_id": "0123456789ab"})
    assert "is not an indexed document" in caught.value.message
    with pytest.raises(JsonRpcException, match="does not exist"):
        await session.command("linkly.reindex", {"library": "nope"})


async def test_a_cancelled_workspace_symbol_request_is_answered_as_cancelled(session: Session) -> None:
    protocol = session.client.protocol
    pending = asyncio.wrap_future(
        protocol.send_request(
            types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query="ownership heap"), msg_id=f"cancel-{session.name}"
        )
    )
    protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=f"cancel-{session.name}"))
    with pytest.raises(JsonRpcRequestCancelled):
        await pending
    assert await workspace_symbols(session, "ownership")


async def test_a_superseded_query_gets_no_stale_results(session: Session) -> None:
    """An older query is either answered before the newer one, or refused as ContentModified:
    it is never answered after its replacement (which would show stale results)."""
    protocol = session.client.protocol
    finished: list[str] = []
    older = asyncio.wrap_future(protocol.send_request(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query="own")))
    newer = asyncio.wrap_future(
        protocol.send_request(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query="ownership"))
    )
    older.add_done_callback(lambda _: finished.append("older"))
    newer.add_done_callback(lambda _: finished.append("newer"))
    older_result, newer_result = await asyncio.gather(older, newer, return_exceptions=True)
    assert newer_result and not isinstance(newer_result, BaseException)
    if isinstance(older_result, JsonRpcException):
        assert older_result.code == JsonRpcContentModified.CODE
    else:
        assert finished == ["older", "newer"], "a superseded query was answered after its replacement"


async def test_a_file_saved_on_disk_is_found_within_seconds(session: Session) -> None:
    word = f"quixotically{session.name.split('@')[0].replace('-', '')}"
    path = session.folders["notes"] / "fresh-note.md"
    path.write_text(f"# Fresh note\n\nA {word} new paragraph.\n", encoding="utf-8")
    symbols = await wait_for_symbols(session, word)  # how soon is bench/freshness.py's figure, not asserted here
    assert symbols, f"the new file was not indexed within {WATCH_TIMEOUT_S:g} s"
    assert symbols[0].location.uri == path.as_uri() and symbols[0].location.range.start.line == 2
    session.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert await workspace_symbols(session, word)


async def test_dynamic_watcher_registration_follows_the_client(session: Session) -> None:
    offers = client_capabilities(session.name).workspace.did_change_watched_files.dynamic_registration
    registered = [r for r in session.registrations if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert bool(registered) == bool(offers)
    for registration in registered:  # documents, and the ignore files that decide which are indexed
        options = registration.register_options
        watchers = options["watchers"] if isinstance(options, dict) else options.watchers
        patterns = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern for w in watchers]
        globs = {(p["pattern"] if isinstance(p, dict) else getattr(p, "pattern", p)).rsplit("/", 1)[-1] for p in patterns}
        assert ".{gitignore,ignore}" in globs and any(glob.startswith("*.{") for glob in globs), globs


async def test_a_broken_file_shows_why_it_failed(session: Session) -> None:
    uri = await open_file(session, session.path("report-truncated.docx"), language="binary")
    deadline = time.monotonic() + WATCH_TIMEOUT_S
    while uri not in session.client.diagnostics and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    (diagnostic,) = session.client.diagnostics[uri]
    assert diagnostic.range.start.line == 0 and diagnostic.severity == types.DiagnosticSeverity.Error
    assert "could not index" in diagnostic.message and "ZIP" in diagnostic.message


async def wait_for_symbols(
    session: Session, query: str, timeout: float = WATCH_TIMEOUT_S
) -> list[types.SymbolInformation]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        symbols = await workspace_symbols(session, query)
        if symbols:
            return symbols
        await asyncio.sleep(0.2)
    return []


async def test_added_workspace_folders_and_libraries_are_indexed(session: Session) -> None:
    """Runs last: it adds libraries to the server."""
    folder = session.root / "library" / "extra folder"
    folder.mkdir()
    (folder / "extra.md").write_text("# Extra\n\nA zephyrine folder note.\n", encoding="utf-8")
    session.client.workspace_did_change_workspace_folders(
        types.DidChangeWorkspaceFoldersParams(
            event=types.WorkspaceFoldersChangeEvent(
                added=[types.WorkspaceFolder(uri=folder.as_uri(), name="extra folder")], removed=[]
            )
        )
    )
    assert await wait_for_symbols(session, "zephyrine")
    configured = session.root / "library" / "configured"
    configured.mkdir()
    (configured / "configured.txt").write_text("A borealine configured note.\n", encoding="utf-8")
    library = {"name": "configured", "paths": [str(configured)]}
    session.client.set_configuration([library], section="linkly.libraries")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    (hit,) = await wait_for_symbols(session, "borealine")
    assert hit.location.uri == (configured / "configured.txt").as_uri()
    libraries = await session.command("linkly.listLibraries")
    assert {"extra folder", "configured"} <= {library["name"] for library in libraries["libraries"]}
    # a settings library taking the workspace folder's own folder: the folder's library gives way to it,
    # which would otherwise keep every file and leave the named library empty
    mine = {"name": "mine", "paths": [str(folder)]}
    session.client.set_configuration([library, mine], section="linkly.libraries")
    session.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        counts = {entry["name"]: entry["document_count"] for entry in (await session.command("linkly.listLibraries"))["libraries"]}
        if counts.get("mine") == 1 and "extra folder" not in counts:
            break
        await asyncio.sleep(0.2)
    assert counts.get("mine") == 1 and "extra folder" not in counts


async def test_links_of_a_markdown_buffer_named_by_no_type_are_read(session: Session) -> None:
    path = session.root / "scratch" / "links.mdtext"
    path.parent.mkdir(exist_ok=True)
    text = "# Links\n\nSee [[no-such-note-zz]] here.\n"
    path.write_text(text, encoding="utf-8")
    document = types.TextDocumentItem(uri=path.as_uri(), language_id="markdown", version=1, text=text)
    session.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=document))
    position = types.Position(line=2, character=8)
    hover = await session.client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=position)
    )
    assert hover is not None and "Broken link" in hover.contents.value and "no-such-note-zz" in hover.contents.value
