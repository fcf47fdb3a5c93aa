"""`search` with the query `*`: every document the filters pass, listed instead of ranked.

The contract sends "all PDFs" to `search` with `path_glob="*.pdf"`. A ranked search needs words, and
whatever word an agent makes up for it leaves out the files that lack it (a PDF of figures, a slide
deck without the word "document"), so `*` lists them all: by path, or newest or oldest first with
`time_sort`, and says how many pass when `limit` cuts the list.
"""

from __future__ import annotations


from linkly_ls.core.engine import Engine
from linkly_ls.core.provenance import provenance_of
from linkly_ls.core.search.snippets import SNIPPET_LINES, QueryMatcher, best_snippet
from linkly_ls.core.tools.search_results import SearchHit, SearchResult

#: the lines read from the top of a listed document for its snippet
HEAD_LINES = 40
ORDERS = {"default": "by path", "newest": "newest first", "oldest": "oldest first"}


def lists_everything(query: str) -> bool:
    """The query is `*` (or `**`): no words, every document the filters pass."""
    return bool(query) and set(query) == {"*"}


def listing(engine: Engine, allowed: list[str] | None, limit: int, time_sort: str, offset: int = 0) -> SearchResult:
    """The documents of `allowed` (None: every one), in the `time_sort` order or by path, `limit` of them
    from `offset` on; each hit shows the beginning of its document and reads relevance 1 (it passes
    every filter)."""
    rows = engine.catalog.paths_and_times()
    if allowed is not None:
        passing = set(allowed)
        rows = [row for row in rows if row[0] in passing]
    if time_sort == "default":
        rows.sort(key=lambda row: row[1])
    else:
        rows.sort(key=lambda row: (row[2], row[1]), reverse=time_sort == "newest")
    shown = [doc_id for doc_id, _, _ in rows[offset : offset + limit]]
    records = engine.catalog.summaries(shown)
    places = provenance_of(engine.catalog, shown)
    matcher = QueryMatcher("")
    hits: list[SearchHit] = []
    for doc_id in shown:
        record = records.get(doc_id)
        if record is None:  # removed meanwhile
            continue
        head = engine.catalog.line_range(doc_id, 1, HEAD_LINES)
        last = max(1, min(record.total_lines, len(head)))
        snippet = best_snippet(matcher, head, 1, last, places[doc_id].marker_lines(head))
        shown_last = min(last, snippet.line + SNIPPET_LINES - 1)
        hits.append(
            SearchHit.from_summary(record, 1.0, snippet, snippet.line, shown_last, place=places[doc_id].place(snippet.line))
        )
    order = ORDERS[time_sort]
    result = SearchResult(
        query="*",
        results=hits,
        mode="keyword",
        mode_reason=f"the query `*` lists every document that passes the filters, {order}, without ranking",
    )
    if len(rows) > len(hits):
        passing = "are indexed" if allowed is None else "pass the filters"
        shown_range = f"the first {len(hits)}" if not offset else f"{offset + 1:,}-{offset + len(hits):,}"
        wider = ", raise `limit` (at most 50)" if limit < 50 else ""
        page = f", or page with `offset={offset + limit}`" if len(rows) > offset + limit else ""
        result.notes.append(
            f"{len(rows):,} documents {passing}; {shown_range} {order} are shown. Narrow them (`path_glob`, "
            f"`doc_types`, a date window; `find_paths` shows the folders){wider}{page}."
        )
    if len(rows) > offset + limit:
        result.next_offset = offset + limit
    result.total_matching = len(rows)
    return result
