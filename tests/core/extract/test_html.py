"""HTML pages: main content only, headings as the outline, tables and pre blocks."""

from __future__ import annotations

import pytest

from linkly_ls.core.extract import extract_file


def test_docbook_page_without_navigation_chrome(extracted, check):
    document = extracted("web/debian-handbook/en-US/sect.backup.html")
    assert document.title == "9.10. Backup"
    assert [(node.level, node.title) for node in check.flatten(document.outline)] == [
        (2, "9.10. Backup"),
        (3, "9.10.1. Backing Up with rsync"),
        (3, "9.10.2. Restoring Machines without Backups"),
    ]
    text = "\n".join(document.lines)
    assert "Download the ebook" not in text and "Prev" not in document.lines
    assert "Making backups is one of the main responsibilities of any administrator" in text
    # inline markup joins into the sentence instead of splitting it
    assert any("such as amanda, bacula, or BackupPC." in line for line in document.lines)


def test_pre_keeps_its_lines_and_indentation(extracted):
    lines = extracted("web/debian-handbook/en-US/sect.backup.html").lines
    start = lines.index("bank:")
    assert lines[start + 1] == "    /backup"
    assert lines[start + 2] == "exclude:"


def test_tables_become_rows_and_the_chapter_toc_is_dropped(extracted):
    document = extracted("web/debian-reference/ch05.en.html")
    assert document.title == "Chapter 5. Network setup"
    rows = [line for line in document.lines if " | " in line]
    assert len(rows) > 50
    assert "packages | popcon | size | type | description" in rows
    assert "isc-dhcp-client | V:218, I:981 | 2857 | config::low-level | DHCP client" in rows
    assert not any(row.startswith(" | ") for row in rows)
    assert document.lines.count("5.1. The basic network infrastructure") == 1


def test_wikipedia_page_reads_the_article_only(extracted, check):
    document = extracted("web/saved/Wikipedia - Microsoft.html")
    assert document.title == "Microsoft"
    nodes = check.flatten(document.outline)
    history = next(node for node in nodes if node.title == "History")
    assert history.level == 2
    assert history.children[0].title == "1972–1985: Founding"
    text = "\n".join(document.lines)
    assert "Founded | April 4, 1975" in text
    assert "Microsoft Corporation is an American multinational corporation" in text
    for chrome in ("[edit]", "Jump to content", "From Wikipedia, the free encyclopedia", "Main menu", "Toggle the table of contents"):
        assert chrome not in text


def test_sphinx_page_uses_main_content_and_h1_title(extracted):
    document = extracted("web/python-3.11-docs/library/pathlib.html")
    assert document.title == "pathlib — Object-oriented filesystem paths"
    text = "\n".join(document.lines)
    assert "¶" not in text
    assert "Previous topic" not in text and "Quick search" not in text
    assert ">>> from pathlib import Path" in document.lines


@pytest.mark.parametrize(
    "relative",
    [
        "web/debian-handbook/en-US/sect.apt-get.html",
        "web/debian-handbook/fr-FR/sect.ldap-directory.html",
        "web/debian-handbook/zh-CN/sect.apt-cache.html",
        "web/debian-reference/ch05.en.html",
        "web/python-3.11-docs/howto/logging.html",
        "web/python-3.11-docs/library/re.html",
        "web/saved/Wikipedia - Microsoft.html",
    ],
)
def test_outline_points_at_heading_lines(extracted, check, relative):
    document = extracted(relative)
    check.outline_points_at_titles(document)
    check.well_formed(document)


def test_non_english_headings(extracted, check):
    french = extracted("web/debian-handbook/fr-FR/sect.ldap-directory.html")
    assert "11.7.3.3. Sécuriser les échanges de données LDAP" in [node.title for node in check.flatten(french.outline)]
    chinese = extracted("web/debian-handbook/zh-CN/sect.dhcp.html")
    assert [node.title for node in check.flatten(chinese.outline)][1] == "10.8.1. 配置"


def test_anchor_links_stand_on_the_line_of_their_text(extracted):
    document = extracted("web/python-3.11-docs/library/re.html")
    to_file = next(link for link in document.links if link.target == "https://github.com/python/cpython/tree/3.11/Lib/re/")
    assert to_file.kind == "html" and "Lib/re/" in document.lines[to_file.line - 1]
    inside = next(link for link in document.links if link.target == "#re-objects")
    assert document.lines[inside.target_line - 1] == "Regular Expression Objects"
    assert "compiled regular expressions" in document.lines[inside.line - 1]


def test_a_footnote_written_as_an_aside_is_kept_and_a_sidebar_is_not(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><body><main><h1>Numbers</h1><p>Since ** binds tighter<a href='#f1'>1</a>.</p>"
        "<aside class='sidebar'>Related pages: elsewhere</aside>"
        "<h2>Footnotes</h2><aside class='footnote brackets' id='f1' role='note'>"
        "<p>Since ** has higher precedence than -, -3**2 is -(3**2).</p></aside>"
        "<aside epub:type='footnote'><p>An EPUB note.</p></aside></main></body></html>",
        encoding="utf-8",
    )
    text = "\n".join(extract_file(page).lines)
    assert "higher precedence than" in text and "An EPUB note." in text
    assert "Related pages" not in text


