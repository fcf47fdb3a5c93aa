"""Links in the editor, on a real server, once per client: definition, hover, references,
completion, broken-link diagnostics, and the links/related commands."""

from __future__ import annotations

import asyncio
import os
import time

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from linkly_ls.lsp.features.diagnostics import TYPING_PAUSE_S

from .conftest import Session, has_extractor, session_fixture

session = session_fixture(client_capabilities)
pytestmark = pytest.mark.asyncio(loop_scope="module")

OWNERSHIP = "ch04-01-what-is-ownership.md"
STRUCTS = "ch05-01-defining-structs.md"


def open_text(session: Session, uri: str, text: str, version: int = 1) -> None:
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=version, text=text)
        )
    )


def position_of(text: str, needle: str, offset: int = 1) -> types.Position:
    for number, line in enumerate(text.split("\n")):
        if needle in line:
            return types.Position(line=number, character=line.index(needle) + offset)
    raise AssertionError(f"{needle!r} not in the text")


def heading_line(text: str, heading: str) -> int:
    return next(number for number, line in enumerate(text.split("\n")) if line.lstrip("#").strip() == heading)


async def test_definition_and_hover_on_a_reference_link(session: Session) -> None:
    path = session.path(STRUCTS)
    text = path.read_text(encoding="utf-8")
    open_text(session, path.as_uri(), text)
    position = position_of(text, "[“Stack-Only Data: Copy”][copy]", offset=3)
    document = types.TextDocumentIdentifier(uri=path.as_uri())
    locations = await session.client.text_document_definition_async(types.DefinitionParams(text_document=document, position=position))
    ownership = session.path(OWNERSHIP)
    target_line = heading_line(ownership.read_text(encoding="utf-8"), "Stack-Only Data: Copy")
    assert [(location.uri, location.range.start.line) for location in locations] == [(ownership.as_uri(), target_line)]
    hover = await session.client.text_document_hover_async(types.HoverParams(text_document=document, position=position))
    assert hover.contents.value.startswith("**What Is Ownership?** › Stack-Only Data: Copy")
    off_link = types.Position(line=position.line, character=0)
    assert await session.client.text_document_definition_async(types.DefinitionParams(text_document=document, position=off_link)) in ([], None)


async def test_references_on_a_heading_and_on_the_title(session: Session) -> None:
    ownership = session.path(OWNERSHIP)
    text = ownership.read_text(encoding="utf-8")
    open_text(session, ownership.as_uri(), text)
    document = types.TextDocumentIdentifier(uri=ownership.as_uri())
    move = types.Position(line=heading_line(text, "Variables and Data Interacting with Move"), character=6)
    found = await session.client.text_document_references_async(
        types.ReferenceParams(text_document=document, position=move, context=types.ReferenceContext(include_declaration=False))
    )
    structs_text = session.path(STRUCTS).read_text(encoding="utf-8")
    link_line = position_of(structs_text, "[“Variables and Data Interacting with").line
    assert [(location.uri, location.range.start.line) for location in found] == [(session.path(STRUCTS).as_uri(), link_line)]
    everything = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=document, position=types.Position(line=0, character=3), context=types.ReferenceContext(include_declaration=False)
        )
    )
    assert len(everything) > len(found) and all(location.uri == session.path(STRUCTS).as_uri() for location in everything)


