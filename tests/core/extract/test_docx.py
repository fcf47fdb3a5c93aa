"""DOCX: body order with tables, heading styles as the outline, titles, broken and oversized files."""

from __future__ import annotations

from dataclasses import replace

import pytest

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import ExtractLimits


def test_heading_levels_from_styles(extracted, check):
    document = extracted("documents/misc/outline template.docx")
    assert [(node.level, node.title) for node in check.flatten(document.outline)] == [
        (1, "First paragraph"),
        (2, "Second paragraph"),
        (3, "Third paragraph"),
    ]
    check.outline_points_at_titles(document)


def test_large_handbook_has_its_300_headings(extracted, check):
    document = extracted("documents/work/Chapter 13 Trustee Handbook.docx")
    nodes = check.flatten(document.outline)
    assert 290 <= len(nodes) <= 301  # 300 heading paragraphs, a few of them empty, and its footnotes
    assert {node.level for node in nodes} == {1, 2, 3}
    top = [node.title for node in document.outline]
    assert top[0] == "CHAPTER 1 – INTRODUCTION"
    assert len(top) == 15 and top[-1] == "Footnotes"
    assert any("same meaning as" in line for line in document.lines[document.outline[-1].start_line - 1 :])
    assert document.title == "Chapter 13 Trustee Handbook"  # no core title; first heading comes late
    check.outline_points_at_titles(document)
    check.well_formed(document)


def test_paragraphs_and_tables_stay_in_body_order(extracted):
    document = extracted("documents/drafts/AutoGen paper draft.docx")
    assert document.title == "AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation"
    lines = document.lines
    intro = lines.index("Here is a random table for .docx parsing test purposes:")
    first_row = lines.index("1 | 2 | 3 | 4 | 5 | 6")
    image = lines.index("Test Image:")
    assert intro < first_row < image
    assert "13 | 14 | 49e168b7-d2ae-407f-a055-2167576f39a1 | 15 | 16 | 17" in lines


def test_title_style_and_core_title(extracted, check):
    document = extracted("documents/work/dpkg cheat sheet.docx")
    assert document.title == "5.4. Manipulating Packages with dpkg"
    nodes = check.flatten(document.outline)
    assert (nodes[0].level, nodes[0].title) == (1, "5.4. Manipulating Packages with dpkg")
    assert "5.4.5.1. Enabling Multi-Arch" in [node.title for node in nodes]


def test_chinese_docx_headings(extracted, check):
    document = extracted("documents/work/Web 服务器配置笔记.docx")
    titles = [node.title for node in check.flatten(document.outline)]
    assert "11.2.1. 安装 Apache" in titles and "11.2.4.1. 需要身份认证" in titles
    check.outline_points_at_titles(document)


def test_truncated_docx_is_a_clear_error(corpus):
    with pytest.raises(ExtractionError, match="not a readable DOCX file"):
        extract_file(corpus / "odd/report-truncated.docx")


def test_unzipped_size_limit_guards_against_zip_bombs(corpus):
    limits = replace(ExtractLimits(), max_unzipped_bytes=50_000)
    with pytest.raises(ExtractionError, match="max_unzipped_mb"):
        extract_file(corpus / "documents/misc/outline template.docx", limits)


def test_paragraph_text_renders_run_contents_as_python_docx_does(corpus):
    from docx import Document
    from docx.oxml import parse_xml
    from docx.oxml.ns import nsdecls, qn
    from docx.text.paragraph import Paragraph

    from linkly_ls.core.extract.docx import paragraph_text

    paragraph = parse_xml(
        f"<w:p {nsdecls('w')}><w:pPr><w:tabs><w:tab w:val='left' w:pos='720'/></w:tabs></w:pPr>"
        "<w:r><w:t>tab</w:t><w:tab/><w:t xml:space='preserve'>ptab </w:t><w:ptab w:relativeTo='margin'"
        " w:alignment='right' w:leader='none'/></w:r>"
        "<w:hyperlink><w:r><w:t>link</w:t><w:br/><w:t>wrapped</w:t></w:r></w:hyperlink>"
        "<w:r><w:br w:type='page'/><w:t>after a page break</w:t><w:br w:type='column'/><w:cr/>"
        "<w:t>non</w:t><w:noBreakHyphen/><w:t>breaking</w:t><w:t/><w:delText>deleted</w:delText></w:r>"
        "<w:ins><w:r><w:t>inserted</w:t></w:r></w:ins></w:p>"
    )
    expected = Paragraph(paragraph, None).text
    assert expected == "tab\tptab \tlink\nwrappedafter a page break\nnon-breaking"
    assert paragraph_text(paragraph) == expected
    handbook = Document(str(corpus / "documents/work/Chapter 13 Trustee Handbook.docx"))
    for element in handbook.element.body.iter(qn("w:p")):
        assert paragraph_text(element) == Paragraph(element, handbook).text


def test_hyperlinks_keep_their_url_text_and_paragraph_line(extracted):
    document = extracted("documents/work/dpkg cheat sheet.docx")
    first = document.links[0]
    assert (first.target, first.text, first.kind) == ("http://debian-handbook.info/get/", "Download the ebook", "docx")
    assert document.lines[first.line - 1] == "Download the ebook"


def test_footnotes_are_read_under_a_heading_of_their_own_at_the_end(tmp_path):
    import zipfile
    from pathlib import Path

    source = Path(__file__).resolve().parents[3] / "fixtures" / "documents" / "dpkg cheat sheet.docx"
    target = tmp_path / "noted.docx"
    note = (
        '<w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">Continued has the same meaning as </w:t></w:r>'
        "<w:r><w:t>adjourned here.</w:t></w:r></w:p></w:footnote></w:footnotes>"
    )
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        for item in original.infolist():
            data = original.read(item.filename)
            if item.filename == "word/footnotes.xml":
                data = data.replace(b"</w:footnotes>", note.encode())
            copy.writestr(item, data)
    document = extract_file(target)
    assert document.lines[-1] == "[1] Continued has the same meaning as adjourned here."
    assert document.outline[-1].title == "Footnotes"
    plain = extract_file(source)
    assert "Footnotes" not in {node.title for node in plain.outline}, "separators alone are no notes"
