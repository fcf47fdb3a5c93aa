"""A DOCX paragraph's text as Word shows it, and the numbers Word shows for footnotes and endnotes."""

from __future__ import annotations

from docx.oxml.ns import nsmap, qn
from lxml import etree

_MARKUP_COMPATIBILITY = "http://schemas.openxmlformats.org/markup-compatibility/2006"
#: the text-bearing children of a paragraph's runs, in document order, as Word shows them: runs inside
#: insertions, moves, content controls, fields, smart tags and hyperlinks too (python-docx's
#: `Paragraph.text` reads only direct runs and those of hyperlinks, and lost a tracked draft's new text);
#: not deleted or moved-away text, hidden text, ruby annotations, nor the runs of a text box the paragraph
#: anchors (`$depth` text boxes deep: the box's own paragraphs are read as paragraphs) or the fallback
#: copy of it that Word writes for older readers
RUN_CONTENT = etree.XPath(
    ".//w:r[count(ancestor::w:txbxContent) = $depth]"
    "[not(ancestor::w:del or ancestor::w:moveFrom or ancestor::mc:Fallback or ancestor::w:rt)]"
    "[not(w:rPr/w:vanish[not(@w:val) or @w:val != '0' and @w:val != 'false'])]"
    "/*[self::w:t or self::w:tab or self::w:ptab or self::w:br or self::w:cr or self::w:noBreakHyphen"
    " or self::w:footnoteReference or self::w:endnoteReference]",
    namespaces={"w": nsmap["w"], "mc": _MARKUP_COMPATIBILITY},
)
#: the text boxes a paragraph anchors (`$depth` deep), once: not the fallback copy
TEXT_BOXES = etree.XPath(
    ".//w:txbxContent[count(ancestor::w:txbxContent) = $depth][not(ancestor::mc:Fallback)]",
    namespaces={"w": nsmap["w"], "mc": _MARKUP_COMPATIBILITY},
)
#: the paragraphs of an element (a table cell) `$depth` text boxes deep, in order: not the fallback copy
PARAGRAPHS_AT = etree.XPath(
    ".//w:p[count(ancestor::w:txbxContent) = $depth][not(ancestor::mc:Fallback)]",
    namespaces={"w": nsmap["w"], "mc": _MARKUP_COMPATIBILITY},
)
_TEXT, _BREAK, _BREAK_TYPE, _ID = qn("w:t"), qn("w:br"), qn("w:type"), qn("w:id")
FOOTNOTE_REFERENCE, ENDNOTE_REFERENCE = qn("w:footnoteReference"), qn("w:endnoteReference")
_NOTE_REFERENCES = frozenset({FOOTNOTE_REFERENCE, ENDNOTE_REFERENCE})
_CUSTOM_MARK = qn("w:customMarkFollows")
_TRUE = frozenset({"1", "true", "on"})
#: what the other run contents stand for, as python-docx renders them
_RUN_CHARACTERS = {qn("w:tab"): "\t", qn("w:ptab"): "\t", qn("w:cr"): "\n", qn("w:noBreakHyphen"): "-"}


def paragraph_text(element, marks: NoteMarks | None = None, depth: int = 0) -> str:
    """A `w:p` element's text as Word shows it (`RUN_CONTENT`), with a note's number where the text
    refers to it when `marks` numbers them; `depth` is how many text boxes deep the paragraph is."""
    parts: list[str] = []
    for child in RUN_CONTENT(element, depth=depth):
        tag = child.tag
        if tag == _TEXT:
            parts.append(child.text or "")
        elif tag == _BREAK:
            if child.get(_BREAK_TYPE, "textWrapping") == "textWrapping":  # page and column breaks are ""
                parts.append("\n")
        elif tag in _NOTE_REFERENCES:
            if marks is not None and child.get(_CUSTOM_MARK) not in _TRUE:  # a custom mark is the run's text
                parts.append(marks.mark(tag, child.get(_ID) or ""))
        else:
            parts.append(_RUN_CHARACTERS[tag])
    return "".join(parts)


class NoteMarks:
    """The numbers Word shows for the notes: footnotes 1, 2, 3 and endnotes i, ii, iii (its defaults), in
    the order the text first refers to them; a note nothing refers to is numbered after those."""

    def __init__(self) -> None:
        self.numbers: dict[str, dict[str, int]] = {FOOTNOTE_REFERENCE: {}, ENDNOTE_REFERENCE: {}}

    def number(self, reference_tag: str, note_id: str) -> int:
        numbers = self.numbers[reference_tag]
        return numbers.setdefault(note_id, len(numbers) + 1)

    def mark(self, reference_tag: str, note_id: str) -> str:
        number = self.number(reference_tag, note_id)
        return f"[{number}]" if reference_tag == FOOTNOTE_REFERENCE else f"[{roman(number)}]"


def roman(number: int) -> str:
    letters = []
    for value, symbol in ((1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"), (50, "l"),
                          (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i")):
        count, number = divmod(number, value)
        letters.append(symbol * count)
    return "".join(letters)