async def test_broken_links_are_warnings_at_their_range(session: Session) -> None:
    path = session.path(STRUCTS)
    text = path.read_text(encoding="utf-8")
    open_text(session, path.as_uri(), text)  # opened here too: the test must not rely on an earlier one
    deadline = time.monotonic() + 60  # published after the file was opened, later on a busy machine
    while not session.client.diagnostics.get(path.as_uri()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    warnings = [d for d in session.client.diagnostics[path.as_uri()] if d.code == "link-missing"]
    tuple_link = position_of(text, "[“The Tuple Type”][tuples]", offset=0)
    assert warnings and warnings[0].severity == types.DiagnosticSeverity.Warning
    assert (warnings[0].range.start.line, warnings[0].range.start.character) == (tuple_link.line, tuple_link.character)
    assert warnings[0].message == "link target not found: ch03-02-data-types.html#the-tuple-type"


async def test_an_html_files_broken_links_are_warnings_on_its_source_lines(session: Session) -> None:
    """An HTML file's indexed lines are its visible text; the editor shows its source."""
    path = session.path("sect.backup.html")
    text = path.read_text(encoding="utf-8")
    source = text.split("\n")
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=path.as_uri(), language_id="html", version=1, text=text)
        )
    )
    deadline = time.monotonic() + 60
    while not session.client.diagnostics.get(path.as_uri()) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    warnings = [d for d in session.client.diagnostics[path.as_uri()] if d.code == "link-missing"]
    targets = [
        "advanced-administration.html#sect.raid-soft",
        "sect.remote-login.html#sect.ssh-key-based-auth",
        "sect.automated-installation.html#sect.simple-cdd",
        "sect.graphical-desktops.html#sect.gnome-desktop",
    ]
    assert [warning.message for warning in warnings] == [f"link target not found: {target}" for target in targets]
    encoding = session.initialize_result.capabilities.position_encoding or "utf-16"
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[str(encoding)]
    for warning, target in zip(warnings, targets, strict=True):
        line = source[warning.range.start.line].encode(f"{encoding}-le" if width > 1 else encoding)
        start, end = warning.range.start.character * width, warning.range.end.character * width
        shown = line[start:end].decode(f"{encoding}-le" if width > 1 else encoding)
        assert shown.startswith("<a ") and f'href="{target}"' in shown, (warning.range, line)
    document = types.TextDocumentIdentifier(uri=path.as_uri())
    on_link = position_of(text, 'href="sect.remote-login.html', offset=8)
    hover = await session.client.text_document_hover_async(types.HoverParams(text_document=document, position=on_link))
    assert hover is not None and "sect.remote-login.html#sect.ssh-key-based-auth" in hover.contents.value
    off_link = types.Position(line=on_link.line, character=0)
    assert await session.client.text_document_hover_async(types.HoverParams(text_document=document, position=off_link)) is None


async def test_a_link_to_a_file_that_exists_unindexed_opens_it_and_says_why(session: Session) -> None:
    outside = session.root / "outside.md"
    outside.write_text("# Outside\n", encoding="utf-8")
    notes = session.folders["notes"]
    uri = (notes / "unindexed-links.md").as_uri()
    failed = session.folders["books"] / "report-truncated.docx"
    text = f"[bad]({os.path.relpath(failed, notes)}) and [out]({os.path.relpath(outside, notes)})\n"
    open_text(session, uri, text)
    document = types.TextDocumentIdentifier(uri=uri)
    for needle, target, said in (("[bad]", failed, "could not be indexed: not a readable DOCX"), ("[out]", outside, "outside every library")):
        position = position_of(text, needle, offset=2)
        locations = await session.client.text_document_definition_async(types.DefinitionParams(text_document=document, position=position))
        assert [location.uri for location in locations] == [target.as_uri()]
        hover = await session.client.text_document_hover_async(types.HoverParams(text_document=document, position=position))
        assert said in hover.contents.value, hover.contents.value


async def test_completion_after_wikilink_and_inline_link_openers(session: Session) -> None:
    uri = (session.folders["notes"] / "draft.md").as_uri()
    open_text(session, uri, "See [[ch04\nand [x](ch05\nand [[ch04-01-what-is-ownership#owner\n")
    document = types.TextDocumentIdentifier(uri=uri)

    async def labels(line: int, character: int) -> list[str]:
        answer = await session.client.text_document_completion_async(
            types.CompletionParams(text_document=document, position=types.Position(line=line, character=character))
        )
        return [item.label for item in answer.items]

    assert (await labels(0, 10))[0] == "ch04-01-what-is-ownership"
    assert (await labels(1, 15))[0] == "ch05-01-defining-structs.md"
    assert "Ownership Rules" in await labels(2, 41)


