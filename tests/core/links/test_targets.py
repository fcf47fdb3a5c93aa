"""What a raw link target means, read at index time."""

from linkly_ls.core.document import Link
from linkly_ls.core.links.targets import heading_slug, is_external, link_record, wikilink_folder, wikilink_key

SOURCE = "/notes/a/x.md"


def record(target: str, kind: str = "inline", target_line: int | None = None):
    return link_record(Link(line=3, target=target, kind=kind, target_line=target_line), SOURCE)


def test_a_relative_path_is_resolved_against_the_source_folder():
    found = record("../b%20c.md#Part-two")
    assert (found.target_path, found.fragment, found.target_name) == ("/notes/b c.md", "Part-two", None)
    assert record("sub/y.md?plain=1").target_path == "/notes/a/sub/y.md"


def test_a_fragment_alone_and_an_extractor_line_point_into_the_source():
    assert (record("#intro").target_path, record("#intro").fragment) == (SOURCE, "intro")
    inside = record("#page=3", kind="pdf", target_line=40)
    assert (inside.target_path, inside.target_line) == (SOURCE, 40)


def test_urls_and_site_paths_keep_only_their_raw_target():
    for target in ("https://example.com/a.md", "mailto:x@y.z", "//cdn.example.com/x", "/en/guide/"):
        found = record(target)
        assert (found.target_path, found.target_name) == (None, None), target
    assert is_external("https://x") and not is_external("C:\\notes\\a.md") and not is_external("a.md")


def test_wikilinks_keep_a_casefolded_name_key():
    found = record("Folder/My  Note.md#Heading", kind="wiki")
    assert (found.target_name, found.fragment, found.target_path) == ("my note", "Heading", None)
    assert wikilink_key("Plain") == "plain" and wikilink_folder("Folder/My Note#H") == "Folder"
    assert record("#Only heading", kind="wiki").target_path == SOURCE
    assert wikilink_key("Journal/plan.mkd") == "plan" and record("plan.mdown", kind="wiki").target_name == "plan"


def test_heading_slugs_follow_the_renderers():
    assert heading_slug("Install it!") == "install-it"
    assert heading_slug("What Is Ownership?") == "what-is-ownership"
    assert heading_slug("Écrire du code") == "écrire-du-code"
    assert heading_slug("🚀 Launch plan") == "-launch-plan", "as GitHub: the emoji goes, its space stays"
    assert heading_slug("Straße") == "straße", "lower case, not case-folded"
    assert heading_slug("हिन्दी भाषा") == "हिन्दी-भाषा", "the vowel signs stay, as GitHub keeps them"
    assert heading_slug("Cafe\u0301 Notes") == "café-notes", "a heading written decomposed"


def test_a_heading_is_found_by_githubs_anchor_and_by_the_trimmed_case_folded_one():
    from linkly_ls.core.document import OutlineNode
    from linkly_ls.core.links.headings import HeadingIndex, heading_anchors

    nodes = [OutlineNode("🚀 Launch plan", 2, 1, 2), OutlineNode("Straße", 2, 3, 4), OutlineNode("Notes", 2, 5, 6), OutlineNode("Notes", 2, 7, 8)]
    assert [anchor for anchor, _ in heading_anchors(nodes)] == ["-launch-plan", "straße", "notes", "notes-1"]
    index = HeadingIndex(nodes)
    for fragment, line in [("-launch-plan", 1), ("launch-plan", 1), ("straße", 3), ("strasse", 3), ("notes-1", 7), ("notes", 5),
                           ("stra\u00dfe", 3)]:
        assert index.named(fragment).start_line == line, fragment


def test_an_anchor_typed_decomposed_names_a_heading_written_composed_and_back():
    from linkly_ls.core.document import OutlineNode
    from linkly_ls.core.links.headings import HeadingIndex

    assert HeadingIndex([OutlineNode("Café Notes", 2, 1, 2)]).named("cafe\u0301-notes").start_line == 1
    assert HeadingIndex([OutlineNode("Cafe\u0301 Notes", 2, 4, 5)]).named("café-notes").start_line == 4
