"""Word DOCX with python-docx: paragraphs and tables in body order, heading styles as the outline.

A paragraph is a heading when its style is "Heading N" / "Title" or carries an
outline level (directly or through the styles it is based on), so localised
and custom heading styles count too. List paragraphs get a "- " prefix and
table rows become `cell | cell` lines.
"""

from __future__ import annotations

import re
from pathlib import Path

from docx.document import Document as DocxDocument
from docx.opc.exceptions import PackageNotFoundError
from docx.opc.part import PartFactory
from docx.package import Package as DocxPackage
from docx.parts.document import DocumentPart
from docx.oxml.ns import nsmap, qn
from lxml import etree

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Heading, LineBuilder, Link
from linkly_ls.core.extract.base import ExtractLimits, alt_text, title_from_path
from linkly_ls.core.extract.docx_notes import end_sections
from linkly_ls.core.extract.docx_numbering import ListNumbers
from linkly_ls.core.extract.docx_text import PARAGRAPHS_AT, TEXT_BOXES, NoteMarks, paragraph_text
from linkly_ls.core.extract.zipguard import check_zip

_HEADING_NAME = re.compile(r"^heading\s*([1-9])$", re.I)
#: titles that name no document: Word's defaults, and python-docx's for a file without core properties
_GENERIC_TITLE = re.compile(r"^(untitled|title|document|word document|microsoft word - .*)$", re.I)
_MAX_BASED_ON = 10
#: the alternative text of the pictures a paragraph holds
_ALT_TEXT = etree.XPath(".//wp:docPr/@descr", namespaces={"wp": nsmap["wp"]})
_TEXT = qn("w:t")
_CELL_PROPERTIES, _VERTICAL_MERGE, _GRID_SPAN, _VALUE = qn("w:tcPr"), qn("w:vMerge"), qn("w:gridSpan"), qn("w:val")
_HYPERLINK, _ANCHOR_ATTR, _REL_ID = qn("w:hyperlink"), qn("w:anchor"), qn("r:id")
_BOOKMARK, _NAME, _ID = qn("w:bookmarkStart"), qn("w:name"), qn("w:id")


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    check_zip(path, limits, "DOCX")
    document = _open(path)
    styles = _style_table(document)
    builder = LineBuilder()
    walker = _BodyWalker(styles, builder, _external_targets(document), ListNumbers(_numbering_part(document)))
    walker.walk(document.element.body)
    first_heading = builder.headings[0] if builder.headings else None  # the body's: not "Footnotes", "Comments"
    for heading, notes in end_sections(document, walker.marks):
        builder.blank()
        builder.heading(heading, 1)
        for note in notes:
            builder.text(note)
    lines, outline = builder.finish()
    return ExtractedDocument(
        lines=lines,
        title=_title(document, walker, first_heading, path),
        doc_type="docx",
        outline=outline,
        links=walker.finished_links(len(lines)),
    )


def _numbering_part(document: DocxDocument) -> bytes | None:
    """The bytes of `word/numbering.xml` (how Word numbers lists), if the document has one."""
    part = next((rel.target_part for rel in document.part.rels.values()
                 if not rel.is_external and rel.reltype.endswith("/numbering")), None)
    return part.blob if part is not None else None


def _external_targets(document: DocxDocument) -> dict[str, str]:
    """Relationship id -> URL (or file) of the document part's external relationships."""
    targets: dict[str, str] = {}
    for rel_id, rel in document.part.rels.items():
        if rel.is_external and rel.reltype.endswith("/hyperlink"):
            targets[rel_id] = rel.target_ref
    return targets


def _open(path: Path) -> DocxDocument:
    """The document, also when saved with macros (`.docm`) or as a template (`.dotx`, `.dotm`): the same
    parts under other content types, which python-docx does not map to a document part by itself."""
    try:
        part = DocxPackage.open(str(path)).main_document_part
        if not isinstance(part, DocumentPart):
            raise ValueError(f"its main part is {part.content_type}, not a Word document")
        return part.document
    except (PackageNotFoundError, KeyError, ValueError) as error:
        raise ExtractionError(f"not a readable DOCX file: {error}") from error


#: the main parts of Word's other packages: with macros, templates
for _content_type in (
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
):
    PartFactory.part_type_for.setdefault(_content_type, DocumentPart)


class _StyleInfo:
    __slots__ = ("name", "level", "is_list", "numbering")

    def __init__(self, name: str, level: int | None, is_list: bool, numbering: tuple[str, int] | None) -> None:
        self.name = name
        self.level = level
        self.is_list = is_list
        #: (numId, level) of the list the style numbers its paragraphs in (numbered heading styles)
        self.numbering = numbering