async def test_wikilink_completion_finds_a_note_by_an_alias_of_its_front_matter(session: Session) -> None:
    person = session.folders["notes"] / "Bob Smith.md"
    person.write_text("---\naliases: [Robert Smith]\n---\n# Bob Smith\n\nledgers\n", encoding="utf-8")
    await session.command("linkly.reindex", {"paths": [str(person)]})
    uri = (session.folders["notes"] / "alias-draft.md").as_uri()
    open_text(session, uri, "Met [[Robert\n")
    answer = await session.client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=12))
    )
    assert [item.label for item in answer.items][:1] == ["Bob Smith"]
    # a client that keeps only what starts with the typed word (Neovim) keeps it, in the server's order
    assert answer.items[0].filter_text.startswith("Robert") and answer.items[0].sort_text == "00000"
    assert [item.sort_text for item in answer.items] == sorted(item.sort_text for item in answer.items)


async def test_completion_of_the_notes_own_headings_and_of_block_ids(session: Session) -> None:
    """`[[#` offers the note's own headings as typed, `[[#^` its block ids, `[[Other#^` another note's."""
    other = session.folders["notes"] / "Launch.md"
    other.write_text("# Launch\n\nShip the beta by May. ^ship-date\n\n- budget approved ^budget\n", encoding="utf-8")
    await session.command("linkly.reindex", {"paths": [str(other)]})
    uri = (session.folders["notes"] / "blocks-draft.md").as_uri()
    lines = ["# Draft", "", "## Open questions", "", "Who signs? ^who-signs", "", "[[#Op", "[[#^wh", "[[Launch#^", "![[pdflatex-out"]
    open_text(session, uri, "\n".join(lines) + "\n")
    document = types.TextDocumentIdentifier(uri=uri)

    async def items(line: int) -> list[types.CompletionItem]:
        position = types.Position(line=line, character=len(lines[line]))
        answer = await session.client.text_document_completion_async(types.CompletionParams(text_document=document, position=position))
        return answer.items

    assert [item.label for item in await items(6)][:1] == ["Open questions"]
    own_blocks = await items(7)
    assert [item.label for item in own_blocks] == ["who-signs"] and own_blocks[0].text_edit.new_text == "who-signs"
    blocks = await items(8)
    assert [item.label for item in blocks] == ["ship-date", "budget"]
    assert blocks[0].documentation == "Ship the beta by May. ^ship-date" and "line 3" in blocks[0].detail
    if has_extractor("pdf"):
        assert "pdflatex-outline.pdf" in [item.label for item in await items(9)]


async def test_heading_and_block_completion_cut_to_the_first_items_says_the_list_is_incomplete(session: Session) -> None:
    """A reference manual has over a thousand outline entries: a client told the list was complete filters the
    first ones as the user types and never asks again, so the later headings could not be completed."""
    uri = (session.folders["notes"] / "many-headings.md").as_uri()
    sections = [f"## Section {number}\n\nText {number}. ^block-{number}\n" for number in range(1, 131)]
    lines = ["# Manual", "", *"\n".join(sections).split("\n"), "[[#", "[[#^", "[[#Section 12"]
    open_text(session, uri, "\n".join(lines) + "\n")
    document = types.TextDocumentIdentifier(uri=uri)

    async def answer(line: int) -> types.CompletionList:
        position = types.Position(line=line, character=len(lines[line]))
        return await session.client.text_document_completion_async(types.CompletionParams(text_document=document, position=position))

    headings, blocks, narrowed = (await answer(len(lines) - 3)), (await answer(len(lines) - 2)), (await answer(len(lines) - 1))
    assert headings.is_incomplete and len(headings.items) == 100
    assert blocks.is_incomplete and len(blocks.items) == 100
    assert not narrowed.is_incomplete and "Section 125" in [item.label for item in narrowed.items]


