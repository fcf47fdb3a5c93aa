"""Links in the editor: go to a link's target, hover it, and find the links to a document or heading.

- `textDocument/definition` on a link: the target file at its heading (the
  `linkly:` view of a PDF, EPUB or other non-text target, at the line);
- `textDocument/hover` on a link: the target's title, section and first lines,
  or why the link is broken;
- `textDocument/references` on a heading: every link to that heading from any
  indexed document; anywhere else in the document: every link to the
  document (its backlinks).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract import is_supported
from linkly_ls.core.links.headings import flatten
from linkly_ls.core.links.resolver import ResolvedLink
from linkly_ls.lsp.link_context import (
    BufferLinks,
    is_note,
    link_at,
    links_in,
    location_of_source,
    source_record,
    target_location,
)
from linkly_ls.lsp.uris import file_uri, is_linkly_uri, open_buffer

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

#: lines of the target a hover shows
HOVER_LINES = 6


def definition(ls: LinklyLanguageServer, engine: Engine, uri: str, position: types.Position) -> list[types.Location]:
    units = ls.workspace.position_codec.client_num_units
    context = links_in(ls, engine, uri, position.line + 1)
    link = link_at(context, position, units) if context else None
    if context is None or link is None:
        return []
    if link.doc_id is None:
        # a file that exists but is not indexed (outside the libraries, failed, not read yet): the editor opens it
        if link.status == "unindexed" and link.path:
            return [types.Location(uri=file_uri(link.path), range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)))]
        return []
    record = context.target(link)
    return [target_location(link, record.doc_type if record else "", context)]


def hover(ls: LinklyLanguageServer, engine: Engine, uri: str, position: types.Position) -> types.Hover | None:
    units = ls.workspace.position_codec.client_num_units
    context = links_in(ls, engine, uri, position.line + 1)
    link = link_at(context, position, units) if context else None
    if context is None or link is None:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=_hover_text(engine, context, link)))


def _hover_text(engine: Engine, context: BufferLinks, link: ResolvedLink) -> str:
    if link.broken:
        return f"**Broken link**: {link.problem()}"
    if link.status == "unindexed" and link.path:
        failure = engine.catalog.error_for(link.path)
        if failure is not None:
            return f"`{link.target}`: could not be indexed: {failure.message}"
        path = Path(link.path)
        if engine.library_for_path(path) is None:
            return f"`{link.target}`: a file outside every library (not indexed)"
        if not is_supported(path):
            return f"`{link.target}`: a type linkly does not read (not indexed)"
        return f"`{link.target}`: not indexed (yet, or left out by the library's ignore files or globs)"
    if link.status != "ok" or link.doc_id is None:
        return f"`{link.target}` ({link.status})"
    record = context.target(link)
    first = link.target_line or 1
    shown = [line for line in context.target_lines(link, first, HOVER_LINES * 3, engine.catalog.line_range) if line.strip()]
    header = f"**{link.title}**" + (f" › {link.heading}" if link.heading else "")
    where = f"{link.path} · line {first}" + (f" · {record.doc_type}" if record else "")
    quoted = "\n".join(f"> {line}" for line in shown[:HOVER_LINES])
    return f"{header}\n\n{where}\n\n{quoted}".rstrip()


def references(ls: LinklyLanguageServer, engine: Engine, uri: str, position: types.Position) -> list[types.Location]:
    record, path = source_record(engine, uri)
    if record is None:
        return []
    context = links_in(ls, engine, uri, position.line + 1)  # its lines and resolver; the links are not needed
    if context is None:
        return []
    line = position.line + 1
    if is_note(path) and not is_linkly_uri(uri):
        # the buffer's lines may not be the indexed ones: the heading is known by its title
        heading = _buffer_heading_at(context, record, line)
        found = [link for link in context.resolver.backlinks(record) if heading is None or link.heading == heading]
    else:
        section = _section_starting_at(record, line)
        found = (
            context.resolver.backlinks(record)
            if section is None
            else [link for link in context.resolver.backlinks(record, section=section) if link.heading_line == line]
        )
    units = ls.workspace.position_codec.client_num_units
    sources = engine.catalog.summaries(sorted({link.source_id for link in found}))
    locations: list[types.Location] = []
    lines_of: dict[str, list[str]] = {}  # a long reference links to itself hundreds of times
    for link in found:
        summary = sources.get(link.source_id)
        doc_type = summary.doc_type if summary else ""
        source_lines = None
        if is_note(link.source_path):
            if link.source_id not in lines_of:
                lines_of[link.source_id] = _source_lines(ls, engine, link)
            source_lines = lines_of[link.source_id]
        locations.append(location_of_source(link, doc_type, source_lines, units, context))
    return locations


def _buffer_heading_at(context: BufferLinks, record, line: int) -> str | None:
    """The title of the Markdown buffer's heading on `line` (1-based); None off headings and on the
    document's title, where references are the document's backlinks."""
    from linkly_ls.core.extract.markdown import HeadingsUnreadable, find_headings  # loads with the first such request

    try:
        found = find_headings(context.lines).get(line - 1)
    except HeadingsUnreadable:
        return None
    return found[1] if found and found[1] != record.title else None


def _section_starting_at(record, line: int) -> OutlineNode | None:
    """The indexed section whose heading is on `line`; None off headings and on the document's title."""
    section = next((node for node in flatten(record.outline) if node.start_line == line), None)
    return section if section is not None and section.title != record.title else None


def _source_lines(ls: LinklyLanguageServer, engine: Engine, link: ResolvedLink) -> list[str]:
    document = open_buffer(ls.workspace, file_uri(link.source_path))
    return document.source.split("\n") if document is not None else engine.catalog.lines(link.source_id)


def register(server: LinklyLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def on_definition(ls: LinklyLanguageServer, params: types.DefinitionParams) -> list[types.Location]:
        engine = await ls.ready_engine()
        return await asyncio.to_thread(definition, ls, engine, params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def on_hover(ls: LinklyLanguageServer, params: types.HoverParams) -> types.Hover | None:
        engine = await ls.ready_engine()
        return await asyncio.to_thread(hover, ls, engine, params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def on_references(ls: LinklyLanguageServer, params: types.ReferenceParams) -> list[types.Location]:
        engine = await ls.ready_engine()
        return await asyncio.to_thread(references, ls, engine, params.text_document.uri, params.position)
