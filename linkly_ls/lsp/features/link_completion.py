"""`textDocument/completion` after `[[` and `](`: indexed documents and their headings, fuzzy-matched.

After `[[` the items are note names (the file name without extension, or the
whole name of another file: `paper.pdf`; the folder too when two share a
name), after `[[name#` that note's headings, after `[[name#^` its block ids;
`[[#` and `[[#^` offer the note's own. After `](` they are paths relative to
the current file, after `](path#` the heading anchors of that file. The typed text is replaced, so
the inserted link is always a correct one.
"""

from __future__ import annotations

import asyncio
import posixpath
import re
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

from lsprotocol import types

from linkly_ls.core.engine import Engine
from linkly_ls.core.links.anchors import block_ids
from linkly_ls.core.links.headings import heading_anchors
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.links.targets import is_note_path
from linkly_ls.core.store.records import DocumentRecord, name_key
from linkly_ls.lsp.link_context import as_typed, is_note, python_column, source_record
from linkly_ls.lsp.uris import open_buffer

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

MAX_ITEMS = 100
_WIKI = re.compile(r"\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?$")
_INLINE = re.compile(r"\]\(([^()\s#]*)(?:#([^()\s]*))?$")


def fuzzy_score(typed: str, candidate: str) -> int | None:
    """None unless `typed`'s characters appear in order in `candidate` (case-insensitive); lower is better:
    a prefix first, then a substring, then by how spread out the match is."""
    typed, candidate = typed.casefold(), candidate.casefold()
    if not typed:
        return 0
    if candidate.startswith(typed):
        return 1
    if typed in candidate:
        return 2
    position, spread, previous = 0, 0, -1
    for char in typed:
        found = candidate.find(char, position)
        if found < 0:
            return None
        if previous >= 0:
            spread += found - previous - 1
        previous, position = found, found + 1
    return 3 + spread


def completions(ls: LinklyLanguageServer, engine: Engine, uri: str, position: types.Position) -> types.CompletionList:
    document = open_buffer(ls.workspace, uri)
    if document is None or position.line >= len(document.lines):
        return types.CompletionList(is_incomplete=False, items=[])
    text = document.lines[position.line].rstrip("\n")
    units = ls.workspace.position_codec.client_num_units
    column = python_column(text, position.character, units)
    answer = _completions(ls, engine, uri, position, text[:column])
    return _kept_in_rank_by_any_client(answer, text, column, units)


def _kept_in_rank_by_any_client(
    answer: types.CompletionList, text: str, column: int, units: Callable[[str], int]
) -> types.CompletionList:
    """The server's matches, in its order, whatever the client's own filter: Neovim keeps an item only when
    its filter text starts with the word typed (`[[Luhm` dropped `Niklas Luhmann`, found by its alias, and
    `[[zettel` the note `Zettelkasten method`) and sorts by sort text, else by label (headings came back in
    alphabetical order). The typed word leads each filter text, and the rank is the sort text."""
    for rank, item in enumerate(answer.items):
        item.sort_text = f"{rank:05d}"
        edit = item.text_edit
        if not isinstance(edit, types.TextEdit):
            continue
        typed = text[python_column(text, edit.range.start.character, units) : column]
        shown = item.filter_text or item.label
        if typed and not shown.startswith(typed):
            item.filter_text = f"{typed} {shown}"
    return answer


def _completions(ls: LinklyLanguageServer, engine: Engine, uri: str, position: types.Position, before: str) -> types.CompletionList:
    empty = types.CompletionList(is_incomplete=False, items=[])
    _, source_path = source_record(engine, uri)
    if source_path is None:
        return empty
    wiki = _WIKI.search(before)
    if wiki:
        typed, heading = wiki.group(1), wiki.group(2)
        if heading is None:
            return _note_items(engine, source_path, typed, position, ls, wiki=True)
        # `[[#Heading]]` and `[[#^block]]` name the note itself
        target_path = _named(engine, typed, source_path) if typed.strip() else source_path
    else:
        inline = _INLINE.search(before)
        if not inline:
            return empty
        typed, heading = inline.group(1), inline.group(2)
        if heading is None:
            return _note_items(engine, source_path, typed, position, ls, wiki=False)
        # the path as completion writes it (`Zoë%20Müller.md`) names the file with its spaces
        target_path = posixpath.normpath(posixpath.join(posixpath.dirname(source_path), unquote(typed))) if typed else source_path
    target = _target_record(ls, engine, uri, source_path, target_path)
    if heading.startswith("^"):
        return _block_items(ls, engine, uri, source_path, target, heading[1:], position)
    return _heading_items(target, heading, position, wiki=wiki is not None, units=ls)


def _edit_range(position: types.Position, typed: str, ls) -> types.Range:
    width = ls.workspace.position_codec.client_num_units(typed)
    return types.Range(start=types.Position(line=position.line, character=position.character - width), end=position)