def test_soft_hyphens_note_marks_and_ruby_readings_leave_the_words_whole(tmp_path):
    """Hyphenated e-books put a soft hyphen at every break a word allows (the words were indexed as their
    pieces); a note's mark made `jardin1` of `jardin`; a ruby's reading was spliced into the sentence."""
    page = tmp_path / "chapter.xhtml"
    page.write_text(
        "<html><head><title>Die Ge&#xAD;schich&#xAD;te des Leucht&#xAD;turms</title></head>"
        "<body><h1>Die Ge&#xAD;schich&#xAD;te</h1><p>Ansgar Thor&#xAD;valdsen.</p><pre>Schiff&#xAD;bruch</pre>"
        "<p>statue de jardin<a href='notes.xhtml#n1' epub:type='noteref'><sup>1</sup></a>. depuis la guerre"
        "<sup><a href='#n2'>2</a></sup>, selon Smith<a href='#na'><sup>a</sup></a>, le 1<sup>er</sup> mai, E=mc<sup>2</sup>.</p>"
        "<p>毎晩<ruby>灯台<rp>(</rp><rt>とうだい</rt><rp>)</rp></ruby>の階段</p></body></html>",
        encoding="utf-8",
    )
    document = extract_file(page)
    assert document.lines == [
        "Die Geschichte", "", "Ansgar Thorvaldsen.", "", "Schiffbruch", "", "statue de jardin 1. depuis la guerre 2, selon Smith a, le 1er mai, E=mc2.", "",
        "毎晩灯台の階段",
    ]
    assert document.title == "Die Geschichte"
    untitled = tmp_path / "untitled.html"
    untitled.write_text("<html><head><title>Leucht&#xAD;turm</title></head><body><p>Text.</p></body></html>", encoding="utf-8")
    assert extract_file(untitled).title == "Leuchtturm"


def test_links_in_table_rows_and_headings_are_kept_without_permalinks(tmp_path):
    page = tmp_path / "contents.html"
    page.write_text(
        '<html><body><h1 id="top">Contents <a class="headerlink" href="#top">¶</a></h1>'
        '<table><tr><td><a href="https://example.org/cell">in a cell</a></td><td><a href="#later">Chapter II</a></td></tr>'
        '<tr><td id="row-two">second row</td></tr></table>'
        '<h2 id="later"><a href="other.html">Chapter II</a></h2><p>text</p></body></html>',
        encoding="utf-8",
    )
    document = extract_file(page)
    found = [(document.lines[link.line - 1], link.target, link.target_line) for link in document.links]
    later = document.lines.index("Chapter II") + 1
    assert found == [
        ("in a cell | Chapter II", "https://example.org/cell", None),
        ("in a cell | Chapter II", "#later", later),
        ("Chapter II", "other.html", None),
    ]


def test_an_epub_contents_table_links_its_chapters(corpus):
    book = extract_file(corpus / "books/epub/Winter Sports in Switzerland - E. F. Benson.epub")
    inside = [link for link in book.links if link.target_line is not None]
    assert len(inside) >= 140  # the CONTENTS and illustrations tables (4 links were kept before: none of them)
    chapter_two = next(link for link in inside if link.text == "Rinks and Skaters")
    assert book.lines[chapter_two.target_line - 1].startswith("CHAPTER II")


def test_a_sites_logo_in_the_first_h1_does_not_title_its_articles(tmp_path):
    """Every article saved from one site was titled by the site's name, its logo's `<h1>`."""
    page = tmp_path / "article.html"
    page.write_text(
        "<html><head><title>Port audit ordered after dredging scandal | Bayport Gazette</title></head><body>"
        "<div class='masthead'><h1 class='site-logo'><a href='/'>Bayport Gazette</a></h1></div>"
        "<h2>Port audit ordered after dredging scandal</h2><p>The article.</p></body></html>",
        encoding="utf-8",
    )
    assert extract_file(page).title == "Port audit ordered after dredging scandal"
    page.write_text(
        "<html><head><title>Microsoft - Wikipedia</title></head><body><h1>Microsoft</h1><p>A company.</p></body></html>",
        encoding="utf-8",
    )
    assert extract_file(page).title == "Microsoft"  # the page's own name leads its title


def test_a_link_holding_its_content_as_a_data_uri_is_no_link(tmp_path):
    page = tmp_path / "saved.html"
    page.write_text("<p><a href='data:application/pdf;base64," + "QUJD" * 1000 + "'>full complaint</a> and "
                    "<a href='https://example.org/x'>x</a></p>", encoding="utf-8")
    assert [link.target for link in extract_file(page).links] == ["https://example.org/x"]
