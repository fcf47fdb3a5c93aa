"""DOCX: body order with tables, heading styles as the outline, titles, broken and oversized files."""

from __future__ import annotations

import re
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

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
    assert len(top) == 16 and top[-2:] == ["Footnotes", "Headers and footers"]
    assert any("same meaning as" in line for line in document.lines[document.outline[-2].start_line - 1 :])
    assert document.lines[document.outline[-1].start_line :] == [
        "Handbook for Chapter 13 Standing Trustee", "Effective October 1, 2012", "Handbook for Chapter 13 Standing Trustees",
    ]
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
        "<w:t>non</w:t><w:noBreakHyphen/><w:t>breaking</w:t><w:t/><w:delText>deleted</w:delText></w:r></w:p>"
    )
    expected = Paragraph(paragraph, None).text
    assert expected == "tab\tptab \tlink\nwrappedafter a page break\nnon-breaking"
    assert paragraph_text(paragraph) == expected
    handbook = Document(str(corpus / "documents/work/Chapter 13 Trustee Handbook.docx"))
    for element in handbook.element.body.iter(qn("w:p")):  # no tracked changes, fields or notes in these
        if element.find(".//" + qn("w:footnoteReference")) is None:
            assert paragraph_text(element) == Paragraph(element, handbook).text


SHEET = Path(__file__).resolve().parents[3] / "fixtures" / "documents" / "dpkg cheat sheet.docx"


def rewritten_docx(target: Path, edits: dict[str, Callable[[bytes], bytes | None]], source: Path = SHEET) -> Path:
    """A copy of `source` whose members named in `edits` are rewritten (None leaves the member out)."""
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as copy:
        for item in original.infolist():
            data: bytes | None = original.read(item.filename)
            if item.filename in edits:
                data = edits[item.filename](data)
            if data is not None:
                copy.writestr(item, data)
    return target


def made_docx(
    tmp_path, body: str, footnotes: str = "", name: str = "made.docx", core_title: bool = True, numbering: str = ""
):
    """The fixture cheat sheet with `body` as its whole body (`footnotes` added to its notes, `numbering` as
    its lists' definitions)."""
    namespaces = (
        ' xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
        ' xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
    )

    def document(data: bytes) -> bytes:
        text = data.decode().replace("<w:document ", "<w:document" + namespaces + " ", 1)
        return re.sub(r"<w:body>.*?(<w:sectPr|</w:body>)", lambda m: "<w:body>" + body + m.group(1), text, flags=re.S).encode()

    edits: dict[str, Callable[[bytes], bytes | None]] = {
        "word/document.xml": document,
        "word/footnotes.xml": lambda data: data.replace(b"</w:footnotes>", footnotes.encode() + b"</w:footnotes>"),
    }
    if numbering:
        edits["word/numbering.xml"] = lambda _: f'<w:numbering xmlns:w="{W}">{numbering}</w:numbering>'.encode()
    if not core_title:
        edits["docProps/core.xml"] = lambda _: None
        edits["_rels/.rels"] = lambda data: re.sub(rb"<Relationship [^>]*docProps/core.xml[^>]*/>", b"", data)
    return rewritten_docx(tmp_path / name, edits)


W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def _p(runs: str) -> str:
    return f"<w:p>{runs}</w:p>"


def _r(text: str, properties: str = "") -> str:
    return f'<w:r>{properties}<w:t xml:space="preserve">{text}</w:t></w:r>'


def test_a_tracked_draft_reads_as_word_shows_it(tmp_path):
    body = (
        _p(_r("Tracked: kept ") + '<w:del w:id="1" w:author="a"><w:r><w:delText>gone </w:delText></w:r></w:del>'
           + f'<w:ins w:id="2" w:author="a">{_r("inserted")}</w:ins>')
        + _p(_r("Moved: ") + f'<w:moveFrom w:id="3" w:author="a">{_r("moved away")}</w:moveFrom>'
             + f'<w:moveTo w:id="4" w:author="a">{_r("moved here")}</w:moveTo>')
        + _p(_r("Client: ") + f"<w:sdt><w:sdtPr/><w:sdtContent>{_r('ACME Corporation')}</w:sdtContent></w:sdt>")
        + _p(_r("See ") + '<w:fldSimple w:instr=" REF x "><w:r><w:t>Figure 7</w:t></w:r></w:fldSimple>')
        + _p(_r("Meet in ") + f'<w:smartTag w:element="City">{_r("Seattle")}</w:smartTag>')
        + _p(_r("Shown ") + _r("hidden", "<w:rPr><w:vanish/></w:rPr>") + _r("unhidden", '<w:rPr><w:vanish w:val="0"/></w:rPr>'))
    )
    lines = [line for line in extract_file(made_docx(tmp_path, body)).lines if line]
    assert lines == [
        "Tracked: kept inserted", "Moved: moved here", "Client: ACME Corporation", "See Figure 7", "Meet in Seattle",
        "Shown unhidden",
    ]