async def test_heading_completion_after_a_folder_in_a_wikilink_and_after_an_escaped_path(session: Session) -> None:
    """What note completion writes (`[[notes/name`, `a%20b.docx`) must lead to the note's headings too."""
    uri = (session.folders["books"] / "draft.md").as_uri()
    lines = ["See [[notes/ch04-01-what-is-ownership#owner", "and [x](dpkg%20cheat%20sheet.docx#manip"]
    open_text(session, uri, "\n".join(lines) + "\n")
    document = types.TextDocumentIdentifier(uri=uri)

    async def labels(line: int) -> list[str]:
        position = types.Position(line=line, character=len(lines[line]))
        answer = await session.client.text_document_completion_async(types.CompletionParams(text_document=document, position=position))
        return [item.label for item in answer.items]

    assert "Ownership Rules" in await labels(0)
    if has_extractor("docx"):
        found = await labels(1)
        assert any("manipulating-packages" in label for label in found), found


async def test_links_to_the_notes_own_headings_follow_its_unsaved_edits(session: Session) -> None:
    """A heading just typed (not saved) is a link target at once, at the line where it stands now."""
    path = session.path(STRUCTS)
    saved = path.read_text(encoding="utf-8")
    typed = "[new](#brand-new-heading) and [old](#defining-and-instantiating-structs)\n\n" + saved + "\n## Brand New Heading\n\nText.\n"
    uri = path.as_uri()
    open_text(session, uri, typed, version=50)  # (again, if an earlier test opened it: the server takes the new text)
    document = types.TextDocumentIdentifier(uri=uri)
    lines = typed.split("\n")
    new_heading = lines.index("## Brand New Heading")
    for character, expected in ((3, new_heading), (32, heading_line(typed, "Defining and Instantiating Structs"))):
        locations = await session.client.text_document_definition_async(
            types.DefinitionParams(text_document=document, position=types.Position(line=0, character=character))
        )
        assert [(location.uri, location.range.start.line) for location in locations] == [(uri, expected)]
    hover = await session.client.text_document_hover_async(types.HoverParams(text_document=document, position=types.Position(line=0, character=3)))
    assert hover.contents.value.startswith("**") and "> ## Brand New Heading" in hover.contents.value
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=51),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typed + "See [x](#brand")],
        )
    )
    answer = await session.client.text_document_completion_async(
        types.CompletionParams(text_document=document, position=types.Position(line=len(lines) - 1, character=len("See [x](#brand")))
    )
    assert answer.items and answer.items[0].label == "brand-new-heading"


async def test_links_and_related_commands(session: Session) -> None:
    doc_id = await session.doc_id(OWNERSHIP)
    links = await session.command("linkly.links", {"doc_id": doc_id, "direction": "in"})
    assert links["counts"]["backlinks"] >= 2
    related = await session.command("linkly.related", {"doc_id": doc_id, "limit": 2})
    assert related["doc_id"] == doc_id and len(related["results"]) <= 2


@pytest.mark.skipif(not has_extractor("pdf"), reason="the PDF extractor does not exist yet")
async def test_definition_on_a_pdf_contents_entry_opens_its_section(session: Session) -> None:
    """pdfLaTeX's hyperref writes internal links as named destinations: the contents lead to the sections."""
    view = await session.request("linkly/uriForPath", {"path": str(session.path("pdflatex-outline.pdf"))})
    lines = (await session.request("linkly/read", {"uri": view["uri"]}))["text"].split("\n")
    entry = next(number for number, line in enumerate(lines) if line == "2 Bar 2")
    for uri in (view["uri"], view["uri"] + "/pdflatex-outline.pdf.txt"):  # a client may name its views (VS Code)
        document = types.TextDocumentIdentifier(uri=uri)
        locations = await session.client.text_document_definition_async(
            types.DefinitionParams(text_document=document, position=types.Position(line=entry, character=2))
        )
        assert [location.uri for location in locations] == [uri], "the link moves within the open view"
        assert lines[locations[0].range.start.line] == "2 Bar"
    # the Neovim plugin opens `paper.pdf` itself as a buffer holding the view's text: its lines are the indexed
    # lines, not a source to map them into (mapping read every line of the buffer at each hover: seconds in a
    # manual of 2,400 pages)
    file_uri = session.path("pdflatex-outline.pdf").as_uri()
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=file_uri, language_id="plaintext", version=1, text="\n".join(lines))
        )
    )
    locations = await session.client.text_document_definition_async(
        types.DefinitionParams(text_document=types.TextDocumentIdentifier(uri=file_uri), position=types.Position(line=entry, character=2))
    )
    assert [lines[location.range.start.line] for location in locations] == ["2 Bar"]
    section = next(number for number, line in enumerate(lines) if line == "2 Bar")
    named = view["uri"] + "/pdflatex-outline.pdf.txt"
    references = await session.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=named),
            position=types.Position(line=section, character=2),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert [(location.uri, location.range.start.line) for location in references] == [(named, entry)]


