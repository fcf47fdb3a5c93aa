"""Every file in odd/ gives a clear error or a correct document; content beats the file name."""

from __future__ import annotations

import pytest

from linkly_ls.core.document import ExtractionError
from linkly_ls.core.extract import extract_file, sniff

#: odd/ files that cannot be read -> words the error message must contain
ERRORS = {
    "empty.pdf": "empty file (0 bytes)",
    "fhs-3.0-partial-download.pdf": "damaged or incomplete",
    "graph-encrypted.pdf": "password-protected",
    "header-only.pdf": "not a readable PDF",
    "cyclic-toc.pdf": "no page of it can be read",
    "locked-statement.pdf": "password-protected",
    "report-truncated.docx": "not a readable DOCX file",
}
#: odd/ files that are read -> (document type, a phrase of their text)
DOCUMENTS = {
    "empty-note.md": ("md", ""),  # an empty note is a note (Obsidian writes one for each unresolved link followed)
    "crlf-bom-notes.md": ("md", "Many programming languages support this kind of data structure"),
    "meeting-minutes.docx": ("pdf", "Lorem ipsum dolor sit amet"),
    "mistitled-outlines.pdf": ("pdf", "Hello, here is some text without a meaning."),
    "notes-fr-latin1.txt": ("txt", "Astro a été conçu pour rendre la mise en forme"),
    "readme.txt": ("html", "The apt-cache Command"),
    "scan-0042.pdf": ("image", "Covfefe is a perfectly cromulent word."),
    "single-line-export.txt": ("txt", "A crate can come in one of two forms"),
    "tutorial-seiten-cp1252.txt": ("txt", "Füge deiner Website neue Seiten mit Navigationslinks"),
    "windows-notes-utf16.txt": ("txt", "We talked about strings in Chapter 4"),
}


def test_every_odd_file_is_covered(corpus):
    assert {path.name for path in (corpus / "odd").iterdir()} == set(ERRORS) | set(DOCUMENTS)


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_unreadable_files_say_why(corpus, name):
    with pytest.raises(ExtractionError) as raised:
        extract_file(corpus / "odd" / name)
    assert ERRORS[name] in str(raised.value)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_readable_odd_files(extracted, check, name):
    doc_type, phrase = DOCUMENTS[name]
    document = extracted(f"odd/{name}")
    assert document.doc_type == doc_type
    assert phrase in " ".join(" ".join(document.lines).split())
    assert "\ufffd" not in "".join(document.lines)
    check.well_formed(document, source_lines=doc_type in ("md", "mdx", "txt"))


@pytest.mark.parametrize(
    "name, real",
    [("meeting-minutes.docx", "PDF"), ("scan-0042.pdf", "IMAGE"), ("readme.txt", "HTML")],
)
def test_misnamed_files_are_read_as_what_they_are(extracted, corpus, name, real):
    document = extracted(f"odd/{name}")
    assert sniff(corpus / "odd" / name) == real.lower()
    assert any(f"content is {real}" in warning for warning in document.warnings)


def test_unsupported_suffix_is_refused(tmp_path):
    other = tmp_path / "data.xyz"
    other.write_text("hello", encoding="utf-8")
    with pytest.raises(ExtractionError, match="unsupported file type"):
        extract_file(other)


@pytest.mark.parametrize("name", ["notes.pdf", "notes.docx", "notes.epub"])
def test_text_saved_under_a_binary_formats_name_is_read_as_text(tmp_path, name):
    """MuPDF opened a Markdown note named `.pdf` as a document of its own and the outline step failed with
    `TypeError: bad operand type for unary ~`; a text file's name cannot make it a PDF."""
    path = tmp_path / name
    path.write_text("# Title\n\nSome *markdown* text, café.\n" + "more words " * 300, encoding="utf-8")
    document = extract_file(path)
    assert document.doc_type == "txt" and document.lines[0] == "# Title"
    assert any("content is TXT" in warning for warning in document.warnings)


def test_binary_bytes_under_a_pdf_name_stay_an_error(tmp_path):
    path = tmp_path / "noise.pdf"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ExtractionError, match="not a readable PDF"):
        extract_file(path)


@pytest.mark.parametrize("suffix", [".mdown", ".mdwn", ".mkd", ".mkdn", ".mkdown", ".MARKDOWN"])
def test_markdowns_other_suffixes_are_notes(tmp_path, suffix):
    """Notes kept as `notes.mkd` (older editors, Gitit, ikiwiki) were skipped as unsupported."""
    path = tmp_path / f"plan{suffix}"
    path.write_text("---\ntitle: The plan\n---\n# Goals\n\nShip it.\n", encoding="utf-8")
    document = extract_file(path)
    assert document.doc_type == "md" and document.title == "The plan"
    assert [node.title for node in document.outline] == ["Goals"]
