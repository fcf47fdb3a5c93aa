"""EPUB: spine chapters, the book's table of contents as the outline, broken real-world packages."""

from __future__ import annotations

import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from lxml import etree

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.extract.epub_package import read_from_zip, read_with_ebooklib

BOOKS = {
    # path: (title, outline entries, spine documents)
    "books/epub/Winter Sports in Switzerland - E. F. Benson.epub": ("Winter Sports in Switzerland", 29, 10),
    "books/epub/live-manual.en.epub": ("Live Systems Manual", 190, 47),
    "books/epub/live-manual.fr.epub": ("Manuel Live Systems", 190, 47),
    "books/epub/sample-ebook.epub": ("Test EPUB Document", 2, 3),
    "books/epub/ubuntu-packaging-guide.de.epub": ("Ubuntu Packaging Guide", 115, 17),
}


def ncx_titles(path: Path) -> set[str]:
    """The navLabel texts of the book's NCX table of contents."""
    with zipfile.ZipFile(path) as archive:
        name = next(name for name in archive.namelist() if name.endswith(".ncx"))
        root = etree.fromstring(archive.read(name))
    labels = root.iterfind(".//{*}navPoint/{*}navLabel/{*}text")
    return {" ".join("".join(label.itertext()).split()) for label in labels}


@pytest.mark.parametrize("relative", sorted(BOOKS))
def test_table_of_contents_is_the_outline(extracted, check, corpus, relative):
    title, entries, chapters = BOOKS[relative]
    document = extracted(relative)
    assert document.title == title
    nodes = check.flatten(document.outline)
    assert len(nodes) == entries
    assert {node.title for node in nodes} == ncx_titles(corpus / relative)
    assert len(document.page_starts) == chapters
    for number, start in enumerate(document.page_starts, start=1):
        assert document.lines[start - 1].startswith(f"--- chapter {number}: ")
    check.outline_points_at_titles(document)
    check.well_formed(document)


@pytest.mark.parametrize("language", ["en", "fr"])
def test_live_manual_opens_despite_fragments_in_its_manifest(extracted, check, language):
    relative = f"books/epub/live-manual.{language}.epub"
    document = extracted(relative)
    wanted = {"en": "1.1 For the impatient", "fr": "1.1 Pour les impatients"}[language]
    node = next(node for node in check.flatten(document.outline) if node.title == wanted)
    assert node.level == 4
    assert document.lines[node.start_line - 1] == wanted  # the #o8 fragment resolved to the heading paragraph
    assert document.lines[node.start_line - 2] != "8"  # paragraph numbers are not text


@pytest.mark.parametrize(
    "relative",
    [
        "books/epub/Winter Sports in Switzerland - E. F. Benson.epub",
        "books/epub/sample-ebook.epub",
        "books/epub/ubuntu-packaging-guide.de.epub",
    ],
)
def test_fallback_reader_agrees_with_ebooklib(corpus, relative):
    """live-manual needs the ZIP reader (ebooklib raises KeyError on it); where both work they agree."""
    with_ebooklib = read_with_ebooklib(corpus / relative)
    with zipfile.ZipFile(corpus / relative) as archive:
        direct = read_from_zip(archive)
    assert direct.title == with_ebooklib.title
    assert [chapter.href for chapter in direct.chapters] == [chapter.href for chapter in with_ebooklib.chapters]
    assert direct.toc == with_ebooklib.toc


def test_fragments_point_inside_chapters(extracted, check):
    document = extracted("books/epub/Winter Sports in Switzerland - E. F. Benson.epub")
    nodes = check.flatten(document.outline)
    chapter = next(node for node in nodes if node.title == "CHAPTER II RINKS AND SKATERS")
    assert [child.title for child in chapter.children][:3] == ["THIRD-CLASS TEST", "SECOND-CLASS TEST", "FIRST-CLASS TEST"]
    assert chapter.start_line < chapter.children[0].start_line <= chapter.end_line


def test_repeated_entries_and_broken_relative_links(extracted, check):
    document = extracted("books/epub/ubuntu-packaging-guide.de.epub")
    nodes = check.flatten(document.outline)
    for node in nodes:
        assert all(child.title != node.title for child in node.children)
    gpg = next(node for node in nodes if node.title == "Ihren GPG-Schlüssel erstellen")
    assert gpg.level == 3
    assert document.lines[gpg.start_line - 1].endswith("Ihren GPG-Schlüssel erstellen")


def test_unzipped_size_limit(corpus):
    with pytest.raises(ExtractionError, match="max_unzipped_mb"):
        extract_file(corpus / "books/epub/sample-ebook.epub", replace(ExtractLimits(), max_unzipped_bytes=1000))


def test_epub_without_container_is_a_clear_error(tmp_path: Path):
    broken = tmp_path / "broken.epub"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr("OEBPS/chapter.xhtml", "<html><body><p>text</p></body></html>")
    with pytest.raises(ExtractionError, match="not a readable EPUB file"):
        extract_file(broken)


