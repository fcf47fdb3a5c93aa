"""Merging a remote's search answer with this machine's: what a remote claims is held to the contract."""

from __future__ import annotations

from linkly_ls.core.remote import RemoteAnswer, RemoteSet, RemoteStatus
from linkly_ls.core.tools.remote_search import merge_search, search_anywhere
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


def test_this_machines_copy_of_a_file_is_shown_from_here_at_the_best_place_a_server_gives_it(engine):
    """Each index ranks a file by its own statistics: the remote's copy at 1.00 hid the one on disk here."""
    local = search(engine, limit=5)
    mine = local.results[-1]
    mine.relevance = 0.4  # as this index scores it
    claims = [
        {"doc_id": "bbbbbbbbbbbb", "title": "Their copy", "path": "/x/copy.md", "relevance": 1.0, "content_hash": mine.content_hash},
        {"doc_id": "cccccccccccc", "title": "Other", "path": "/x/other.md", "relevance": 0.99, "content_hash": "other"},
    ]
    answer = RemoteAnswer(RemoteStatus("desk", True), {"results": claims, "mode": "keyword", "mode_reason": ""})
    merged = merge_search(validate("search", {"query": "shopping", "limit": 20}), local, [answer])
    order = [hit.doc_id for hit in merged.results]
    assert order.index(mine.doc_id) < order.index("desk:cccccccccccc")
    assert merged.results[order.index(mine.doc_id)].relevance == 1.0 and "Their copy" not in {hit.title for hit in merged.results}


class _Answering:
    def __init__(self, payload):
        self.payload = payload

    def call_tool(self, tool, arguments):
        return self.payload

    def close(self):
        pass


GOOD_HIT = {"doc_id": "aaaaaaaaaaaa", "title": "Remote guide", "path": "/x/guide.md", "relevance": 0.9, "library": "docs"}


def test_a_remote_answering_out_of_contract_is_left_out_and_the_local_hits_come_back(engine):
    """`"passage": [1, 2]` in one remote hit was an internal error that lost this machine's results."""
    engine.__dict__["remotes"] = _remotes_of(evil=_Answering({"results": [{**GOOD_HIT, "passage": [1, 2]}]}),
                                          desk=_Answering({"results": [GOOD_HIT], "mode": "keyword"}))
    try:
        merged = search_anywhere(engine, query="shopping", remote=True).to_json()
    finally:
        del engine.__dict__["remotes"]
    servers = {hit["server"] for hit in merged["results"]}
    assert servers == {"local", "desk"}
    status = {entry["name"]: entry for entry in merged["remotes"]}
    assert status["desk"]["ok"] and not status["evil"]["ok"]
    assert "answered `search` with `results/0/passage` of another type" in status["evil"]["error"]




def _remotes_of(**clients):
    remotes = RemoteSet([])
    remotes.clients.update(clients)
    return remotes


def test_an_outline_of_local_and_remote_ids_keeps_what_answers_and_lists_the_rest_as_missing(engine):
    """One unknown remote id (or a remote down) lost the whole answer, the local outline with it."""
    from linkly_ls.core.remote.client import RemoteError
    from linkly_ls.core.tools.outline import outline

    class _Down:
        def call_tool(self, tool, arguments):
            raise RemoteError("remote 'down' did not answer within 5 s")

        def close(self):
            pass

    local_id = search(engine, limit=1).results[0].doc_id
    engine.__dict__["remotes"] = _remotes_of(desk=_Answering({"documents": []}), down=_Down())
    try:
        answer = outline(engine, doc_ids=[local_id, " desk:FFFFFFFFFFFF", "down:0123456789ab"]).to_json()
    finally:
        del engine.__dict__["remotes"]
    assert [document["doc_id"] for document in answer["documents"]] == [local_id]
    missing = {entry["doc_id"]: entry["error"] for entry in answer["missing"]}
    assert "is not an indexed document of the remote 'desk'" in missing["desk:ffffffffffff"]
    assert "did not answer within 5 s" in missing["down:0123456789ab"]


def test_a_remote_whose_index_is_empty_says_so_in_the_merged_answer(engine):
    """It looked healthy and empty (`ok: true`, no hit), its own notice dropped."""
    answer = RemoteAnswer(
        RemoteStatus("desk", True),
        {"results": [], "mode": "keyword", "mode_reason": "", "notice": "No documents indexed yet: indexing is running."},
    )
    merged = merge_search(validate("search", {"query": "shopping", "limit": 20}), search(engine, limit=5), [answer])
    assert "Remote desk: No documents indexed yet: indexing is running." in merged.guidance


def test_one_remote_alone_is_paged_as_it_pages_its_ranking(engine):
    """`offset` was refused even for one remote's library, with advice to do just that, and no `next_offset` came."""
    import pytest

    from linkly_ls.core.errors import ArgumentError

    class _Paging:
        def __init__(self):
            self.asked = []

        def call_tool(self, tool, arguments):
            self.asked.append(arguments)
            return {"results": [{**GOOD_HIT, "doc_id": f"{arguments.get('offset', 0):012x}"}], "mode": "keyword", "next_offset": arguments.get("offset", 0) + 1}

        def close(self):
            pass

    desk = _Paging()
    engine.__dict__["remotes"] = _remotes_of(desk=desk, nas=_Answering({"results": []}))
    try:
        first = search_anywhere(engine, query="guide", library="cloud:///desk", limit=1)
        second = search_anywhere(engine, query="guide", library="cloud:///desk", limit=1, offset=first.next_offset)
        with pytest.raises(ArgumentError, match="search one remote alone"):
            search_anywhere(engine, query="guide", library="cloud:///", offset=1)
    finally:
        del engine.__dict__["remotes"]
    assert (first.next_offset, second.next_offset) == (1, 2) and desk.asked[1]["offset"] == 1
    assert [hit.doc_id for hit in second.results] == ["desk:000000000001"]


def test_a_remote_that_refuses_the_call_is_an_argument_error_not_no_answer(engine):
    """`library: cloud:///desk/nope` was "no server answered" (kind unavailable) though the remote had answered."""
    import pytest

    from linkly_ls.core.errors import ArgumentError
    from linkly_ls.core.remote.client import RemoteToolError

    class _Refusing:
        def call_tool(self, tool, arguments):
            raise RemoteToolError("remote 'desk': `library` 'nope' does not exist; available: books")

        def close(self):
            pass

    engine.__dict__["remotes"] = _remotes_of(desk=_Refusing())
    try:
        with pytest.raises(ArgumentError, match="the call was refused: desk: remote 'desk': `library` 'nope' does not exist"):
            search_anywhere(engine, query="guide", library="cloud:///desk/nope")
    finally:
        del engine.__dict__["remotes"]