def _style_table(document: DocxDocument) -> dict[str, _StyleInfo]:
    """Paragraph style id -> name, outline level (None for body text) and list-ness."""
    raw: dict[str, tuple[str, int | None, str | None]] = {}
    numbered: dict[str, tuple[str, int] | None] = {}
    for style in document.styles.element.findall(qn("w:style")):
        if style.get(qn("w:type")) != "paragraph":
            continue
        style_id = style.get(qn("w:styleId")) or ""
        name_element = style.find(qn("w:name"))
        name = name_element.get(qn("w:val")) if name_element is not None else style_id
        based_on = style.find(qn("w:basedOn"))
        raw[style_id] = (name or style_id, _outline_level(style), based_on.get(qn("w:val")) if based_on is not None else None)
        numbered[style_id] = _numbering(style)
    own = {style_id: _own_level(name, level) for style_id, (name, level, _parent) in raw.items()}
    table: dict[str, _StyleInfo] = {}
    for style_id, (name, _level, _parent) in raw.items():
        numbering, parent, steps = numbered[style_id], raw[style_id][2], 0
        while numbering is None and parent in raw and steps < _MAX_BASED_ON:
            numbering, parent = numbered[parent], raw[parent][2]
            steps += 1
        # a house style based on `heading 1` is a level-1 heading as Word's navigation pane shows it, though
        # neither style writes its outline level (Google Docs exports, generators); body text (level 9) ends it
        level, parent, steps = own[style_id], raw[style_id][2], 0
        while level is None and parent in raw and steps < _MAX_BASED_ON:
            level, parent = own[parent], raw[parent][2]
            steps += 1
        table[style_id] = _StyleInfo(name, level or None, name.lower().startswith("list"), numbering)
    return table


def _own_level(name: str, outline: int | None) -> int | None:
    """A style's level from its name (`heading 2`, `Title`) or its own outline level (0: body text)."""
    heading = _HEADING_NAME.match(name)
    if heading:
        return int(heading.group(1))
    if name.lower() == "title":
        return 1
    return outline


def _numbering(element) -> tuple[str, int] | None:
    """(numId, level) of an element's `w:pPr/w:numPr`, None without one (the level 0 when not given)."""
    properties = element.find(qn("w:pPr"))
    found = properties.find(qn("w:numPr")) if properties is not None else None
    if found is None:
        return None
    num_id, level = found.find(qn("w:numId")), found.find(qn("w:ilvl"))
    try:
        depth = int(level.get(qn("w:val"))) if level is not None else 0
    except (TypeError, ValueError):
        depth = 0
    return ((num_id.get(qn("w:val")) or "") if num_id is not None else "", depth)


def _outline_level(element) -> int | None:
    """w:pPr/w:outlineLvl as a 1-based level, 0 for body text (9, which cancels a style's level); None when
    there is none."""
    properties = element.find(qn("w:pPr"))
    found = properties.find(qn("w:outlineLvl")) if properties is not None else None
    if found is None:
        return None
    try:
        value = int(found.get(qn("w:val")))
    except (TypeError, ValueError):
        return None
    return value + 1 if 0 <= value <= 8 else 0 if value == 9 else None


