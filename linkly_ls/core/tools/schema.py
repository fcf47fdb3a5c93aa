"""The tools' parameters, as JSON Schema, and the validation every face shares.

These schemas are the contract (names, types, defaults, limits). The registry
gives each tool its schema, and every face is generated from it: the MCP server
publishes it as the input schema, the CLI makes one argument per property, and
the tools validate with it, so a bad argument gets the same clear message
everywhere. A new parameter is one more property here.
"""

from __future__ import annotations

import json
import re

from typing import Any

from linkly_ls.core.errors import ArgumentError

OUTPUT_FORMAT = {
    "type": "string",
    "enum": ["markdown", "json"],
    "default": "markdown",
    "description": "Set to `json` for structured JSON output.",
}
LIBRARY = {
    "type": "string",
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
            "doc_types": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'Filter by document type, e.g. ["pdf", "md", "docx", "pptx", "epub"].',
            },
            "library": LIBRARY,
            "path_glob": {
                "type": "string",
                "description": "Filter by file path. Substring-matched anywhere in the path (no leading or "
                "trailing `*` needed); `*` matches any characters including `/`, `?` one character; "
                "case-sensitive. A full directory path scopes to that directory. Call `find_paths` "
                "first when the real folder name is unknown.",
            },
            "modified_after": {
                "type": "string",
                "description": "Inclusive lower bound on modification time: `2024-01-01` (00:00:00Z) or "
                "RFC 3339 `2024-01-01T00:00:00Z`.",
            },
            "modified_before": {
                "type": "string",
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
            "case_insensitive": {"type": "boolean", "default": False, "description": "Case-insensitive matching."},
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
                'variants at once, e.g. ["Notion", "notion-export"]. Case-insensitive for ASCII.',
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

_TYPE_NAMES = {"string": "a string", "integer": "an integer", "boolean": "true or false", "array": "a list"}


def validate(tool: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Check arguments against the tool's schema; return them with defaults filled in.

    Raises ToolError naming the argument and what it accepts.
    """
    schema = SCHEMAS[tool]
    arguments = dict(arguments or {})
    properties: dict[str, dict] = schema["properties"]
    for name in arguments:
        if name not in properties:
            raise ArgumentError(f"unknown argument `{name}` for {tool}; accepted: {', '.join(properties)}")
    for name in schema.get("required", []):
        if arguments.get(name) is None:
            raise ArgumentError(f"`{name}` is required for {tool}")
    result: dict[str, Any] = {}
    for name, spec in properties.items():
        value = arguments.get(name)
        if value is None:
            result[name] = spec.get("default")
            continue
        result[name] = _check(name, value, spec)
    return result


#: an integer written as text (" 7 ", "-3", a full-width "７"): decimal digits only, which `int` reads
#: most characters of a wrong argument an error message repeats
SHOWN_VALUE_CHARS = 200
_INTEGER_TEXT = re.compile(r"\s*[+-]?\d+\s*")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _as_json(value: Any) -> str:
    """A wrong argument as the client wrote it (`true`, `null`, `"5"`), not as Python shows it."""
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= SHOWN_VALUE_CHARS else shown[: SHOWN_VALUE_CHARS - 1] + "…"


def _check(name: str, value: Any, spec: dict) -> Any:
    kind = spec["type"]
    if kind == "integer":
        if isinstance(value, bool) or not (
            isinstance(value, int) or (isinstance(value, float) and value.is_integer())
        ):
            if isinstance(value, str) and _INTEGER_TEXT.fullmatch(value):
                value = int(value)
            else:
                raise ArgumentError(f"`{name}` must be {_TYPE_NAMES[kind]}{_range(spec)}, got {_as_json(value)}")
        value = int(value)
        if "minimum" in spec and value < spec["minimum"] or "maximum" in spec and value > spec["maximum"]:
            raise ArgumentError(f"`{name}` must be {_TYPE_NAMES[kind]}{_range(spec)}, got {value}")
        return value
    if kind == "boolean":
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"  # as an integer may come as text, so may a boolean
        if not isinstance(value, bool):
            raise ArgumentError(f"`{name}` must be true or false, got {_as_json(value)}")
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise ArgumentError(f"`{name}` must be a string, got {_as_json(value)}")
        if _SURROGATE.search(value):  # bytes a terminal in another encoding sent, kept as lone surrogates
            raise ArgumentError(
                f"`{name}` is not valid UTF-8 text (is the terminal set to another encoding, such as Latin-1?): "
                f"{value.encode('utf-8', 'surrogateescape').decode('ascii', 'backslashreplace')}"
            )
        # blank text is no query or name, but a space is a pattern like any other
        if len(value) < spec.get("minLength", 0) or not value.strip() and spec.get("minLength") and spec.get("format") != "regex":
            raise ArgumentError(f"`{name}` must not be empty")
        if "maxLength" in spec and len(value) > spec["maxLength"]:
            raise ArgumentError(f"`{name}` is too long ({len(value)} characters; at most {spec['maxLength']})")
        if "enum" in spec and value not in spec["enum"]:
            raise ArgumentError(f"`{name}` must be one of {', '.join(spec['enum'])}; got {_as_json(value)}")
        return value
    if kind == "array":
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(value, list):
            raise ArgumentError(f"`{name}` must be a list, got {_as_json(value)}")
        item_spec = spec.get("items", {"type": "string"})
        items = [_check(f"{name}[{index}]", item, item_spec) for index, item in enumerate(value)]
        if len(items) < spec.get("minItems", 0):
            raise ArgumentError(f"`{name}` needs at least {spec['minItems']} item(s)")
        if "maxItems" in spec and len(items) > spec["maxItems"]:
            raise ArgumentError(f"`{name}` takes at most {spec['maxItems']} items, got {len(items)}")
        return items
    raise ArgumentError(f"`{name}` has an unsupported type")


def _range(spec: dict) -> str:
    if "minimum" in spec and "maximum" in spec:
        return f" from {spec['minimum']} to {spec['maximum']}"
    if "minimum" in spec:
        return f" of at least {spec['minimum']}"
    return ""
