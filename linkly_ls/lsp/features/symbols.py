"""`textDocument/documentSymbol`: a document's outline as nested DocumentSymbols.

Sources, in order:
- a `linkly:` view, or a `file:` PDF/EPUB/DOCX/PPTX (an editor plugin may fill
  such a buffer with the view's text): the catalog's outline, as indexed;
- an open Markdown, text or HTML file whose buffer is what was indexed: the
  catalog's outline, its headings placed on the buffer lines where their
  titles stand (extraction drops front matter and markup, HTML tags);
- any other open Markdown, text or HTML buffer (unsaved edits, not in a
  library): the buffer is extracted on the fly with the project's extractors,
  and its headings placed the same way.

Kinds follow the depth in the outline tree (not the heading's own level, as
many documents start at `##`), so every outline reads the same way:
top Namespace, then Class, Method, Function, Field, and String deeper down.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from linkly_ls.core.document import ExtractionError, OutlineNode
from linkly_ls.core.engine import Engine
from linkly_ls.core.extract import doc_type_for, extract_file
from linkly_ls.lsp.features.virtual_documents import document_for_uri
from linkly_ls.lsp.linemap import anchor_outline, same_lines
from linkly_ls.lsp.uris import LANGUAGE_SUFFIXES, TEXT_DOC_TYPES, is_linkly_uri, open_buffer, path_from_uri

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

KIND_BY_DEPTH = (
    types.SymbolKind.Namespace,
    types.SymbolKind.Class,
    types.SymbolKind.Method,
    types.SymbolKind.Function,
    types.SymbolKind.Field,
)
UnitCounter = Callable[[str], int]


def to_document_symbols(nodes: list[OutlineNode], lines: list[str], units: UnitCounter) -> list[types.DocumentSymbol]:
    """Outline nodes (1-based inclusive lines) as DocumentSymbols (0-based, ending at end of line)."""
    last = max(len(lines) - 1, 0)

    def end_of(line: int) -> types.Position:
        return types.Position(line=line, character=units(lines[line]) if line < len(lines) else 0)

    def convert(node: OutlineNode, floor: int, ceiling: int, depth: int) -> types.DocumentSymbol:
        start = min(max(node.start_line - 1, floor), ceiling)
        end = min(max(node.end_line - 1, start), ceiling)
        return types.DocumentSymbol(
            name=node.title or "(untitled)",
            detail=f"lines {start + 1}-{end + 1}",
            kind=KIND_BY_DEPTH[depth] if depth < len(KIND_BY_DEPTH) else types.SymbolKind.String,
            range=types.Range(start=types.Position(line=start, character=0), end=end_of(end)),
            selection_range=types.Range(start=types.Position(line=start, character=0), end=end_of(start)),
            children=[convert(child, start, end, depth + 1) for child in node.children],
        )

    return [convert(node, 0, last, 0) for node in nodes]


def flat_symbols(symbols: list[types.DocumentSymbol], uri: str, container: str | None = None) -> list[types.SymbolInformation]:
    """The tree as the flat list a client without hierarchical symbols reads, each naming its parent."""
    flat: list[types.SymbolInformation] = []
    for symbol in symbols:
        flat.append(
            types.SymbolInformation(
                name=symbol.name, kind=symbol.kind, location=types.Location(uri=uri, range=symbol.range), container_name=container
            )
        )
        flat.extend(flat_symbols(symbol.children or [], uri, symbol.name))
    return flat


def extract_buffer(text: str, suffix: str, engine: Engine) -> tuple[list[OutlineNode], list[str]]:
    """Extract unsaved buffer text with the extractor for its file type; the outline fits the buffer's lines."""
    buffer_lines = text.split("\n")
    with tempfile.TemporaryDirectory(prefix="linkly-buffer-") as folder:
        scratch = Path(folder) / f"buffer{suffix}"
        scratch.write_text(text, encoding="utf-8")
        try:
            document = extract_file(scratch, engine.config.limits)
        except ExtractionError:
            return [], buffer_lines
    if same_lines(document.lines, buffer_lines):
        return document.outline, buffer_lines
    return anchor_outline(document.outline, buffer_lines), buffer_lines



def outline_for(
    engine: Engine, uri: str, buffer_text: str | None, language_id: str | None = None
) -> tuple[list[OutlineNode], list[str]]:
    """The outline of the document at `uri` and the lines its ranges point into; `language_id`: the
    client's language of an open buffer, which decides how a buffer is read whose name does not."""
    if is_linkly_uri(uri):
        record = document_for_uri(engine, uri)
        return record.outline, engine.catalog.lines(record.doc_id)
    path = path_from_uri(uri)
    by_language = LANGUAGE_SUFFIXES.get(language_id or "")
    if path is None or doc_type_for(path) is None:  # named by no known type: read as its language says
        if buffer_text is None or by_language is None:
            return [], []
        return extract_buffer(buffer_text.replace("\r\n", "\n").replace("\r", "\n"), by_language, engine)
    record = engine.catalog.by_path(str(path))
    if record is not None and record.doc_type not in TEXT_DOC_TYPES:
        return record.outline, engine.catalog.lines(record.doc_id)
    if doc_type_for(path) not in TEXT_DOC_TYPES:
        return [], []
    if buffer_text is None:  # not open in the editor: only what the index holds, never a file read from disk
        return (record.outline, engine.catalog.lines(record.doc_id)) if record is not None else ([], [])
    buffer_lines = buffer_text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if record is not None and content_hash(buffer_text) == record.content_hash:
        indexed = engine.catalog.lines(record.doc_id)
        if same_lines(indexed, buffer_lines):
            return record.outline, buffer_lines
        return anchor_outline(record.outline, buffer_lines), buffer_lines
    return extract_buffer("\n".join(buffer_lines), path.suffix, engine)


def content_hash(text: str) -> str:
    """The indexer's hash of a file's bytes, for a buffer saved as UTF-8: equal means "as indexed"."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def register(server: LinklyLanguageServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def on_document_symbol(
        ls: LinklyLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        engine = await ls.ready_engine()
        uri = params.text_document.uri
        buffer = None if is_linkly_uri(uri) else open_buffer(ls.workspace, uri)
        buffer_text = buffer.source if buffer is not None else None
        language = buffer.language_id if buffer is not None else None
        nodes, lines = await asyncio.to_thread(outline_for, engine, uri, buffer_text, language)
        symbols = to_document_symbols(nodes, lines, ls.workspace.position_codec.client_num_units)
        if ls.client_supports("text_document.document_symbol.hierarchical_document_symbol_support"):
            return symbols
        return flat_symbols(symbols, uri)
