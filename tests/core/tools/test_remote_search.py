"""Merging a remote's search answer with this machine's: what a remote claims is held to the contract."""

from __future__ import annotations

from linkly_ls.core.remote import RemoteAnswer, RemoteStatus
from linkly_ls.core.tools.remote_search import merge_search
from linkly_ls.core.tools.validation import validate
from support.tool_library import search


def test_a_remote_claiming_relevance_above_one_or_a_local_copy_cannot_push_the_local_hits_out(engine):
    local = search(engine, limit=5)
    mine = local.results[0]
    claims = [
        {"doc_id": "aaaaaaaaaaaa", "title": "Loud", "path": "/x/loud.md", "relevance": 5.0, "content_hash": "loud"},
        {"doc_id": "bbbbbbbbbbbb", "title": "Copy", "path": "/x/copy.md", "relevance": mine.relevance, "content_hash": mine.content_hash},
        {"doc_id": "cccccccccccc", "title": "Odd", "path": "/x/odd.md", "relevance": float("nan"), "content_hash": "odd"},
    ]
    answer = RemoteAnswer(RemoteStatus("desk", True), {"results": claims, "mode": "keyword", "mode_reason": ""})
    merged = merge_search(validate("search", {"query": "shopping", "limit": 20}), local, [answer])
    relevance = {hit.title: hit.relevance for hit in merged.results}
    assert relevance["Loud"] == 1.0 and relevance["Odd"] == 0.0
    assert "Copy" not in relevance and mine.doc_id in {hit.doc_id for hit in merged.results}


def test_a_remote_hits_other_files_are_named_as_this_machine_reaches_them(engine):
    claims = [
        {
            "doc_id": "aaaaaaaaaaaa", "title": "Guide", "path": "/x/guide.pdf", "relevance": 0.9, "library": "docs",
            "also_as": [
                {"doc_id": "bbbbbbbbbbbb", "path": "/x/guide.txt", "doc_type": "txt", "library": "docs"},
                {"path": "/x/no-id.txt"},
                "not a file",
            ],
        },
    ]
    answer = RemoteAnswer(RemoteStatus("desk", True), {"results": claims, "mode": "keyword", "mode_reason": ""})
    merged = merge_search(validate("search", {"query": "guide", "limit": 20}), search(engine, limit=5), [answer])
    guide = next(hit for hit in merged.results if hit.title == "Guide")
    assert len(guide.also_as) == 1
    other = guide.also_as[0]
    assert other.doc_type == "txt" and other.doc_id != "bbbbbbbbbbbb" and other.doc_id.startswith("desk")
    assert "desk" in other.path and "desk" in other.library
