"""The JSON Schema of each tool's structured result, published as its MCP `outputSchema`.

Typed, so that a client can generate types from it and an agent reads what each field holds. Every
field a result may carry is named. Nothing is required and objects stay open: an answer cut to the
server's `max_response_chars` keeps its short fields only, a newer server may add fields and a remote
of another version answers with its own, and an MCP client refuses an answer its schema does not
admit (the `mcp` SDK raises). The test suite holds every tool answer it gets to these schemas.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def _typed(kind: str | list[str], description: str = "", **extra: Any) -> Schema:
    schema: Schema = {"type": kind, **extra}
    if description:
        schema["description"] = description
    return schema


def _text(description: str = "") -> Schema:
    return _typed("string", description)


def _count(description: str = "") -> Schema:
    return _typed("integer", description)


def _flag(description: str = "") -> Schema:
    return _typed("boolean", description)


def _maybe(kind: str, description: str = "") -> Schema:
    return _typed([kind, "null"], description)


def _list(items: Schema, description: str = "") -> Schema:
    return _typed("array", description, items=items)


def _object(properties: dict[str, Schema], description: str = "") -> Schema:
    return _typed("object", description, properties=properties)


_DOC_ID = _text("document id: pass it to outline, grep, read (a remote's is `NAME:id`)")
_LINE = _count("line number, from 1")
_GUIDANCE = _list(_text(), "what to try next")
_NOTICE = _text("why nothing can be found at all (an empty index, no such folder)")
_ON_DISK = _text("`changed` or `deleted`: the file on disk is not what was indexed")
_PAGE = _count("page, slide or chapter the line is on")
_SECTION = _text("the heading path above the line")
_NUMBERED_LINE = _object({"line": _LINE, "text": _text()})
_MODE = _text("what actually ranked: keyword, vector or hybrid")
_REMOTE_STATUSES = _list(
    _object({"name": _text(), "ok": _flag(), "error": _maybe("string", "why the remote did not answer")}),
    "how each remote machine answered",
)
_FAILURE = _object({"path": _text(), "message": _text()})
_SKIPPED = _typed("object", "files left out, by reason", additionalProperties=_count())

_SEARCH_HIT = _object(
    {
        "doc_id": _DOC_ID,
        "title": _text(),
        "path": _text("absolute path of the file"),
        "relevance": _typed("number", "0-1: how much of the query the best passage holds"),
        "word_count": _count(),
        "total_lines": _count(),
        "has_outline": _flag(),
        "modified_at": _text("ISO 8601, UTC"),
        "keywords": _list(_text()),
        "snippet": _text(),
        "doc_type": _text("pdf, md, mdx, docx, epub, pptx, html, txt or image"),
        "library": _text(),
        "line": _LINE,
        "passage": _object({"start_line": _LINE, "end_line": _LINE}, description="the best passage's lines"),
        "stale": _flag("the file changed or went since it was indexed"),
        "on_disk": _ON_DISK,
        "page": _PAGE,
        "section": _SECTION,
        "text_missing_reason": _text("why the document has no text (a scan awaiting OCR, ...)"),
        "explain": _typed("object", "keyword and vector ranks and fused scores (`explain: true`)"),
        "content_hash": _text("what copies of a file share"),
        "server": _text("the server that answered: `local` or a remote's name"),
        "also_as": _list(
            _object({"doc_id": _DOC_ID, "path": _text(), "doc_type": _text(), "library": _text()}),
            "other files of this work (copies, other formats), shown here rather than as results",
        ),
    },
)

_OUTLINE_NODE = _object(
    {
        "id": _text("node id (`2.1`): pass it to `expand`"),
        "title": _text(),
        "level": _count(),
        "start_line": _LINE,
        "end_line": _LINE,
        "page": _PAGE,
        "children": _list({"type": "object"}, "nested nodes, shaped alike"),
        "collapsed": _count("nodes folded under this one (raise `levels` or `expand` it)"),
    },
)

_LINK = _object(
    {
        "line": _LINE,
        "kind": _text("inline, wiki, reference, embed, ..."),
        "target": _text("the link as written"),
        "text": _text(),
        "status": _text("ok, external, broken, missing_heading, missing_block, ambiguous, ..."),
        "doc_id": _DOC_ID,
        "path": _text(),
        "title": _text(),
        "doc_type": _text(),
        "target_line": _maybe("integer", "the line the link leads to"),
        "heading": _maybe("string", "the heading the link leads to"),
        "candidates": _list(_text(), "the documents an ambiguous link may mean"),
    }
)

_LIBRARY = _object(
    {
        "name": _text("a local library's name, or `cloud:///REMOTE/LIBRARY`"),
        "description": _maybe("string"),
        "paths": _list(_text()),
        "document_count": _count(),
        "failed_count": _count(),
        "failed": _list(_FAILURE),
        "ocr_pending_count": _count(),
        "skipped_count": _count(),
        "skipped": _SKIPPED,
        "respect_gitignore": _flag(),
        "vector_coverage": _maybe("number", "0-1: share of the words the model's vectors cover (null: vectors off)"),
        "first_pass_coverage": _maybe("number", "0-1: share of the words the fast first-pass vectors cover"),
        "include": _list(_text()),
        "exclude": _list(_text()),
        "source": _text("where the library is defined: config or index"),
        "note": _text(),
        "remote": _text(),
        "reachable": _flag(),
        "error": _maybe("string"),
    },
)

_DIRECTORY = _object(
    {
        "path": _text(),
        "file_count": _count(),
        "median_word_count": _count(),
        "children": _list({"type": "object"}, "sub-folders, shaped alike"),
        "more_directories": _count("sub-folders not shown"),
    },
)

RESULT_FIELDS: dict[str, dict[str, Schema]] = {
    "search": {
        "results": _list(_SEARCH_HIT, "ranked documents, best first"),
        "total": _count("results in this answer"),
        "mode": _MODE,
        "mode_reason": _text(),
        "indexing": _flag("vectors are still being computed: results may improve"),
        "miss": _flag("no result holds the query well: read `guidance`"),
        "notes": _list(_text()),
        "guidance": _GUIDANCE,
        "notice": _NOTICE,
        "remotes": _REMOTE_STATUSES,
        "next_offset": _count("`offset` of the next page, when there is one"),
        "matching": _count("documents passing the filters (the `*` listing)"),
    },
    "outline": {
        "documents": _list(
            _object(
                {
                    "doc_id": _DOC_ID,
                    "title": _text(),
                    "path": _text(),
                    "doc_type": _text(),
                    "total_lines": _count(),
                    "word_count": _count(),
                    "modified_at": _text(),
                    "has_outline": _flag(),
                    "links": _count(),
                    "backlinks": _count(),
                    "nodes": _list(_OUTLINE_NODE),
                    "on_disk": _ON_DISK,
                },
            )
        ),
        "missing": _list(_object({"doc_id": _text(), "error": _text()}), "ids that name no indexed document"),
    },
    "grep": {
        "doc_id": _DOC_ID,
        "title": _text(),
        "doc_type": _text(),
        "pattern": _text(),
        "total_matches": _count(),
        "total_lines": _count(),
        "offset": _count(),
        "matches": _list(
            _object(
                {
                    "line": _LINE,
                    "end_line": _LINE,
                    "text": _text(),
                    "before": _list(_NUMBERED_LINE),
                    "after": _list(_NUMBERED_LINE),
                    "page": _PAGE,
                    "section": _SECTION,
                },
            )
        ),
        "next_offset": _maybe("integer", "`offset` of the next page of matches (null: none)"),
        "note": _text(),
        "on_disk": _ON_DISK,
    },
    "read": {
        "doc_id": _DOC_ID,
        "title": _text(),
        "path": _text(),
        "doc_type": _text(),
        "offset": _LINE,
        "lines": _list(_NUMBERED_LINE),
        "total_lines": _count(),
        "remaining_lines": _count(),
        "next_offset": _maybe("integer", "`offset` to read on from (null: the end)"),
        "pages": _object({"first": _PAGE, "last": _PAGE}, description="pages the lines are on"),
        "text_missing_reason": _text(),
        "on_disk": _ON_DISK,
    },
    "list_libraries": {
        "libraries": _list(_LIBRARY),
        "remotes": _REMOTE_STATUSES,
        "configured_remotes": _list(_text(), "remote machines not asked (`remote: true` asks them)"),
    },
    "explore": {
        "scope": _text(),
        "document_count": _count(),
        "doc_types": _list(_object({"type": _text(), "count": _count()})),
        "directories": _list(_DIRECTORY),
        "keywords": _list(
            _object(
                {
                    "keyword": _text(),
                    "count": _count("documents it is a key term of"),
                    "documents": _list(_object({"doc_id": _DOC_ID, "title": _text()})),
                }
            )
        ),
        "skipped_count": _count(),
        "skipped_folders": _list(
            _object({"path": _text(), "skipped_count": _count(), "reasons": _SKIPPED})
        ),
        "failed_count": _count(),
        "failed": _list(_FAILURE),
        "notice": _NOTICE,
        "guidance": _GUIDANCE,
        "remotes": _REMOTE_STATUSES,
    },
    "find_paths": {
        "total_files": _count(),
        "truncated": _flag(),
        "directories": _list(
            _object(
                {"path": _text(), "path_glob": _text("the folder as a `path_glob` filter"), "file_count": _count()},
            )
        ),
        "notice": _NOTICE,
        "guidance": _GUIDANCE,
        "remotes": _REMOTE_STATUSES,
    },
    "links": {
        "doc_id": _DOC_ID,
        "title": _text(),
        "path": _text(),
        "links": _list(_LINK),
        "backlinks": _list(_LINK),
        "counts": _typed("object", "links, links_within, backlinks, broken (and mentions)", additionalProperties=_count()),
        "mentions": _list(
            _object(
                {
                    "doc_id": _DOC_ID,
                    "title": _text(),
                    "path": _text(),
                    "doc_type": _text(),
                    "line": _LINE,
                    "column": _count(),
                    "name": _text("the name found"),
                    "snippet": _text(),
                    "page": _PAGE,
                    "section": _SECTION,
                }
            ),
            "places naming this document without a link",
        ),
        "mention_names": _list(_text()),
        "mentions_truncated": _flag(),
        "next_offset": _maybe("integer"),
    },
    "related": {
        "doc_id": _DOC_ID,
        "title": _text(),
        "section": _object({"start_line": _LINE, "end_line": _LINE}),
        "terms": _list(_text()),
        "results": _list(_SEARCH_HIT),
        "total": _count(),
        "excluded_links": _count(),
        "mode": _MODE,
        "mode_reason": _text(),
    },
    "index_library": {
        "libraries": _list(
            _object(
                {
                    "library": _text(),
                    "indexed": _count(),
                    "unchanged": _count(),
                    "failed": _count(),
                    "removed": _count(),
                    "seconds": _typed("number"),
                    "document_count": _count(),
                    "skipped_count": _count(),
                    "skipped": _SKIPPED,
                    "errors": _list(_FAILURE),
                },
            )
        ),
    },
}


#: what every answer may carry: `_meta`, and the fields of an answer cut to `max_response_chars`
_COMMON: dict[str, Schema] = {
    "truncated": _flag("the answer was cut to the server's max_response_chars: read `note`"),
    "total_chars": _count("the whole answer's size"),
    "shown_chars": _count(),
    "_meta": _object({"now": _typed("string", "the server's time (ISO 8601)", format="date-time")}),
}


def result_schema(properties: dict[str, Schema]) -> Schema:
    """The schema of a structured result with these fields."""
    return _object({**properties, **{key: value for key, value in _COMMON.items() if key not in properties}})
