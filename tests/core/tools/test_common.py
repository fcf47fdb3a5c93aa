"""Document ids every tool takes: malformed ids and unknown documents."""

from __future__ import annotations

import pytest

from linkly_ls.core.tools import ArgumentError, ToolError, call_tool


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "/etc/passwd", "ABCDEF012345", "1234", "0123456789ab "])
def test_ids_that_are_not_search_ids_are_refused(engine, bad_id):
    with pytest.raises(ArgumentError, match="must be a document id from search results"):
        call_tool(engine, "read", {"doc_id": bad_id})


def test_unknown_doc_id_is_an_error(engine):
    with pytest.raises(ToolError, match="is not an indexed document"):
        call_tool(engine, "outline", {"doc_ids": ["0123456789ab"]})