class _BodyWalker:
    """Writes body elements into the builder in document order."""

    def __init__(
        self, styles: dict[str, _StyleInfo], builder: LineBuilder, targets: dict[str, str], numbers: ListNumbers
    ) -> None:
        self.styles = styles
        self.builder = builder
        self.title_paragraph: str | None = None
        self.targets = targets
        self.links: list[Link] = []
        self.bookmarks: dict[str, int] = {}
        self.marks = NoteMarks()
        self.numbers = numbers
        #: how many text boxes deep the paragraphs being read are
        self.depth = 0

    def finished_links(self, total_lines: int) -> list[Link]:
        """The hyperlinks seen; one to a bookmark of the document knows its target line."""
        last = max(total_lines, 1)
        for link in self.links:
            link.line = min(link.line, last)
            if link.target.startswith("#") and link.target[1:] in self.bookmarks:
                link.target_line = min(self.bookmarks[link.target[1:]], last)
        return self.links

    def _note_links(self, element, line: int) -> None:
        for bookmark in element.iter(_BOOKMARK):
            name = bookmark.get(_NAME)
            if name:
                self.bookmarks.setdefault(name, line)
        for hyperlink in element.iter(_HYPERLINK):
            anchor = hyperlink.get(_ANCHOR_ATTR)
            rel_id = hyperlink.get(_REL_ID)
            target = self.targets.get(rel_id or "") if rel_id else None
            if target is None and anchor:
                target = "#" + anchor
            elif target is not None and anchor:
                target += "#" + anchor
            if target:
                text = "".join(node.text or "" for node in hyperlink.iter(_TEXT))
                self.links.append(Link(line=line, target=target, text=" ".join(text.split()), kind="docx"))

    def walk(self, container) -> None:
        for child in container.iterchildren():
            tag = child.tag
            if tag == qn("w:p"):
                self._paragraph(child)
            elif tag == qn("w:tbl"):
                self._table(child)
            elif tag in (qn("w:sdt"), qn("w:customXml")):
                content = child.find(qn("w:sdtContent"))
                self.walk(content if content is not None else child)

    def _paragraph(self, element) -> None:
        self._write_paragraph(element)
        for box in TEXT_BOXES(element, depth=self.depth):
            self.depth += 1
            try:
                self.walk(box)
            finally:
                self.depth -= 1

    def _write_paragraph(self, element) -> None:
        text = paragraph_text(element, self.marks, self.depth)
        described = alt_text(_ALT_TEXT(element))
        if described:
            text = f"{text} {described}".strip()
        if not text.strip():
            self.builder.blank()
            return
        properties = element.find(qn("w:pPr"))
        style_id = None
        if properties is not None:
            style_element = properties.find(qn("w:pStyle"))
            style_id = style_element.get(qn("w:val")) if style_element is not None else None
        style = self.styles.get(style_id or "") or self.styles.get("Normal")
        own = _outline_level(element)
        level = (own if own is not None else style.level if style else None) or None
        if level is not None and len(text) <= 300:
            if style is not None and style.name.lower() == "title" and self.title_paragraph is None:
                self.title_paragraph = " ".join(text.split())
            self.builder.blank()
            self._note_links(element, self.builder.next_line)
            number = self._number(element, style)
            self.builder.heading(f"{number} {text}" if number else text, min(level, 9))
            return
        self._note_links(element, self.builder.next_line)
        number = self._number(element, style)
        bulleted = number == "" or (number is None and style is not None and style.is_list)
        self.builder.text(f"{number} {text}" if number else ("- " + text if bulleted else text))

    def _number(self, element, style: _StyleInfo | None) -> str | None:
        """The number Word shows before the paragraph (`ListNumbers.label`): its own list, else its style's;
        a paragraph's level applies to its style's list too."""
        own = _numbering(element)
        inherited = style.numbering if style is not None else None
        if own is not None and own[0] == "":
            own = (inherited[0], own[1]) if inherited is not None else None
        chosen = own or inherited
        if chosen is None:
            return None
        return self.numbers.label(*chosen)

    def _table(self, element) -> None:
        self.builder.blank()
        merged: dict[int, str] = {}  # grid column -> the text of the cell a vertical merge started with there
        for row in _wrapped_children(element, qn("w:tr")):
            cells = []
            column = 0
            for cell in _wrapped_children(row, qn("w:tc")):
                parts = self._cell_texts(cell, self.depth)
                text = " ".join(" ".join(part.split()) for part in parts if part.strip())
                merge = cell.find(f"{_CELL_PROPERTIES}/{_VERTICAL_MERGE}")
                if merge is not None and merge.get(_VALUE) == "restart":
                    merged[column] = text
                elif merge is not None:  # a row of a vertical merge: Word shows the first cell's text across it
                    text = merged.get(column, text)
                cells.append(text)
                span = cell.find(f"{_CELL_PROPERTIES}/{_GRID_SPAN}")
                column += int(span.get(_VALUE)) if span is not None and (span.get(_VALUE) or "").isdigit() else 1
            if any(cells):
                self._note_links(row, self.builder.next_line)
                self.builder.text(" | ".join(cells))
        self.builder.blank()


    def _cell_texts(self, cell, depth: int) -> list[str]:
        """A cell's paragraphs in order (a nested table's too), each followed by those of the text boxes it
        anchors: a call-out in a cell was lost, its runs being a text box's and its paragraphs not read."""
        texts = []
        for paragraph in PARAGRAPHS_AT(cell, depth=depth):
            texts.append(paragraph_text(paragraph, self.marks, depth))
            for box in TEXT_BOXES(paragraph, depth=depth):
                texts += self._cell_texts(box, depth + 1)
        return texts


_WRAPPERS = frozenset({qn("w:sdt"), qn("w:sdtContent"), qn("w:customXml")})


def _wrapped_children(element, tag: str):
    """`element`'s children of `tag`, also those inside content controls and custom XML: a repeating
    section's rows (`w:tbl/w:sdt/w:sdtContent/w:tr`) and a cell in a content control were left out."""
    for child in element.iterchildren():
        if child.tag == tag:
            yield child
        elif child.tag in _WRAPPERS:
            yield from _wrapped_children(child, tag)


def _title(document: DocxDocument, walker: _BodyWalker, first: Heading | None, path: Path) -> str:
    """The paragraph in the Title style, as the reader sees it; else the core title (a template's leftover,
    `Proposal template v7 (do not edit)`, titled every document made from it, over the title shown); else
    the first heading near the top, else the file name."""
    if walker.title_paragraph:
        return walker.title_paragraph
    core_title = " ".join((document.core_properties.title or "").split())
    if core_title and not _GENERIC_TITLE.match(core_title):
        return core_title
    if first is not None and first.line <= 20 and len(first.title) <= 200:
        return first.title
    return title_from_path(path)