def test_a_text_box_is_read_once_after_the_paragraph_anchoring_it(tmp_path):
    box = f"<w:txbxContent>{_p(_r('Text box words'))}</w:txbxContent>"
    body = _p(
        _r("Anchor ")
        + '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor><wp:docPr id="1" name="TB"/>'
        + '<a:graphic><a:graphicData uri="x"><wps:wsp><wps:txbx>' + box + "</wps:txbx></wps:wsp></a:graphicData>"
        + "</a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox>" + box
        + "</v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>"
    ) + _p(_r("Older box: ") + f"<w:r><w:pict><v:shape><v:textbox>{box}</v:textbox></v:shape></w:pict></w:r>")
    lines = [line for line in extract_file(made_docx(tmp_path, body)).lines if line]
    assert lines == ["Anchor", "Text box words", "Older box:", "Text box words"]


def test_footnotes_are_numbered_as_word_shows_them_and_marked_where_the_text_cites_them(tmp_path):
    body = _p(_r("First claim") + '<w:r><w:footnoteReference w:id="7"/></w:r>' + _r(" and more.")) + _p(
        _r("Second claim") + '<w:r><w:footnoteReference w:id="3"/></w:r>'
    )
    notes = "".join(
        f'<w:footnote w:id="{note_id}"><w:p><w:r><w:footnoteRef/></w:r>{_r(text)}</w:p></w:footnote>'
        for note_id, text in (("3", "Note of the second."), ("7", "Note of the first."))
    )
    lines = [line for line in extract_file(made_docx(tmp_path, body, notes)).lines if line]
    assert lines == ["First claim[1] and more.", "Second claim[2]", "Footnotes", "[1] Note of the first.",
                     "[2] Note of the second."]


def test_a_link_in_a_table_cell_is_kept_on_its_row(tmp_path):
    cell = '<w:tc><w:p><w:hyperlink w:anchor="target"><w:r><w:t>see target</w:t></w:r></w:hyperlink></w:p></w:tc>'
    body = (
        _p(_r("Before"))
        + f"<w:tbl><w:tr><w:tc>{_p(_r('Name'))}</w:tc>{cell}</w:tr></w:tbl>"
        + '<w:p><w:bookmarkStart w:id="1" w:name="target"/>' + _r("The target") + "</w:p>"
    )
    document = extract_file(made_docx(tmp_path, body))
    [link] = document.links
    assert document.lines[link.line - 1] == "Name | see target"
    assert (link.target, link.text, document.lines[link.target_line - 1]) == ("#target", "see target", "The target")


def test_python_docx_default_title_names_no_document(tmp_path):
    document = extract_file(made_docx(tmp_path, _p(_r("Plain words")), name="meeting notes.docx", core_title=False))
    assert document.title == "meeting notes"


def test_a_password_protected_document_says_so(tmp_path):
    from linkly_ls.core.extract.zipguard import COMPOUND_FILE_SIGNATURE, ENCRYPTED_PACKAGE_NAME

    encrypted = tmp_path / "salaries.docx"
    encrypted.write_bytes(COMPOUND_FILE_SIGNATURE + bytes(1000) + ENCRYPTED_PACKAGE_NAME + bytes(1000))
    with pytest.raises(ExtractionError, match="encrypted .saved with a password"):
        extract_file(encrypted)
    legacy = tmp_path / "old.docx"
    legacy.write_bytes(COMPOUND_FILE_SIGNATURE + bytes(3000))
    with pytest.raises(ExtractionError, match="Office 97-2003"):
        extract_file(legacy)


def test_damaged_xml_names_its_part(tmp_path):
    broken = rewritten_docx(
        tmp_path / "broken.docx", {"word/document.xml": lambda data: data.replace(b"<w:body>", b"<w:body><w:p><<")}
    )
    with pytest.raises(ExtractionError, match="its part 'word/document.xml' is damaged XML"):
        extract_file(broken)


