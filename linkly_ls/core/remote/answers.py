"""What a remote answers, held to the tool's contract before anything here reads it.

A remote is another machine, possibly of another version or not linkly at all: an answer whose
fields have other types (`"passage": [1, 2]`, `"results": "none"`) was read as if it fit, and one
hit's `AttributeError` became an internal error that lost this machine's own results. The answer is
checked against the tool's published output schema (`tools/output_schemas.py`), and no text in it
may be larger than any answer of linkly's holds (an 8 MB snippet flooded the terminal).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

#: the longest text a remote's answer may hold anywhere: a line is cut to 4,000 characters by
#: default (`max_line_chars`, at most 100,000) and a title or snippet is far shorter
MAX_REMOTE_TEXT = 200_000


class UnfitAnswer(ValueError):
    """The remote's answer does not fit the tool's contract: `str()` says where, briefly."""


@lru_cache(maxsize=None)
def _validator(tool: str):
    import jsonschema  # loaded with the first remote answer

    from linkly_ls.core.tools.output_schemas import RESULT_FIELDS, result_schema

    return jsonschema.Draft202012Validator(result_schema(RESULT_FIELDS[tool]))


def check_answer(tool: str, payload: object) -> dict[str, Any]:
    """`payload` when it is an object that fits `tool`'s output schema and holds no oversized text."""
    if not isinstance(payload, dict):
        raise UnfitAnswer(f"an answer that is not a JSON object ({type(payload).__name__})")
    try:
        error = next(iter(_validator(tool).iter_errors(payload)), None)
    except RecursionError:
        raise UnfitAnswer("an answer nested too deeply to read") from None
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the answer"
        raise UnfitAnswer(f"`{where}` of another type than the contract's ({error.validator}: {error.validator_value!r})")
    _check_sizes(payload, "")
    return payload


def _check_sizes(value: object, where: str, depth: int = 0) -> None:
    if depth > 200:
        raise UnfitAnswer("an answer nested too deeply to read")
    if isinstance(value, str):
        if len(value) > MAX_REMOTE_TEXT:
            raise UnfitAnswer(f"`{where or 'the answer'}` holds {len(value):,} characters, more than any answer holds")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_sizes(item, f"{where}/{key}" if where else str(key), depth + 1)
    elif isinstance(value, list):
        for position, item in enumerate(value):
            _check_sizes(item, f"{where}/{position}", depth + 1)
