"""Render a tool result as markdown or JSON, with the response metadata every success carries."""

from __future__ import annotations

import json
import re
from typing import Any

from linkly_ls.core.tools.common import utc_now


#: control characters other than newline and tab (C0, DEL, C1): a document's or a file name's escape
#: sequences would retitle or clear the terminal of whoever reads the text form
#: and the bidirectional embeddings, overrides and isolates, which make a terminal show text in another
#: order than it is (a file named `report\u202efdp.md` shows as `reportdm.pdf`); the marks (U+200E/F)
#: that right-to-left text needs stay
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


#: what a path holding it is quoted for in a text form: control characters (a newline, a tab) and the
#: bidirectional controls `visible_controls` writes out
_QUOTED_IN_PATHS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def path_text(path: str) -> str:
    """A path as a text form shows it: as it is, or, when it holds a control character, quoted as JSON
    writes a string (`"/notes/line1\\nline2.md"`): one line, and never the same text as another path (a
    name holding a real backslash and an `n` is shown as it is, unquoted)."""
    return json.dumps(path, ensure_ascii=False) if _QUOTED_IN_PATHS.search(path) else path


def visible_controls(text: str) -> str:
    """`text` with each control character written out (`\\x1b`, `\\u202e`), so it shows instead of acting."""
    return _CONTROL.sub(_written_out, text)


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def to_payload(result: Any, now: str | None = None) -> dict[str, Any]:
    """The JSON form of a result, with `_meta.now`."""
    payload = result.to_json()
    payload["_meta"] = {"now": now or utc_now()}
    return payload


def render(result: Any, output_format: str = "markdown", now: str | None = None) -> str:
    now = now or utc_now()
    if output_format == "json":
        return json.dumps(to_payload(result, now), ensure_ascii=False, indent=2)
    return f"{visible_controls(result.to_markdown())}\n\n---\n[meta] now={now}"


def render_error(message: str, output_format: str = "markdown") -> str:
    """Errors carry no metadata: only the cause."""
    if output_format == "json":
        return json.dumps({"error": message}, ensure_ascii=False)
    return f"Error: {visible_controls(message)}"