def test_hyperlinks_keep_their_url_text_and_paragraph_line(extracted):
    document = extracted("documents/work/dpkg cheat sheet.docx")
    first = document.links[0]
    assert (first.target, first.text, first.kind) == ("http://debian-handbook.info/get/", "Download the ebook", "docx")
    assert document.lines[first.line - 1] == "Download the ebook"


def test_footnotes_are_read_under_a_heading_of_their_own_at_the_end(tmp_path):
    note = (
        '<w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">Continued has the same meaning as </w:t></w:r>'
        "<w:r><w:t>adjourned here.</w:t></w:r></w:p></w:footnote></w:footnotes>"
    )
    target = rewritten_docx(
        tmp_path / "noted.docx", {"word/footnotes.xml": lambda data: data.replace(b"</w:footnotes>", note.encode())}
    )
    document = extract_file(target)
    assert document.lines[-1] == "[1] Continued has the same meaning as adjourned here."
    assert document.outline[-1].title == "Footnotes"
    plain = extract_file(SHEET)
    assert "Footnotes" not in {node.title for node in plain.outline}, "separators alone are no notes"


def _list_level(level: int, number_format: str, text: str, start: int = 1) -> str:
    return (f'<w:lvl w:ilvl="{level}"><w:start w:val="{start}"/><w:numFmt w:val="{number_format}"/>'
            f'<w:lvlText w:val="{text}"/></w:lvl>')


def _item(num_id: int, level: int, text: str, style: str = "") -> str:
    styled = f'<w:pStyle w:val="{style}"/>' if style else ""
    return (f'<w:p><w:pPr>{styled}<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{num_id}"/></w:numPr></w:pPr>'
            f"{_r(text)}</w:p>")


def test_list_paragraphs_show_the_numbers_word_shows(tmp_path):
    numbering = (
        '<w:abstractNum w:abstractNumId="0">' + _list_level(0, "decimal", "%1.") + _list_level(1, "lowerLetter", "%1.%2)")
        + "</w:abstractNum>"
        + '<w:abstractNum w:abstractNumId="1">' + _list_level(0, "bullet", "\u2022") + "</w:abstractNum>"
        + '<w:abstractNum w:abstractNumId="2">' + _list_level(0, "upperRoman", "%1.", start=4) + "</w:abstractNum>"
        + '<w:num w:numId="1"><w:abstractNumId w:val="0"/></w:num>'
        + '<w:num w:numId="2"><w:abstractNumId w:val="1"/></w:num>'
        + '<w:num w:numId="3"><w:abstractNumId w:val="2"/></w:num>'
        + '<w:num w:numId="4"><w:abstractNumId w:val="0"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="7"/>'
        + "</w:lvlOverride></w:num>"
    )
    body = (
        _item(1, 0, "first") + _item(1, 1, "first's part") + _item(1, 1, "second part") + _item(1, 0, "second")
        + _item(1, 1, "restarted part") + _item(2, 0, "a bullet") + _item(3, 0, "roman from four")
        + _item(4, 0, "from seven") + _item(9, 0, "a list numbering.xml lacks") + _p(_r("plain"))
    )
    lines = [line for line in extract_file(made_docx(tmp_path, body, numbering=numbering)).lines if line]
    assert lines == [
        "1. first", "1.a) first's part", "1.b) second part", "2. second", "2.a) restarted part", "- a bullet",
        "IV. roman from four", "7. from seven", "a list numbering.xml lacks", "plain",
    ]


def test_letters_past_z_repeat_as_word_writes_them():
    from linkly_ls.core.extract.docx_numbering import ListNumbers

    numbers = ListNumbers(
        (f'<w:numbering xmlns:w="{W}"><w:abstractNum w:abstractNumId="0">' + _list_level(0, "upperLetter", "(%1)")
         + '</w:abstractNum><w:num w:numId="5"><w:abstractNumId w:val="0"/></w:num></w:numbering>').encode()
    )
    labels = [numbers.label("5", 0) for _ in range(28)]
    assert labels[:2] == ["(A)", "(B)"] and labels[25:] == ["(Z)", "(AA)", "(BB)"]
    assert ListNumbers(b"<broken").label("5", 0) is None


