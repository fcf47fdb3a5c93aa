"""The tools' parameters, as JSON Schema (`validation.py` checks arguments against them).

These schemas are the contract (names, types, defaults, limits). The registry
gives each tool its schema, and every face is generated from it: the MCP server
publishes it as the input schema, the CLI makes one argument per property, and
the tools validate with it, so a bad argument gets the same clear message
everywhere. A new parameter is one more property here.
"""

from __future__ import annotations

from typing import Any

OUTPUT_FORMAT = {
    "type": "string",
    "enum": ["markdown", "json"],
    "default": "markdown",
    "description": "Set to `json` for structured JSON output.",
}
LIBRARY = {
    "type": "string",
    "minLength": 1,
    "description": "Restrict to one library. Local: a plain name or `local://name` (`local://`: every local "
    "library); remote: `cloud:///<remote>/<library>`, `cloud:///<remote>` (one remote machine) or `cloud:///` "
    "(every remote). Use `list_libraries` to see the available names.",
}
REMOTE = {
    "type": "boolean",
    "default": False,
    "description": "Also reach the configured remote machines (`[[remote]]`); their ids look like "
    "`desktop:3f2a9c01b7de`. A failing remote is reported in `remotes`, the others still answer.",
}
#: how far `offset` pages a ranking (relevance is calibrated over the 550 best at most) and the `*` listing
RANKED_MAX_OFFSET = 500
LISTING_MAX_OFFSET = 1_000_000
DOC_ID = "Document id (from search results): 12 hexadecimal characters, or `<remote>:<id>` for a remote document."

