"""The links of an editor buffer, resolved: what the link features (definition, hover, references,
completion, broken-link diagnostics) share.

A Markdown or MDX buffer is read as it stands (unsaved edits included), so
columns are the buffer's; any other document (a `linkly:` view of a PDF or
EPUB, an HTML file) uses the links stored at index time, which have a line but
no columns. Those lines are the indexed text's: in an HTML file as an editor
shows it (its source, open or read from disk) each link is placed on the source
line that holds its text (`linemap.source_line`), at its text's columns.
Positions are converted between the client's units (UTF-16 by default) and
Python's characters here.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from linkly_ls.core.engine import Engine
from linkly_ls.core.extract import NOTE_SUFFIXES
from linkly_ls.core.extract.front_matter import parse_front_matter
from linkly_ls.core.extract.markdown import outline_of
from linkly_ls.core.extract.markdown_links import find_links
from linkly_ls.core.links.resolver import LinkResolver, ResolvedLink
from linkly_ls.core.links.targets import link_records
from linkly_ls.core.store.catalog import DocumentRecord
from linkly_ls.core.store.records import LinkRecord, make_doc_id
from linkly_ls.lsp.linemap import normalise, read_source, source_line
from linkly_ls.lsp.uris import (
    TEXT_DOC_TYPES,
    UnknownDocumentUri,
    doc_id_from_uri,
    doc_uri,
    file_uri,
    is_linkly_uri,
    open_buffer,
    path_from_uri,
)

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

#: formats whose indexed lines are the file's lines, so a file location's line is right
FILE_LINE_TYPES = frozenset({"md", "mdx", "txt"})


@dataclass
class BufferLinks:
    uri: str
    record: DocumentRecord | None
    lines: list[str]
    links: list[ResolvedLink]
    resolver: LinkResolver
    #: a note as its buffer stands (`as_typed`): what its links to itself lead into
    typed: DocumentRecord | None = None

    def target(self, link: ResolvedLink) -> DocumentRecord | None:
        """The record a resolved link leads to: the buffer's own as typed for a link to itself."""
        if self.typed is not None and link.doc_id == self.typed.doc_id:
            return self.typed
        return self.resolver.record(link.doc_id) if link.doc_id else None

    def target_lines(self, link: ResolvedLink, first: int, count: int, read: Callable[[str, int, int], list[str]]) -> list[str]:
        """`count` lines of the link's target from line `first`: the buffer's own for a link to itself."""
        if self.typed is not None and link.doc_id == self.typed.doc_id:
            return self.lines[first - 1 : first - 1 + count]
        return read(link.doc_id or "", first, count)


def buffer_lines(ls: LinklyLanguageServer, uri: str, engine: Engine, record: DocumentRecord | None) -> list[str]:
    """The lines the client shows: the open buffer, else a file's own lines where they are not the
    indexed ones (an HTML file's source), else the indexed lines."""
    document = open_buffer(ls.workspace, uri)
    if document is not None:
        return document.source.split("\n")
    if record is None:
        return []
    if _shows_source(uri, record):
        source = read_source(record.path)
        if source is not None:
            return source
    return engine.catalog.lines(record.doc_id)


def as_typed(ls: LinklyLanguageServer, uri: str, path: str, record: DocumentRecord | None, lines: list[str]) -> DocumentRecord:
    """The note as its buffer stands: an open buffer's headings are its own (unsaved ones included), so a
    link to `#a-heading` of the same note finds the heading just typed, at its line now."""
    if record is not None and open_buffer(ls.workspace, uri) is None:
        return record
    outline = outline_of(lines, is_mdx=path.lower().endswith(".mdx"))
    if record is not None:
        return replace(record, outline=outline, has_outline=bool(outline), total_lines=len(lines))
    return DocumentRecord(
        doc_id=make_doc_id(path), library="", path=path, doc_type="md", title=Path(path).stem, size=0, mtime_ns=0,
        content_hash="", word_count=0, total_lines=len(lines), has_outline=bool(outline), language=None, keywords=[],
        outline=outline, page_starts=[], warnings=[], text_missing_reason=None, indexed_at=0.0,
    )


