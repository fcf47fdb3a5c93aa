"""Answers over `max_response_chars` keep whole lines, matches and documents, and say how to go on."""

from __future__ import annotations

import json

import pytest

from linkly_ls.core.config import Config, LibraryConfig
from linkly_ls.core.engine import Engine
from linkly_ls.core.tools import call_tool
from linkly_ls.mcp.server import success_result

LIMIT = 4000


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    folder = tmp_path_factory.mktemp("fitting")
    root = folder / "docs"
    root.mkdir()
    (root / "long.txt").write_text(
        "Long\n\n" + "\n".join(f"line {n} " + "word " * 18 for n in range(3, 303)) + "\n", encoding="utf-8"
    )
    (root / "wide.txt").write_text("Wide\n\n" + "w" * 9000 + "\nafter\n", encoding="utf-8")
    for name in ("a", "b"):
        headings = "\n\n".join(f"## Section {name} {n} " + "x" * 40 + "\n\ntext" for n in range(30))
        (root / f"{name}.md").write_text(f"# {name}\n\n{headings}\n", encoding="utf-8")
    deep = "\n\n".join(
        f"# Part {part}\n\n" + "\n\n".join(f"## Chapter {part}.{n} " + "y" * 40 + "\n\ntext" for n in range(20))
        for part in range(6)
    )
    (root / "deep.md").write_text(deep + "\n", encoding="utf-8")
    engine = Engine(Config(data_dir=folder / "data", libraries=[LibraryConfig(name="docs", paths=[root])]))
    engine.index()
    names = ("long.txt", "wide.txt", "a.md", "b.md", "deep.md")
    engine.ids = {name: engine.catalog.by_path(str(root / name)).doc_id for name in names}
    return engine


def _answer(engine: Engine, tool: str, arguments: dict, output_format: str, limit: int = LIMIT) -> tuple[str, dict]:
    result = success_result(call_tool(engine, tool, arguments), output_format, limit)
    text = result.content[0].text
    assert len(text) <= limit
    return text, result.structured_content


def test_reading_page_after_page_by_next_offset_gives_every_line_once(engine):
    doc_id, offset, seen = engine.ids["long.txt"], 1, []
    while offset is not None:
        text, payload = _answer(engine, "read", {"doc_id": doc_id, "offset": offset, "limit": 500}, "json")
        assert json.loads(text)["lines"] == payload["lines"]
        seen += [entry["line"] for entry in payload["lines"]]
        offset = payload["next_offset"]
        if offset is not None:
            assert payload["truncated"] and f"continue with offset={offset}" in payload["note"]
    total = engine.catalog.by_path(engine.catalog.get(doc_id).path).total_lines
    assert seen == list(range(1, total + 1)) and len(set(seen)) == total > 100


def test_a_shortened_markdown_answer_says_where_to_go_on(engine):
    text, payload = _answer(engine, "read", {"doc_id": engine.ids["long.txt"], "limit": 500}, "markdown")
    shown = [int(line.split("\t")[0]) for line in text.splitlines() if "\t" in line]
    assert shown == list(range(1, shown[-1] + 1))
    assert f"continue with offset={shown[-1] + 1}" in text and "max_response_chars" in text
    assert payload["next_offset"] == shown[-1] + 1


def test_grep_keeps_whole_matches_and_its_next_offset(engine):
    arguments = {"doc_id": engine.ids["long.txt"], "pattern": "word", "limit": 100, "context": 2}
    _, payload = _answer(engine, "grep", arguments, "json")
    shown = len(payload["matches"])
    assert 0 < shown < 100 and payload["next_offset"] == shown and payload["total_matches"] == 300


def test_a_markdown_answer_whose_structured_copy_is_too_long_keeps_whole_matches_there(engine):
    """grep's text shows overlapping context once, its JSON each match's own: the text fits, the JSON not."""
    arguments = {"doc_id": engine.ids["long.txt"], "pattern": r"line \d*0 ", "limit": 30, "context": 10}
    text, payload = _answer(engine, "grep", arguments, "markdown", limit=40_000)
    assert text.count("line 290 ") and "shortened" not in text
    shown = len(payload["matches"])
    assert payload["truncated"] and 0 < shown < 30 and payload["next_offset"] == shown
    assert payload["doc_id"] == engine.ids["long.txt"] and payload["total_matches"] == 30
    assert f"continue with offset={shown}" in payload["note"] and len(json.dumps(payload)) <= 40_000


def test_outline_keeps_whole_documents_and_names_the_others(engine):
    arguments = {"doc_ids": [engine.ids["a.md"], engine.ids["b.md"]]}
    text, payload = _answer(engine, "outline", arguments, "markdown")
    assert [document["doc_id"] for document in payload["documents"]] == [engine.ids["a.md"]]
    assert f'doc_ids ["{engine.ids["b.md"]}"]' in text


def test_a_line_longer_than_the_limit_is_cut_but_keeps_where_to_go_on(engine):
    wide = {"doc_id": engine.ids["wide.txt"], "offset": 3, "limit": 5}
    assert len(call_tool(engine, "read", wide).lines[0][1]) > 3000  # long lines are wrapped at several thousand
    text, payload = _answer(engine, "read", wide, "json", limit=2000)
    assert json.loads(text)["partial_text"].startswith("{")
    assert payload["truncated"] and payload["doc_id"] == engine.ids["wide.txt"] and payload["next_offset"] == 4


@pytest.mark.parametrize("output_format", ["json", "markdown"])
def test_one_outline_over_the_limit_alone_shows_its_top_levels_whole_and_says_how_to_open_them(engine, output_format):
    # the whole tree (6 parts of 20 chapters) is over the limit: the parts show, each with its count
    text, payload = _answer(engine, "outline", {"doc_ids": [engine.ids["deep.md"]]}, output_format)
    parts = payload["documents"][0]["nodes"]
    assert [node["title"] for node in parts] == [f"Part {part}" for part in range(6)]
    assert all(node["children"] == [] and node["collapsed"] == 20 for node in parts)
    assert payload["truncated"] and "`expand`" in payload["note"] and "`expand`" in text
    if output_format == "json":
        assert json.loads(text)["documents"][0]["nodes"] == parts
    whole = call_tool(engine, "outline", {"doc_ids": [engine.ids["deep.md"]], "expand": [parts[0]["id"]]})
    text, payload = _answer(engine, "outline", {"doc_ids": [engine.ids["deep.md"]], "expand": [parts[0]["id"]]}, "json", 8000)
    assert len(payload["documents"][0]["nodes"][0]["children"]) == 20 == len(whole.documents[0].nodes[0]["children"])
