"""Holding tool answers to the tools' output schemas (the suite-wide check in `tests/conftest.py`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import jsonschema


def schema_problems(schema: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    """Where `answer` (a tool's JSON, as sent) breaks `schema`: one line each, empty when it holds."""
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    return [
        f"{'/'.join(str(part) for part in error.absolute_path) or '(top)'}: {error.message}"
        for error in validator.iter_errors(json.loads(json.dumps(answer)))
    ]


def checked_call(call: Callable[..., Any]) -> Callable[..., Any]:
    """`Tool.call` that also checks the answer's JSON against the tool's output schema."""

    @functools.wraps(call)
    def checked(tool: Any, engine: Any, arguments: dict[str, Any] | None = None) -> Any:
        result = call(tool, engine, arguments)
        to_json = getattr(result, "to_json", None)
        if to_json is not None:
            problems = schema_problems(tool.output_schema, {**to_json(), "_meta": {"now": "2026-01-01T00:00:00Z"}})
            assert not problems, f"{tool.name}'s answer breaks its output schema: {problems[:5]}"
        return result

    return checked