def _shows_source(uri: str, record: DocumentRecord) -> bool:
    """Whether the URI shows a file whose lines are not its indexed lines: an HTML page's source (or HTML
    named .txt). A PDF, EPUB or Office file open in an editor holds the view's text, which a plugin put
    there (the indexed lines), or its bytes, which have no lines to map."""
    return not is_linkly_uri(uri) and record.doc_type == "html"


def source_record(engine: Engine, uri: str) -> tuple[DocumentRecord | None, str | None]:
    """The indexed document behind a `file:` or `linkly:` URI (None when not indexed) and its path."""
    if is_linkly_uri(uri):
        try:
            record = engine.catalog.get(doc_id_from_uri(uri))
        except UnknownDocumentUri:
            return None, None
        return record, record.path if record else None
    path = path_from_uri(uri)
    if path is None:
        return None, None
    return engine.catalog.by_path(str(path)), str(path)


#: the notes whose links are kept parsed (`note_links`)
PARSED_NOTES = 8
_parsed: OrderedDict[tuple[str, int, bytes], list[LinkRecord]] = OrderedDict()
_parsed_lock = threading.Lock()


def note_links(path: str, lines: list[str]) -> list[LinkRecord]:
    """The links of a note's text, parsed once per text: a hover or a go-to on one line needs the whole
    note parsed (a reference's definition, a code fence may be anywhere), 0.3 s for 9,000 lines, and an
    editor asks again at every move of the mouse."""
    digest = hashlib.blake2b("\n".join(lines).encode("utf-8", "surrogatepass"), digest_size=16).digest()
    key = (path, len(lines), digest)
    with _parsed_lock:
        if key in _parsed:
            _parsed.move_to_end(key)
            return _parsed[key]
    _, body_start = parse_front_matter(lines)
    found = link_records(find_links(lines[body_start:], first_line=body_start + 1), path)
    with _parsed_lock:
        _parsed[key] = found
        while len(_parsed) > PARSED_NOTES:
            _parsed.popitem(last=False)
    return found


def links_in(
    ls: LinklyLanguageServer, engine: Engine, uri: str, line: int | None = None, broken_only: bool = False
) -> BufferLinks | None:
    """The buffer's links, resolved; with `line` (1-based) only that line's: a request about the
    link under the cursor need not resolve the hundreds of links of a long reference; `broken_only`:
    only the broken ones (a PDF's thousands of internal links are never broken)."""
    record, path = source_record(engine, uri)
    if path is None:
        return None
    resolver = LinkResolver(engine.catalog, look_outside=True)  # the editor's user may see any of their files
    lines = buffer_lines(ls, uri, engine, record)
    if not is_linkly_uri(uri) and reads_as_note(ls, uri, path):
        found = [link for link in note_links(path, lines) if line is None or link.line == line]
        typed = as_typed(ls, uri, path, record, lines)
        links = [resolver.resolve_from(typed.doc_id, path, link, typed) for link in found]
        if broken_only:
            links = [link for link in links if link.broken]
        return BufferLinks(uri, record, lines, links, resolver, typed)
    elif record is not None and _shows_source(uri, record):
        links = resolver.broken_links(record) if broken_only else resolver.links_of(record, None)
        links = placed_in_source(links, engine.catalog.lines(record.doc_id), lines)
        links = [link for link in links if line is None or link.line == line]
    elif record is not None:
        links = resolver.broken_links(record) if broken_only else resolver.links_of(record, line)
    else:
        links = []
    return BufferLinks(uri, record, lines, links, resolver)


def placed_in_source(links: list[ResolvedLink], indexed: list[str], source: list[str]) -> list[ResolvedLink]:
    """The links of indexed lines moved to the source lines that hold their text (`_source_columns`)."""
    normalised = [normalise(text) for text in source]
    placed: list[ResolvedLink] = []
    for link in links:
        line = source_line(indexed, normalised, link.line)
        start, end = _source_columns(source[line - 1] if 0 < line <= len(source) else "", link)
        placed.append(replace(link, line=line, start=start, end=end))
    return placed