SCHEMAS: dict[str, dict[str, Any]] = {
    "search": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "description": "Search keywords or a phrase; words in double quotes must appear side by side. `*` alone lists every document the filters pass (by path, or by date with `time_sort`)."},
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 20,
                "description": "Maximum number of results (1-50).",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "maximum": LISTING_MAX_OFFSET,
                "default": 0,
                "description": "Results to skip, to page through the same ranking (0-500) or the `*` listing (to "
                "its end): the answer's `next_offset` is where the next page starts.",
            },
            "doc_types": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Filter by document type, e.g. ["pdf", "md", "docx", "pptx", "epub"].',
            },
            "library": LIBRARY,
            "path_glob": {
                "type": "string",
                "minLength": 1,
                "description": "Filter by file path. Substring-matched anywhere in the path (no leading or "
                "trailing `*` needed); `*` matches any characters including `/`, `?` one character, `[abc]` one "
                "of a set (`\\[` a bracket; brackets a path holds as written are read as written); "
                "case-sensitive. A full directory path scopes to that directory. Call `find_paths` "
                "first when the real folder name is unknown.",
            },
            "modified_after": {
                "type": "string",
                "minLength": 1,
                "description": "Inclusive lower bound on modification time: `2024-01-01` (00:00:00Z) or "
                "RFC 3339 `2024-01-01T00:00:00Z`.",
            },
            "modified_before": {
                "type": "string",
                "minLength": 1,
                "description": "Inclusive upper bound on modification time, same format; a bare date "
                "includes that whole day.",
            },
            "time_sort": {
                "type": "string",
                "enum": ["default", "newest", "oldest"],
                "default": "default",
                "description": "`default` keeps relevance order; `newest` / `oldest` put the strong matches "
                "(deduplicated, among the 200 best) in order of modification time.",
            },
            "mode": {
                "type": "string",
                "enum": ["auto", "keyword", "vector", "hybrid"],
                "default": "auto",
                "description": "How to rank: `auto` (hybrid when vectors exist, else keywords), `keyword` "
                "(exact terms only, BM25), `vector` (meaning only), `hybrid` (both, fused).",
            },
            "explain": {
                "type": "boolean",
                "default": False,
                "description": "Add per-result ranking details (keyword rank and score, fused score).",
            },
            "remote": REMOTE,
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    "links": {
        "type": "object",
        "properties": {
            "doc_id": {"type": "string", "description": "Document id (from search results)."},
            "direction": {
                "type": "string",
                "enum": ["both", "out", "in"],
                "default": "both",
                "description": "`out`: the document's links, those leading to other documents and URLs first, "
                "then those within it (a PDF's contents, cross-references and index); `in`: its backlinks "
                "(links to it from other documents); `both`.",
            },
            "broken_only": {
                "type": "boolean",
                "default": False,
                "description": "Only the broken links (target or heading missing, ambiguous wikilink).",
            },
            "mentions": {
                "type": "boolean",
                "default": False,
                "description": "Also list the unlinked mentions: lines of other documents that name this one "
                "(its title or file name, whole words, any case) without linking to it.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "default": 100,
                "description": "Maximum links, backlinks and mentions listed (1-500); counts are always complete.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Links, backlinks and mentions to skip in each list, for paging (`next_offset`).",
            },
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["doc_id"],
        "additionalProperties": False,
    },
    "related": {
        "type": "object",
        "properties": {
            "doc_id": {"type": "string", "description": "Document id (from search results)."},
            "line": {
                "type": "integer",
                "minimum": 1,
                "description": "A line of the document: relate only the section around it.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 10,
                "description": "Maximum number of results (1-50).",
            },
            "library": LIBRARY,
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["doc_id"],
        "additionalProperties": False,
    },
    "outline": {
        "type": "object",
        "properties": {
            "doc_ids": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "maxItems": 20,
                "description": "Document ids (from search results; `<remote>:<id>` for remote documents).",
            },
            "expand": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Node ids to expand, e.g. ["2", "3.1"]; omit to show all levels.',
            },
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["doc_ids"],
        "additionalProperties": False,
    },
    "grep": {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "format": "regex", "minLength": 1, "maxLength": 1000, "description": "Regular expression."},
            "doc_id": {"type": "string", "description": DOC_ID},
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": 50,
                "default": 3,
                "description": "Lines of context before and after each match.",
            },
            "before": {
                "type": "integer",
                "minimum": 0,
                "maximum": 50,
                "description": "Lines of context before each match (overrides `context`).",
            },
            "after": {
                "type": "integer",
                "minimum": 0,
                "maximum": 50,
                "description": "Lines of context after each match (overrides `context`).",
            },
            "case_insensitive": {"type": "boolean", "default": False, "description": "Case-insensitive matching, accents aside too (`lopez` matches `López`)."},
            "output_mode": {
                "type": "string",
                "enum": ["content", "count"],
                "default": "content",
                "description": "`content` (matching lines with context) or `count` (match count only).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100,
                "default": 20,
                "description": "Maximum matching lines to return (max 100).",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Number of matches to skip, for paging.",
            },
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["pattern", "doc_id"],
        "additionalProperties": False,
    },
    "read": {
        "type": "object",
        "properties": {
            "doc_id": {"type": "string", "description": DOC_ID},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "default": 1,
                "description": "Starting line number (from 1).",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 500,
                "default": 200,
                "description": "Number of lines to read (max 500).",
            },
            "page": {
                "type": "integer",
                "minimum": 1,
                "description": (
                    "Read this page (PDF page, slide, EPUB chapter) instead of from `offset`: from its marker "
                    "line, as many lines as the page holds unless `limit` says otherwise. Search results give "
                    "each hit's `page`."
                ),
            },
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["doc_id"],
        "additionalProperties": False,
    },
    "list_libraries": {
        "type": "object",
        "properties": {"remote": REMOTE, "output_format": OUTPUT_FORMAT},
        "additionalProperties": False,
    },
    "explore": {
        "type": "object",
        "properties": {"library": LIBRARY, "output_format": OUTPUT_FORMAT},
        "additionalProperties": False,
    },
    "find_paths": {
        "type": "object",
        "properties": {
            "patterns": {
                "type": "array",
                "items": {"type": "string", "minLength": 1},
                "minItems": 1,
                "maxItems": 50,
                "description": "Keywords matched as `%keyword%` against file paths, OR-ed; pass several "
                'variants at once, e.g. ["Notion", "notion-export"]. Case- and accent-insensitive (`cafe` '
                'finds `Café/`, `soren` finds `Søren/`); CJK matches literally.',
            },
            "library": LIBRARY,
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 10,
                "description": "Maximum number of candidate folders (max 50).",
            },
            "output_format": OUTPUT_FORMAT,
        },
        "required": ["patterns"],
        "additionalProperties": False,
    },
    "index_library": {
        "type": "object",
        "properties": {
            "library": {
                "type": "string",
                "description": "The library to re-index (a plain name or `local://name`); omit to re-index every library.",
            },
            "output_format": OUTPUT_FORMAT,
        },
        "additionalProperties": False,
    },
}

#: the property types `validate` checks, and so the only ones a tool's schema may use
PROPERTY_TYPES = ("string", "integer", "boolean", "array")