def _note_items(engine: Engine, source_path: str, typed: str, position: types.Position, ls, wiki: bool) -> types.CompletionList:
    documents = engine.catalog.document_names()
    names = wiki_names([path for _, path, _, _ in documents]) if wiki else {}
    own = engine.library_for_path(Path(source_path))  # its library's notes first (another vault's come after)
    own_paths = {path for _, path, _, _ in engine.catalog.document_names(own.name)} if own is not None else set()
    aliases = engine.catalog.alias_keys()  # `[[Rob` finds the note whose front matter names it Robert Smith
    scored: list[tuple[bool, int, str, types.CompletionItem]] = []
    folder = posixpath.dirname(source_path)
    for doc_id, path, title, doc_type in documents:
        if path == source_path:
            continue
        if wiki:
            insert = names[path]
        else:
            insert = posixpath.relpath(path, folder).replace(" ", "%20")
        names_of = [insert, title, *aliases.get(doc_id, [])]
        score = min((value for value in (fuzzy_score(typed, name) for name in names_of) if value is not None), default=None)
        if score is None:
            continue
        item = types.CompletionItem(
            label=insert,
            kind=types.CompletionItemKind.File,
            detail=title,
            documentation=f"{path} · {doc_type}",
            filter_text=" ".join(names_of),
            text_edit=types.TextEdit(range=_edit_range(position, typed, ls), new_text=insert),
            data={"doc_id": doc_id},
        )
        scored.append((path not in own_paths, score, insert, item))
    scored.sort(key=lambda entry: entry[:3])
    items = [item for *_, item in scored[:MAX_ITEMS]]
    return types.CompletionList(is_incomplete=len(scored) > MAX_ITEMS, items=items)


def wiki_names(paths: list[str]) -> dict[str, str]:
    """path -> what a wikilink writes to name it alone: a note's stem, another file's whole name (`paper.pdf`,
    `diagram.png`, as Obsidian writes them), with as many of its folders before it as tell it from the other
    files of that name (`en/basics/intro` beside `zh-cn/basics/intro`)."""
    groups: dict[str, list[str]] = {}
    for path in paths:
        key = name_key(path) if is_note_path(path) else unicodedata.normalize("NFC", posixpath.basename(path).casefold())
        groups.setdefault(key, []).append(path)
    names: dict[str, str] = {}
    for group in groups.values():
        for path in group:
            parts = path.split("/")
            stem = posixpath.splitext(parts[-1])[0] if is_note_path(path) else parts[-1]
            depth = 0
            if len(group) > 1:
                others = [other.split("/")[:-1] for other in group if other != path]
                depth = next(  # 1 when even the whole path does not tell them apart (x.md beside x.mdx)
                    (k for k in range(1, len(parts) - 1) if all(folders[-k:] != parts[-1 - k : -1] for folders in others)),
                    1,
                )
            names[path] = "/".join(part for part in [*parts[-1 - depth : -1], stem] if part) if depth else stem
    return names


def _named(engine: Engine, name: str, source_path: str) -> str | None:
    """The path of the note `[[name]]` leads to (its folder and the source's library narrowing it, as the
    link itself resolves), or None."""
    record = LinkResolver(engine.catalog).named(name, source_path) if name.strip() else None
    return record.path if record is not None else None


def _target_record(ls: LinklyLanguageServer, engine: Engine, uri: str, source_path: str, target_path: str | None) -> DocumentRecord | None:
    """The document whose headings to offer: the note being edited as typed when it links to itself."""
    if target_path is None:
        return None
    document = open_buffer(ls.workspace, uri)
    if target_path == source_path and document is not None and is_note(source_path):
        return as_typed(ls, uri, source_path, engine.catalog.by_path(source_path), document.source.split("\n"))
    return LinkResolver(engine.catalog).document_at(target_path)


def _heading_items(record: DocumentRecord | None, typed: str, position: types.Position, wiki: bool, units) -> types.CompletionList:
    if record is None:
        return types.CompletionList(is_incomplete=False, items=[])
    items = []
    for anchor, node in heading_anchors(record.outline):
        insert = node.title if wiki else anchor
        score = min((v for v in (fuzzy_score(typed, insert), fuzzy_score(typed, node.title)) if v is not None), default=None)
        if score is None:
            continue
        items.append(
            (
                score,
                node.start_line,
                types.CompletionItem(
                    label=insert,
                    kind=types.CompletionItemKind.Reference,
                    detail=f"{record.title} · line {node.start_line}",
                    filter_text=f"{insert} {node.title}",
                    text_edit=types.TextEdit(range=_edit_range(position, typed, units), new_text=insert),
                ),
            )
        )
    items.sort(key=lambda entry: (entry[0], entry[1]))
    return types.CompletionList(is_incomplete=len(items) > MAX_ITEMS, items=[item for _, _, item in items[:MAX_ITEMS]])


def _block_items(
    ls: LinklyLanguageServer, engine: Engine, uri: str, source_path: str, record: DocumentRecord | None, typed: str, position: types.Position
) -> types.CompletionList:
    """The block ids (`^abc123`) the target note marks, each with its block's text: the note being edited as
    its buffer stands."""
    if record is None or not is_note_path(record.path):
        return types.CompletionList(is_incomplete=False, items=[])
    buffer = open_buffer(ls.workspace, uri) if record.path == source_path else None
    lines = buffer.source.split("\n") if buffer is not None else engine.catalog.lines(record.doc_id)
    items = []
    for block_id, line in block_ids(lines):
        score = fuzzy_score(typed, block_id)
        if score is None:
            continue
        text = " ".join(lines[line - 1].split())
        item = types.CompletionItem(
            label=block_id,
            kind=types.CompletionItemKind.Reference,
            detail=f"{record.title} · line {line}",
            documentation=text[:200],
            filter_text=f"{block_id} {text}",
            text_edit=types.TextEdit(range=_edit_range(position, typed, ls), new_text=block_id),
        )
        items.append((score, line, item))
    items.sort(key=lambda entry: entry[:2])
    return types.CompletionList(is_incomplete=len(items) > MAX_ITEMS, items=[item for *_, item in items[:MAX_ITEMS]])


def register(server: LinklyLanguageServer) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["[", "(", "#", "^"])
    )
    async def on_completion(ls: LinklyLanguageServer, params: types.CompletionParams) -> types.CompletionList:
        engine = await ls.ready_engine()
        return await asyncio.to_thread(completions, ls, engine, params.text_document.uri, params.position)
