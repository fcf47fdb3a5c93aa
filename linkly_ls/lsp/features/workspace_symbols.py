"""`workspace/symbol`: full-text search over every library, as you type; nothing when the search is a miss.

The word being typed (the query's last, no space after it) is searched as the words of document
names it may become (`core.search.word_completion`): `zett` finds the notes on the Zettelkasten.

Each hit is one SymbolInformation named "title · p. 29 · section: snippet" (the
page and section where the document has them), at the hit's best matching line: in the file itself for text formats (md, mdx, txt, html; the
line found again in the file by its text, since extraction drops front
matter, markup and tags), in the document's `linkly:` view otherwise.

Typing sends one request per keystroke. While typing (a query within a second
of the previous one), a short pause lets the next keystroke supersede a query
before any work starts; a first query is answered at once. A query superseded
while it runs is answered with ContentModified instead of stale results; a
cancelled request raises CancelledError in the handler. Either way the search thread drops its
remaining work (the keyword query itself is not interruptible).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified

from linkly_ls.core.engine import Engine
from linkly_ls.core.provenance import page_label
from linkly_ls.core.search.snippets import excerpt
from linkly_ls.core.search.word_completion import WordCompletions
from linkly_ls.core.tools import ToolError, call_tool
from linkly_ls.core.tools.search_results import SearchHit
from linkly_ls.lsp.features.symbols import UnitCounter
from linkly_ls.lsp.linemap import SOURCES, SourceFiles, source_line
from linkly_ls.lsp.uris import TEXT_DOC_TYPES, location_uri

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

RESULT_LIMIT = 50
TYPING_PAUSE_S = 0.05
#: a query this soon after the previous one is taken as a keystroke, and pauses for the next
TYPING_WINDOW_S = 1.0
#: a symbol's name at most: VS Code matches the query against a name's first 128 characters only, and drops
#: a symbol whose matched words stand further on (a PDF hit's title and section path filled those 128)
NAME_CHARS = 120
#: of NAME_CHARS, the document's title at most; the rest is the snippet, which holds the query's words
NAME_TITLE_CHARS = 48


class SearchAbandoned(Exception):
    """The request that asked for this search was cancelled or superseded; its results are not wanted."""


def symbol_name(title: str, snippet: str, page: str = "") -> str:
    """`title · page: snippet` in at most NAME_CHARS characters; `page` is the hit's page (`p. 29`), and its
    section goes to the symbol's container, where a long section path does not push the snippet out."""
    if len(title) > NAME_TITLE_CHARS:
        title = title[: NAME_TITLE_CHARS - 1].rstrip() + "…"
    head = f"{title} · {page}" if page else title
    room = max(NAME_CHARS - len(head) - 2, 20)
    text = excerpt(snippet, room + 2 * snippet.count("**")).replace("**", "")
    return f"{head}: {text}" if text else head


def page_label_of(hit: SearchHit) -> str:
    """`p. 29`, `slide 4`: where a hit is, shown in its symbol's name; "" for a document without pages."""
    return f"{page_label(hit.doc_type)} {hit.page}" if hit.page is not None else ""


def hit_range(
    engine: Engine, sources: SourceFiles, doc_id: str, doc_type: str, path: str, line: int, units: UnitCounter
) -> types.Range:
    """The whole line of a hit: in the file itself for text formats, else in the `linkly:` view."""
    lines = engine.catalog.lines(doc_id)
    line = min(max(line, 1), max(len(lines), 1))
    source = sources.get(path) if doc_type in TEXT_DOC_TYPES else None
    if source is not None:
        line = source_line(lines, source.normalised, line)
        lines = source.lines
    index = line - 1
    end = units(lines[index]) if index < len(lines) else 0
    return types.Range(start=types.Position(line=index, character=0), end=types.Position(line=index, character=end))


def search_symbols(
    engine: Engine,
    sources: SourceFiles,
    query: str,
    units: UnitCounter,
    abandoned: Callable[[], bool],
    completions: WordCompletions | None = None,
) -> list[types.SymbolInformation]:
    """Run the search tool and turn its hits into symbols, stopping early once `abandoned()`. The word
    being typed is searched as the words of document names it may become (`completions`)."""
    if abandoned():
        raise SearchAbandoned
    if completions is not None:
        query = completions.completed_query(query)
    try:
        result = call_tool(engine, "search", {"query": query, "limit": RESULT_LIMIT})
    except ToolError:
        return []
    if result.miss:  # the nearest documents of a query nothing matches are noise in a symbol picker
        return []
    symbols: list[types.SymbolInformation] = []
    for hit in result.results:
        if abandoned():
            raise SearchAbandoned
        symbols.append(
            types.SymbolInformation(
                name=symbol_name(hit.title, hit.snippet, page_label_of(hit)),
                kind=types.SymbolKind.File,
                location=types.Location(
                    uri=location_uri(hit.doc_id, hit.doc_type, hit.path),
                    range=hit_range(engine, sources, hit.doc_id, hit.doc_type, hit.path, hit.line, units),
                ),
                container_name=" · ".join(part for part in (hit.section or "", hit.library, hit.doc_type, hit.path) if part),
            )
        )
    return symbols


class WorkspaceSymbolSearch:
    """Numbers queries so that a newer one marks every older one as stale."""

    def __init__(self) -> None:
        self.latest = 0
        self.sources = SOURCES
        self._last_query_at = float("-inf")
        self._completions: WordCompletions | None = None

    def completions_for(self, engine: Engine) -> WordCompletions:
        if self._completions is None or self._completions.catalog is not engine.catalog:
            self._completions = WordCompletions(engine.catalog)
        return self._completions

    async def answer(self, ls: LinklyLanguageServer, query: str) -> list[types.SymbolInformation]:
        if not query.strip():
            return []
        engine = await ls.ready_engine()
        self.latest += 1
        mine = self.latest
        now = time.monotonic()
        typing, self._last_query_at = now - self._last_query_at < TYPING_WINDOW_S, now
        if typing:
            await asyncio.sleep(TYPING_PAUSE_S)
            self._check_current(mine)
        cancelled = threading.Event()

        def abandoned() -> bool:
            return cancelled.is_set() or mine != self.latest

        units = ls.workspace.position_codec.client_num_units
        try:
            symbols = await asyncio.to_thread(
                search_symbols, engine, self.sources, query.lstrip(), units, abandoned, self.completions_for(engine)
            )
        except asyncio.CancelledError:
            cancelled.set()
            raise
        except SearchAbandoned:
            symbols = []
        self._check_current(mine)
        return symbols

    def _check_current(self, mine: int) -> None:
        if mine != self.latest:
            raise JsonRpcContentModified(message="superseded by a newer query")


def register(server: LinklyLanguageServer) -> None:
    search = WorkspaceSymbolSearch()

    @server.feature(types.WORKSPACE_SYMBOL)
    async def on_workspace_symbol(
        ls: LinklyLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.SymbolInformation]:
        return await search.answer(ls, params.query)
