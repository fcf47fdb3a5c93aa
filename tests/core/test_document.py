from linkly_ls.core.document import ExtractedDocument, Heading, LineBuilder, build_outline
from linkly_ls.core.extract.base import ExtractLimits, cap_lines


def test_outline_nests_headings_and_assigns_ids_and_ranges():
    headings = [Heading(1, "Intro", 1), Heading(2, "Why", 3), Heading(2, "How", 6), Heading(1, "End", 9)]
    outline = build_outline(headings, total_lines=12)
    assert [node.id for node in outline] == ["1", "2"]
    intro, end = outline
    assert (intro.start_line, intro.end_line) == (1, 8)
    assert [(c.id, c.title, c.start_line, c.end_line) for c in intro.children] == [
        ("1.1", "Why", 3, 5),
        ("1.2", "How", 6, 8),
    ]
    assert (end.start_line, end.end_line) == (9, 12)


def test_outline_clamps_backward_and_out_of_range_headings():
    outline = build_outline([Heading(1, "A", 5), Heading(1, "B", 2), Heading(1, "C", 99)], total_lines=10)
    assert [n.start_line for n in outline] == [5, 5, 10]
    for node in outline:
        assert 1 <= node.start_line <= node.end_line <= 10


def test_line_builder_folds_blank_runs_and_records_pages():
    builder = LineBuilder()
    builder.page("--- page 1 ---")
    builder.heading("Title", 1)
    builder.text("one\n\n\n\ntwo  \r\nthree")
    builder.page("--- page 2 ---")
    builder.text("four\n\n")
    lines, outline = builder.finish()
    assert lines == ["--- page 1 ---", "Title", "one", "", "two", "three", "", "--- page 2 ---", "four"]
    assert builder.page_starts == [1, 8]
    assert outline[0].start_line == 2 and outline[0].end_line == 9


def test_cap_lines_wraps_long_lines_and_moves_outline_with_them():
    builder = LineBuilder()
    builder.heading("A", 1)
    builder.text("word " * 3000)
    builder.heading("B", 1)
    builder.text("tail")
    lines, outline = builder.finish()
    document = ExtractedDocument(lines=lines, title="t", doc_type="txt", outline=outline)
    cap_lines(document, ExtractLimits(max_line_chars=1000))
    assert all(len(line) <= 1000 for line in document.lines)
    second = document.outline[1]
    assert document.lines[second.start_line - 1] == "B"
    assert document.outline[0].end_line == second.start_line - 1
    assert any("wrapped" in warning for warning in document.warnings)


def test_a_subsection_that_starts_past_its_sections_end_is_kept_inside_it():
    from linkly_ls.core.document import Heading, build_outline

    outline = build_outline(
        [Heading(1, "Seventh", 111), Heading(2, "Eighth", 120), Heading(2, "Ninth", 145), Heading(1, "Tenth", 145)], 200
    )
    seventh, tenth = outline
    assert (seventh.start_line, seventh.end_line) == (111, 144) and (tenth.start_line, tenth.end_line) == (145, 200)
    for child in seventh.children:
        assert seventh.start_line <= child.start_line <= child.end_line <= seventh.end_line, child
