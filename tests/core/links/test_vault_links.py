"""Links as an Obsidian vault writes them: block references, attachments, headings in Markdown links."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from linkly_ls.core.links.resolver import LinkResolver

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.fixture
def vault(tmp_path, engine_for):
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "attachments").mkdir()
    (root / "Projects" / "Project Alpha.md").write_text(
        "# Project Alpha\n\nThe key risk is reconciliation drift between ledgers. ^abc123\n\n"
        "- first item\n- second item ^list-item-2\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n^table-1\n\n"
        "## 🚀 Launch plan\n\nsoon\n\n## Parent\n\n### Child\n\ndeep\n",
        encoding="utf-8",
    )
    shutil.copy(FIXTURES / "scans" / "ocr-sample.jpg", root / "attachments" / "diagram.jpg")
    (root / "diagram.md").write_text("# Diagram notes\n\nabout the diagram\n", encoding="utf-8")
    (root / "Index.md").write_text(
        "# Index\n\n"
        "[[Project Alpha#^abc123]] [[Project Alpha#^list-item-2|item]] ![[Project Alpha#^table-1]] "
        "[[Project Alpha#^nosuchblock]]\n\n"
        "![[diagram.jpg]] ![[diagram.jpg|300]] [[diagram]]\n\n"
        "[x](Projects/Project%20Alpha.md#🚀%20Launch%20plan) [[Project Alpha#Parent#Child]]\n",
        encoding="utf-8",
    )
    engine = engine_for(root)
    engine.index()
    return engine, root


def resolved(engine, path: Path) -> dict[str, object]:
    record = engine.catalog.by_path(str(path))
    return {link.target: link for link in LinkResolver(engine.catalog).links_of(record)}


def test_block_references_lead_to_the_line_carrying_the_block_id(vault):
    engine, root = vault
    links = resolved(engine, root / "Index.md")
    lines = engine.catalog.lines(engine.catalog.by_path(str(root / "Projects" / "Project Alpha.md")).doc_id)
    paragraph = links["Project Alpha#^abc123"]
    assert paragraph.status == "ok" and lines[paragraph.target_line - 1].endswith("^abc123")
    assert lines[links["Project Alpha#^list-item-2"].target_line - 1] == "- second item ^list-item-2"
    assert lines[links["Project Alpha#^table-1"].target_line - 1] == "| 1 | 2 |"  # the block above its own line
    missing = links["Project Alpha#^nosuchblock"]
    assert missing.status == "missing_block" and missing.broken and "no block #^nosuchblock" in missing.problem()


def test_an_attachment_named_with_its_suffix_is_that_file_and_a_bare_name_the_note(vault):
    engine, root = vault
    links = resolved(engine, root / "Index.md")
    assert links["diagram.jpg"].status == "ok" and links["diagram.jpg"].path == str(root / "attachments" / "diagram.jpg")
    assert links["diagram"].status == "ok" and links["diagram"].path == str(root / "diagram.md")


def test_a_markdown_link_to_a_heading_by_its_title_and_a_heading_path_resolve(vault):
    engine, root = vault
    links = resolved(engine, root / "Index.md")
    launch = links["Projects/Project%20Alpha.md#🚀%20Launch%20plan"]
    assert (launch.status, launch.heading) == ("ok", "🚀 Launch plan")
    child = links["Project Alpha#Parent#Child"]
    assert (child.status, child.heading) == ("ok", "Child")


def test_properties_link_and_name_a_note_and_its_tags_and_aliases_are_searched(tmp_path, engine_for):
    from linkly_ls.core.tools import call_tool

    root = tmp_path / "props"
    root.mkdir()
    (root / "Bob Smith.md").write_text(
        '---\naliases: [Bob, "Robert Smith"]\ntags:\n  - people\n  - work/wombatteam\nup: "[[Vault Index]]"\n---\n'
        "# Bob Smith\n\nworks on ledgers\n",
        encoding="utf-8",
    )
    (root / "Vault Index.md").write_text("# Vault Index\n\nthe hub\n", encoding="utf-8")
    (root / "journal.md").write_text("# Journal\n\nDiscussed the budget with Robert Smith today.\n", encoding="utf-8")
    engine = engine_for(root)
    engine.index()
    bob = engine.catalog.by_path(str(root / "Bob Smith.md"))
    index = engine.catalog.by_path(str(root / "Vault Index.md"))
    [up] = LinkResolver(engine.catalog).links_of(bob)
    assert (up.status, up.doc_id, up.line) == ("ok", index.doc_id, 6)
    assert [link.source_id for link in LinkResolver(engine.catalog).backlinks(index)] == [bob.doc_id]
    assert call_tool(engine, "search", {"query": "wombatteam"}).results[0].doc_id == bob.doc_id
    mentions = call_tool(engine, "links", {"doc_id": bob.doc_id, "mentions": True}).to_json()
    assert "robert smith" in [name.casefold() for name in mentions["mention_names"]]
    assert [mention["title"] for mention in mentions["mentions"]] == ["Journal"]


def test_a_nested_tag_query_finds_the_tagged_note_first(tmp_path, engine_for):
    from linkly_ls.core.tools import call_tool

    root = tmp_path / "tags"
    root.mkdir()
    for number in range(12):
        (root / f"Gardening {number:03}.md").write_text(
            f"# Gardening {number:03}\n\ngardening notes, gardening tips and more gardening\n", encoding="utf-8"
        )
    (root / "Roses.md").write_text("# Pruning\n\n#gardening/roses in spring\n", encoding="utf-8")
    engine = engine_for(root)
    engine.index()
    hits = call_tool(engine, "search", {"query": "#gardening/roses"}).results
    assert [hit.title for hit in hits] == ["Pruning"]