def test_epub3_nav_document_without_ncx(tmp_path: Path, check):
    book = tmp_path / "nav-only.epub"
    opf = """<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Nav Only</dc:title></metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="text/one.xhtml" media-type="application/xhtml+xml"/>
    <item id="c1b" href="text/one.xhtml#later" media-type="application/xhtml+xml"/>
  </manifest>
  <spine><itemref idref="c1"/><itemref idref="c1b"/></spine>
</package>"""
    nav = """<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>
<nav epub:type="toc"><ol><li><a href="text/one.xhtml">Part One</a>
<ol><li><a href="text/one.xhtml#later">A Later Section</a></li></ol></li></ol></nav></body></html>"""
    chapter = """<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Part One</h1><p>Opening words.</p>
<div id="later"><h2>A Later Section</h2><p>Closing words.</p></div></body></html>"""
    with zipfile.ZipFile(book, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip")
        archive.writestr(
            "META-INF/container.xml",
            '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
            '<rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
        )
        archive.writestr("OPS/book.opf", opf)
        archive.writestr("OPS/nav.xhtml", nav)
        archive.writestr("OPS/text/one.xhtml", chapter)
    document = extract_file(book)
    assert document.title == "Nav Only"
    assert len(document.page_starts) == 1  # two spine items name the same file
    assert [(node.level, node.title) for node in check.flatten(document.outline)] == [
        (1, "Part One"),
        (2, "A Later Section"),
    ]
    check.outline_points_at_titles(document)


def test_links_between_chapters_lead_to_the_chapter_line(extracted):
    document = extracted("books/epub/ubuntu-packaging-guide.de.epub")
    link = next(link for link in document.links if link.target == "introduction-to-ubuntu-development.xhtml")
    assert document.lines[link.target_line - 1].startswith("--- chapter 2:")
    assert link.target_line in document.page_starts


def test_a_chapter_marker_names_the_chapter_its_first_lines_belong_to(extracted):
    document = extracted("books/epub/Winter Sports in Switzerland - E. F. Benson.epub")
    markers = {line: text for line, text in enumerate(document.lines, start=1) if text.startswith("--- chapter")}
    chapter_two = next(node for node in document.outline if node.title.startswith("CHAPTER II "))
    marker_before = max(line for line in markers if line < chapter_two.start_line)
    # the spine file holding the end of chapter I and the start of chapter II opens with chapter I
    assert markers[marker_before] == "--- chapter 3: CHAPTER I THE SUN-SEEKER (continued) ---"
    for line, text in markers.items():  # a file starting at a chapter's anchor is named for that chapter
        heading = next((node for node in document.outline if node.start_line in (line, line + 1)), None)
        if heading is not None and not text.endswith("(continued) ---"):
            assert heading.title in text


@pytest.mark.parametrize(
    "algorithm, refused",
    [("http://www.w3.org/2001/04/xmlenc#aes128-cbc", True), ("http://www.idpf.org/2008/embedding", False)],
)
def test_a_drm_protected_book_says_so_and_obfuscated_fonts_do_not_count(corpus, tmp_path, algorithm, refused):
    source = corpus / "books/epub/Winter Sports in Switzerland - E. F. Benson.epub"
    book = tmp_path / "protected.epub"
    chapter = next(name for name in zipfile.ZipFile(source).namelist() if name.endswith("-h-0.htm.html"))
    encryption = (
        '<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
        'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
        f'<enc:EncryptionMethod Algorithm="{algorithm}"/><enc:CipherData>'
        f'<enc:CipherReference URI="{chapter if refused else "OEBPS/font.otf"}"/></enc:CipherData>'
        "</enc:EncryptedData></encryption>"
    )
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(book, "w") as copy:
        for item in original.infolist():
            copy.writestr(item, original.read(item.filename))
        copy.writestr("META-INF/encryption.xml", encryption)
    if refused:
        with pytest.raises(ExtractionError, match="DRM-protected EPUB: 1 of its files are encrypted"):
            extract_file(book)
    else:
        assert extract_file(book).title == extract_file(source).title


def test_a_chapter_file_missing_from_the_book_is_a_warning_and_the_rest_reads(corpus, tmp_path):
    source = corpus / "books/epub/Winter Sports in Switzerland - E. F. Benson.epub"
    cut = tmp_path / "cut.epub"
    gone = next(name for name in zipfile.ZipFile(source).namelist() if name.endswith("-h-3.htm.html"))
    with zipfile.ZipFile(source) as original, zipfile.ZipFile(cut, "w") as copy:
        for item in original.infolist():
            if item.filename != gone:
                copy.writestr(item, original.read(item.filename))
    document, whole = extract_file(cut), extract_file(source)
    expected = f"1 file(s) the book's spine lists are missing from the EPUB ({gone.split('/', 1)[1]}): their text is not indexed"
    assert [warning for warning in document.warnings if warning not in whole.warnings] == [expected]
    assert len(whole.page_starts) - len(document.page_starts) == 1
