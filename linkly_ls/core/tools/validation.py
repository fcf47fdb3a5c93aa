"""Arguments checked against the tools' schemas (`schema.py`): the same clear message in every face."""

from __future__ import annotations

import json
import re
from typing import Any

from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.tools.schema import SCHEMAS

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


#: an integer written as text (" 7 ", "-3"): ASCII digits only, as the CLI takes them
#: most characters of a wrong argument an error message repeats
SHOWN_VALUE_CHARS = 200
_INTEGER_TEXT = re.compile(r"\s*[+-]?[0-9]+\s*")
#: arguments that narrow what is searched: an empty one is a mistake, never "no filter"
_FILTERS = frozenset({"library", "path_glob", "modified_after", "modified_before"})
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
            unset = " (an unset variable?): leave it out for no filter" if name in _FILTERS else ""
            raise ArgumentError(f"`{name}` must not be empty{unset}")
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
