"""A document's headings by anchor and title, and its sections by line."""

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.links.headings import SectionIndex, flatten, heading_named


def test_a_repeated_heading_is_named_with_a_dash_or_an_underscore_and_its_number():
    nodes = [OutlineNode("process.exitCode", 2, 3, 9), OutlineNode("process.exitCode", 2, 10, 20), OutlineNode("snake_1", 2, 21, 30)]
    assert heading_named(nodes, "processexitcode") is nodes[0]
    assert heading_named(nodes, "processexitcode-1") is nodes[1]
    assert heading_named(nodes, "processexitcode_1") is nodes[1]
    assert heading_named(nodes, "snake_1") is nodes[2]
    assert heading_named(nodes, "processexitcode_2") is None


def innermost_by_definition(nodes, line):
    best = None
    for node in flatten(nodes):
        if node.start_line <= line <= node.end_line and (best is None or node.start_line >= best.start_line):
            best = node
    return best


def test_the_section_index_finds_what_a_walk_of_the_whole_outline_finds():
    child = OutlineNode("Install", 2, 5, 12, children=[OutlineNode("Linux", 3, 8, 10), OutlineNode("Mac", 3, 11, 12)])
    same_start = OutlineNode("Same start", 2, 13, 14)
    outline = [
        OutlineNode("Guide", 1, 1, 12, children=[child]),
        OutlineNode("Use", 1, 13, 20, children=[same_start]),  # a child starting on its parent's line wins
        OutlineNode("Odd bookmark", 1, 18, 30),  # overlaps the one before, as PDF bookmarks may
    ]
    index = SectionIndex(outline)
    for line in range(0, 33):
        assert index.at(line) is innermost_by_definition(outline, line), line
    assert index.at(13).title == "Same start" and index.at(19).title == "Odd bookmark" and index.at(31) is None


def test_the_section_index_agrees_on_real_pdf_outlines():
    from linkly_ls.core.extract import extract_file
    from linkly_ls.core.extract.base import ExtractLimits
    from support.shared import REPO

    pdfs = sorted((REPO / "fixtures").rglob("*.pdf"))
    outlines = [extract_file(pdf, ExtractLimits()).outline for pdf in pdfs]
    assert any(len(outline) > 3 for outline in outlines)
    for outline in outlines:
        index = SectionIndex(outline)
        last = max((node.end_line for node in outline), default=1)
        for line in range(1, last + 2):
            assert index.at(line) is innermost_by_definition(outline, line)