def _source_columns(text: str, link: ResolvedLink) -> tuple[int, int]:
    """Where the link stands in a source line: from its `<a` to the end of its text when the line holds
    its target (its text alone otherwise); (0, 0), the whole line, when neither is found."""
    target = text.find(f'"{link.target}"') if link.target else -1
    if target < 0:
        found = text.find(link.text) if link.text else -1
        return (found, found + len(link.text)) if found >= 0 else (0, 0)
    start = text.rfind("<", 0, target)
    end = text.find(link.text, target) if link.text else -1
    return (max(start, 0), end + len(link.text) if end >= 0 else target + len(link.target) + 2)


def link_at(context: BufferLinks, position: types.Position, units) -> ResolvedLink | None:
    """The link under the cursor; on a line whose links have no columns, the one whose text is
    under the cursor, else the line's first."""
    on_line = [link for link in context.links if link.line == position.line + 1]
    if not on_line:
        return None
    text = context.lines[position.line] if position.line < len(context.lines) else ""
    column = python_column(text, position.character, units)
    for link in on_line:
        if link.end and link.start <= column < link.end:
            return link
    if any(link.end for link in on_line):
        return None
    for link in on_line:
        found = text.find(link.text) if link.text else -1
        if found >= 0 and found <= column <= found + len(link.text):
            return link
    return on_line[0]


def python_column(text: str, character: int, units) -> int:
    """The character offset of a client column (UTF-16 units by default)."""
    counted = 0
    for index, char in enumerate(text):
        if counted >= character:
            return index
        counted += units(char)
    return len(text)


def client_range(lines: list[str], line: int, start: int, end: int, units) -> types.Range:
    """A client range on 1-based `line` for Python columns [start, end); the whole line when end is 0."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if not end:
        start, end = 0, len(text)
    return types.Range(
        start=types.Position(line=line - 1, character=units(text[:start])),
        end=types.Position(line=line - 1, character=units(text[:end])),
    )


def view_uri(doc_id: str, context: BufferLinks) -> str:
    """The `linkly:` view of a document: the buffer's own URI when it is that document's view.

    A client names its views as it likes (VS Code adds the file name, `linkly://doc/<id>/<name>.txt`);
    a PDF's or EPUB's internal link must move within the open view, not open a second one.
    """
    if is_linkly_uri(context.uri) and context.record is not None and context.record.doc_id == doc_id:
        return context.uri
    return doc_uri(doc_id)


def target_location(link: ResolvedLink, doc_type: str, context: BufferLinks) -> types.Location:
    """Where a resolved link opens: the file at its line for text formats, else the `linkly:` view."""
    line = max((link.target_line or 1) - 1, 0)
    uri = file_uri(link.path or "") if doc_type in FILE_LINE_TYPES else view_uri(link.doc_id or "", context)
    position = types.Position(line=line, character=0)
    return types.Location(uri=uri, range=types.Range(start=position, end=position))


def location_of_source(link: ResolvedLink, doc_type: str, lines: list[str] | None, units, context: BufferLinks) -> types.Location:
    """Where a backlink stands in its source document."""
    uri = file_uri(link.source_path) if doc_type in TEXT_DOC_TYPES - {"html"} else view_uri(link.source_id, context)
    if lines is not None:
        return types.Location(uri=uri, range=client_range(lines, link.line, link.start, link.end, units))
    position = types.Position(line=link.line - 1, character=0)
    return types.Location(uri=uri, range=types.Range(start=position, end=position))


def reads_as_note(ls: LinklyLanguageServer, uri: str, path: str) -> bool:
    """A note by its name, or an open buffer the client says is Markdown (`notes.mdtext`, `README`)."""
    if path.lower().endswith(NOTE_SUFFIXES):
        return True
    buffer = open_buffer(ls.workspace, uri)
    return buffer is not None and buffer.language_id in ("markdown", "mdx")


def is_note(path: str | None) -> bool:
    return bool(path) and Path(path or "").suffix.lower() in NOTE_SUFFIXES