def test_rows_and_cells_in_content_controls_and_a_text_box_in_a_cell_are_read(tmp_path):
    """A proposal template's repeating-section row, a fee in a cell-level content control and a call-out in
    a cell were left out without a word."""
    def cell(text: str) -> str:
        return f"<w:tc>{_p(_r(text))}</w:tc>"

    box = f"<w:txbxContent>{_p(_r('Callout: rebate clause expires 2026'))}</w:txbxContent>"
    boxed = (
        "<w:tc>" + _p(_r("With a box ") + '<w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><wp:anchor>'
                     + '<wp:docPr id="1" name="TB"/><a:graphic><a:graphicData uri="x"><wps:wsp><wps:txbx>' + box
                     + "</wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice>"
                     + f"<mc:Fallback><w:pict><v:shape><v:textbox>{box}</v:textbox></v:shape></w:pict></mc:Fallback>"
                     + "</mc:AlternateContent></w:r>") + "</w:tc>"
    )
    body = (
        "<w:tbl>"
        f"<w:tr>{cell('Workstream')}{cell('Fee')}</w:tr>"
        f"<w:sdt><w:sdtPr/><w:sdtContent><w:tr>{cell('Procurement diagnostic')}{cell('2,750,000')}</w:tr></w:sdtContent></w:sdt>"
        f"<w:tr>{cell('Network design')}<w:sdt><w:sdtPr/><w:sdtContent>{cell('3,125,000')}</w:sdtContent></w:sdt></w:tr>"
        f"<w:tr>{boxed}{cell('n/a')}</w:tr>"
        "</w:tbl>"
    )
    lines = [line for line in extract_file(made_docx(tmp_path, body)).lines if line]
    assert lines == [
        "Workstream | Fee", "Procurement diagnostic | 2,750,000", "Network design | 3,125,000",
        "With a box Callout: rebate clause expires 2026 | n/a",
    ]


def test_a_style_based_on_a_heading_style_is_a_heading_and_body_text_level_ends_one(tmp_path):
    """Google Docs writes `heading 1` without an outline level: a house style based on it was body text;
    a paragraph set to outline level 9 (body text) in a heading style stayed a heading."""
    styles = (
        '<w:style w:type="paragraph" w:styleId="GDocsH1"><w:name w:val="heading 1"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="ClientChapter"><w:name w:val="Client Chapter"/><w:basedOn w:val="GDocsH1"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="GDocsH2"><w:name w:val="heading 2"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="ClientSection"><w:name w:val="Client Section"/><w:basedOn w:val="GDocsH2"/></w:style>'
    )

    def styled(style: str, text: str, properties: str = "") -> str:
        return f'<w:p><w:pPr><w:pStyle w:val="{style}"/>{properties}</w:pPr>{_r(text)}</w:p>'

    body = (
        styled("ClientChapter", "Scope of the review") + _p(_r("Words."))
        + styled("ClientSection", "Tariff baskets") + _p(_r("More words."))
        + styled("GDocsH1", "A boxed note set to body text", '<w:outlineLvl w:val="9"/>') + _p(_r("Its words."))
    )
    path = made_docx(tmp_path, body)
    path = rewritten_docx(tmp_path / "styled.docx", {"word/styles.xml": lambda data: data.replace(b"</w:styles>", styles.encode() + b"</w:styles>")}, path)
    outline = extract_file(path).outline
    assert [(node.level, node.title, [(child.level, child.title) for child in node.children]) for node in outline] == [
        (1, "Scope of the review", [(2, "Tariff baskets")]),
    ]


@pytest.mark.parametrize(
    ("suffix", "content_type"),
    [
        (".docm", "application/vnd.ms-word.document.macroEnabled.main+xml"),
        (".dotx", "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml"),
        (".dotm", "application/vnd.ms-word.template.macroEnabledTemplate.main+xml"),
    ],
)
def test_a_document_with_macros_or_a_template_is_read_as_a_docx(tmp_path, suffix, content_type):
    """python-docx refused them ("not a Word file"), and linkly counted them with Thumbs.db as unsupported."""
    main = b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    saved = rewritten_docx(tmp_path / f"report{suffix}", {"[Content_Types].xml": lambda data: data.replace(main, content_type.encode())})
    assert content_type.encode() in zipfile.ZipFile(saved).read("[Content_Types].xml")
    assert extract_file(saved).lines == extract_file(SHEET).lines