async def test_broken_link_warnings_follow_the_typing(session: Session) -> None:
    """They were computed on open and save only: lines typed above a broken link left its warning on the
    line it had been on, and a link broken while typing had none until saved."""
    path = session.root / "typing.md"
    text = "# Typing\n\nSee [[no-such-note-yy]].\n"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    open_text(session, uri, text)

    def warned_lines() -> list[int]:
        return [d.range.start.line for d in session.client.diagnostics.get(uri, []) if d.code == "link-missing"]

    async def settles_on(expected: list[int]) -> list[int]:
        """The warnings once they show `expected`, and still after the typing pause: the buffer's earlier text
        may be published more than once (a typing pause, an index run) before the latest is, never after."""
        deadline = time.monotonic() + 30
        while warned_lines() != expected and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.sleep(TYPING_PAUSE_S + 0.5)
        return warned_lines()

    assert await settles_on([2]) == [2]
    for version, edited in enumerate(["# Typing\n\nnew\nlines\n\nSee [[no-such-note-yy]].\n", "# Typing\n\nSee [[no-such-note-xx]], not\n\nthe other.\n"], start=2):
        session.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        expected = [edited.split("\n").index(line) for line in edited.split("\n") if "no-such-note" in line]
        assert await settles_on(expected) == expected


async def test_a_buffer_first_seen_by_a_change_is_taken_as_opened(session: Session) -> None:
    """Neovim names a new buffer at its first `:write` and sends its changes under that name, never opened
    there: the server answered with `KeyError: 'file:///.../draft.md'` shown to the user, and no warnings."""
    path = session.root / "draft.md"
    text = "# Draft\n\nSee [[no-such-note-zz]].\n"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    session.client.diagnostics.pop(uri, None)
    session.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    deadline = time.monotonic() + 30
    while not session.client.diagnostics.get(uri) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert [d.range.start.line for d in session.client.diagnostics.get(uri, []) if d.code == "link-missing"] == [2]
    problems = [message.message for message in session.client.messages + session.client.log_messages if "KeyError" in message.message]
    assert problems == []
    symbols = await session.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [symbol.name for symbol in symbols] == ["Draft"]


@pytest.mark.skipif(not has_extractor("pdf"), reason="the PDF extractor does not exist yet")
async def test_a_pdf_views_broken_links_are_listed_by_the_links_command_but_not_flagged_in_the_view(session: Session) -> None:
    """A published manual links to files that never came with it: 17 warnings in a read-only view nobody can mend."""
    import pymupdf

    manual = session.folders["papers"] / "published-manual.pdf"
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 100), "See the grid manual for details.", fontsize=12)
    page.insert_link({"kind": pymupdf.LINK_GOTOR, "from": pymupdf.Rect(72, 88, 300, 104), "file": "grid-manual.pdf",
                      "page": 0, "to": pymupdf.Point(0, 0)})
    document.save(manual)
    await session.command("linkly.reindex", {"paths": [str(manual)]})
    view = await session.request("linkly/uriForPath", {"path": str(manual)})
    text = (await session.request("linkly/read", {"uri": view["uri"]}))["text"]
    session.client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri=view["uri"], language_id="plaintext", version=1, text=text))
    )
    links = await session.command("linkly.links", {"doc_id": view["doc_id"], "broken_only": True})
    assert [link["target"] for link in links["links"]] == ["grid-manual.pdf#page=1"]
    await asyncio.sleep(1.0)
    assert not [d for d in session.client.diagnostics.get(view["uri"], []) if d.code == "link-missing"]
