"""Rendering: `[meta] now` / `_meta.now` on successes only."""

from __future__ import annotations

import json

from linkly_ls.core.tools import call_tool
from linkly_ls.core.tools.render import render, render_error


def test_rendering_adds_meta_to_successes_only(engine):
    result = call_tool(engine, "list_libraries", {})
    markdown = render(result)
    assert markdown.splitlines()[-1].startswith("[meta] now=") and markdown.splitlines()[-2] == "---"
    payload = json.loads(render(result, "json"))
    assert payload["_meta"]["now"].endswith("Z")
    assert "meta" not in render_error("boom") and "_meta" not in render_error("boom", "json")
