"""The text of a DOCX outside its body, written under headings at its end: footnotes and endnotes (marked
as the body cites them), the texts of its headers and footers, and reviewers' comments."""

from __future__ import annotations

import re

from docx.document import Document as DocxDocument
from docx.oxml.ns import qn
from lxml import etree

from linkly_ls.core.extract.docx_text import ENDNOTE_REFERENCE, FOOTNOTE_REFERENCE, NoteMarks, paragraph_text

_ID = qn("w:id")
#: a page number as headers and footers write it: `Page 5`, `Page 3 of 12`, `Seite 2 von 9`, `p. 4/7`
_PAGE_NUMBER = re.compile(r"(?i)\b(?:page|p\.|pg\.|seite|pagina|página|side|sida|sivu)\s*\d+(?:\s*(?:of|/|von|de|sur|av|af|di|/)\s*\d+)?")
#: the parts of a document's notes, and the heading their text is written under at the end
_NOTE_PARTS = (
    ("/footnotes", "w:footnote", "Footnotes", FOOTNOTE_REFERENCE),
    ("/endnotes", "w:endnote", "Endnotes", ENDNOTE_REFERENCE),
)
#: notes that are Word's separator lines, not text
_NOTE_SEPARATORS = frozenset({"separator", "continuationSeparator", "continuationNotice"})
_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _notes(document: DocxDocument, marks: NoteMarks) -> list[tuple[str, list[str]]]:
    """(heading, ["[mark] text"]) of the footnotes and of the endnotes, each part that has any, marked as the
    body refers to them (`marks`): their text is no part of the body, and a search for a sentence of a
    footnote found nothing."""
    found: list[tuple[str, list[str]]] = []
    for reltype_end, tag, heading, reference_tag in _NOTE_PARTS:
        parts = _parts(document, reltype_end)
        root = _root(parts[0]) if parts else None
        if root is None:
            continue
        notes: list[tuple[int, str]] = []
        for note in root.iterchildren(qn(tag)):
            if note.get(qn("w:type")) in _NOTE_SEPARATORS:
                continue
            text = " ".join(" ".join(paragraph_text(p).split()) for p in note.iter(qn("w:p")))
            if text.strip():
                note_id = note.get(_ID) or f"unnumbered {len(notes)}"
                notes.append((marks.number(reference_tag, note_id), f"{marks.mark(reference_tag, note_id)} {text.strip()}"))
        if notes:
            found.append((heading, [line for _, line in sorted(notes)]))
    return found



def end_sections(document: DocxDocument, marks: NoteMarks) -> list[tuple[str, list[str]]]:
    """(heading, lines) of each kind of text outside the body that the document has: notes, headers and
    footers, comments."""
    sections = _notes(document, marks)
    margins = _header_and_footer_texts(document)
    if margins:
        sections.append(("Headers and footers", margins))
    comments = _comments(document)
    if comments:
        sections.append(("Comments", comments))
    return sections


def _parts(document: DocxDocument, reltype_end: str) -> list:
    """The document's internal parts of a relationship type, by part name (a stable order)."""
    parts = {rel.target_part.partname: rel.target_part for rel in document.part.rels.values()
             if not rel.is_external and rel.reltype.endswith(reltype_end)}
    return [parts[name] for name in sorted(parts)]


def _root(part) -> etree._Element | None:
    try:
        return etree.fromstring(part.blob, _SAFE_XML)
    except etree.XMLSyntaxError:
        return None  # the body is still read; a damaged part loses only its own text


def _header_and_footer_texts(document: DocxDocument) -> list[str]:
    """Each distinct paragraph of the headers and footers that holds a letter (an engagement code, "Draft
    for discussion", a client's name), once, without its page number (`Page 5 of 12`): every section may
    repeat them, each with its own page numbers."""
    texts: dict[str, None] = {}
    for part in _parts(document, "/header") + _parts(document, "/footer"):
        root = _root(part)
        if root is None:
            continue
        for paragraph in root.iter(qn("w:p")):
            text = _PAGE_NUMBER.sub("", " ".join(paragraph_text(paragraph).split())).strip(" -–—·|,")
            if any(character.isalpha() for character in text):
                texts.setdefault(text)
    return list(texts)


def _comments(document: DocxDocument) -> list[str]:
    """`[comment, Author] text` for each reviewer's comment: where decisions are argued, and searched for."""
    lines = []
    for part in _parts(document, "/comments"):
        root = _root(part)
        if root is None:
            continue
        for comment in root.iterchildren(qn("w:comment")):
            text = " ".join(" ".join(paragraph_text(p).split()) for p in comment.iter(qn("w:p"))).strip()
            if text:
                author = " ".join((comment.get(qn("w:author")) or "").split())
                lines.append(f"[comment, {author}] {text}" if author else f"[comment] {text}")
    return lines