def test_headers_footers_and_comments_are_read_at_the_end(tmp_path):
    """An engagement code in the footer and a reviewer's comment could not be found."""
    comment = (
        f'<w:comments xmlns:w="{W}"><w:comment w:id="0" w:author="Lars Quist">'
        f'{_p(_r("Check whether the break-even survives the rent indexation."))}</w:comment></w:comments>'
    )
    footer = f'<w:ftr xmlns:w="{W}">{_p(_r("Engagement NWT-2025-014 · Page 3 of 12"))}{_p(_r("Client 5678"))}{_p(_r("7"))}</w:ftr>'
    relationship = (
        '<Relationship Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footer" '
        'Id="rIdFooter9" Target="footer9.xml" />'
    )
    override = (
        '<Override PartName="/word/footer9.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.footer+xml"/>'
    )
    path = rewritten_docx(tmp_path / "reviewed.docx", {
        "word/comments.xml": lambda _: comment.encode(),
        "word/_rels/document.xml.rels": lambda data: data.replace(b"</Relationships>", relationship.encode() + b"</Relationships>"),
        "[Content_Types].xml": lambda data: data.replace(b"</Types>", override.encode() + b"</Types>"),
    })
    with zipfile.ZipFile(path, "a") as package:
        package.writestr("word/footer9.xml", footer)
    document = extract_file(path)
    titles = [node.title for node in document.outline]
    assert titles[-2:] == ["Headers and footers", "Comments"]
    assert document.lines[-5:] == [
        "Engagement NWT-2025-014", "Client 5678", "", "Comments",
        "[comment, Lars Quist] Check whether the break-even survives the rent indexation.",
    ]


def test_the_title_paragraph_as_shown_wins_over_a_templates_leftover_core_title(tmp_path):
    path = rewritten_docx(tmp_path / "proposal.docx", {
        "docProps/core.xml": lambda data: re.sub(rb"<dc:title>.*?</dc:title>", b"<dc:title>Proposal template v7 (do not edit)</dc:title>", data),
    })
    assert b"Proposal template v7" in zipfile.ZipFile(path).read("docProps/core.xml")
    assert extract_file(path).title == "5.4. Manipulating Packages with dpkg"


def test_a_vertically_merged_cell_reads_on_every_row_it_spans(tmp_path):
    """`grep Oslo` missed the flagship figures: the merged cell's text stood on its first row only."""
    def cell(text: str, properties: str = "") -> str:
        return f"<w:tc><w:tcPr>{properties}</w:tcPr>{_p(_r(text)) if text else '<w:p/>'}</w:tc>"

    spanning, starting, continuing = '<w:gridSpan w:val="2"/>', '<w:vMerge w:val="restart"/>', "<w:vMerge/>"
    body = (
        "<w:tbl>"
        f"<w:tr>{cell('City')}{cell('Year', spanning)}</w:tr>"
        f"<w:tr>{cell('Oslo', starting)}{cell('1,204.7')}{cell('2,318.9')}</w:tr>"
        f"<w:tr>{cell('', continuing)}{cell('611.0')}{cell('733.2')}</w:tr>"
        f"<w:tr>{cell('Bergen')}{cell('388.1')}{cell('512.4')}</w:tr>"
        "</w:tbl>"
    )
    lines = [line for line in extract_file(made_docx(tmp_path, body)).lines if line]
    assert lines == ["City | Year", "Oslo | 1,204.7 | 2,318.9", "Oslo | 611.0 | 733.2", "Bergen | 388.1 | 512.4"]


def test_a_memo_without_title_or_headings_is_named_by_its_file_not_by_its_comments(tmp_path):
    """A letter's first heading was the "Comments" section added at its end: every such memo was titled so."""
    memo = made_docx(tmp_path, _p(_r("Dear board, the numbers follow.")), name="made.docx", core_title=False)
    comment = f'<w:comments xmlns:w="{W}"><w:comment w:id="0" w:author="A">{_p(_r("Check the numbers."))}</w:comment></w:comments>'
    path = rewritten_docx(tmp_path / "Board memo 2025-03.docx", {"word/comments.xml": lambda _: comment.encode()}, memo)
    document = extract_file(path)
    assert document.title == "Board memo 2025-03" and [node.title for node in document.outline][-1] == "Comments"
