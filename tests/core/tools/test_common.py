"""Document ids every tool takes: malformed ids and unknown documents."""

from __future__ import annotations

import pytest

from linkly_ls.core.tools import ArgumentError, ToolError, call_tool


@pytest.mark.parametrize("bad_id", ["../../etc/passwd", "/etc/passwd", "ABCDEF01234Z", "1234", "0123456789ab\n/x", ""])
def test_ids_that_are_not_search_ids_are_refused(engine, bad_id):
    with pytest.raises(ArgumentError, match="must be|must not be empty"):
        call_tool(engine, "read", {"doc_id": bad_id})


def test_an_id_typed_in_capitals_or_pasted_with_spaces_is_the_same_id(engine):
    doc_id = call_tool(engine, "search", {"query": "shopping"}).results[0].doc_id
    for typed in (doc_id.upper(), f" {doc_id}\n"):
        assert call_tool(engine, "read", {"doc_id": typed, "limit": 1}).to_json()["doc_id"] == doc_id


def test_unknown_doc_id_is_an_error(engine):
    with pytest.raises(ToolError, match="is not an indexed document"):
        call_tool(engine, "outline", {"doc_ids": ["0123456789ab"]})


def test_a_remote_document_id_given_to_a_tool_that_does_not_reach_remotes_says_so():
    """`linkly links desktop:d4ed8edb3752` was told the id must be 12 hexadecimal characters."""
    import pytest

    from linkly_ls.core.errors import ArgumentError
    from linkly_ls.core.tools.common import check_doc_id

    with pytest.raises(ArgumentError, match=r"^`doc_id` 'desktop:d4ed8edb3752' is a document of the remote 'desktop': only search, outline, grep and read"):
        check_doc_id("desktop:d4ed8edb3752")
