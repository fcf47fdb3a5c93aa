"""The numbers Word shows before list paragraphs and numbered headings (`1.`, `a.`, `iv)`, `2.3`).

A numbered paragraph holds no number in its text: it names a list (`w:numPr`: a
`numId` and a level), directly or through its style, and Word counts. The list
(`word/numbering.xml`) says each level's start, format and text (`%1.%2`); a
paragraph at a level counts one up there and starts every deeper level again.
Read without this, a handbook's "a." items read "- " beside a "b." typed by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from docx.oxml.ns import qn
from lxml import etree

from linkly_ls.core.extract.docx_text import roman

_SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
_LEVELS = 9
_VAL = qn("w:val")
#: formats that print no number: the paragraph shows a bullet (or nothing)
_UNNUMBERED = frozenset({"bullet", "none"})


@dataclass(frozen=True)
class Level:
    start: int
    number_format: str
    text: str


class ListNumbers:
    """Counts the numbered paragraphs of one document, in order: `label(num_id, level)` per paragraph."""

    def __init__(self, numbering_xml: bytes | None) -> None:
        self.levels: dict[str, dict[int, Level]] = {}
        self.counters: dict[str, list[int | None]] = {}
        if numbering_xml:
            try:
                self._read(etree.fromstring(numbering_xml, _SAFE_XML))
            except etree.XMLSyntaxError:
                self.levels = {}  # the text is still read; lists show as bullets

    def _read(self, root) -> None:
        abstract: dict[str, dict[int, Level]] = {}
        for definition in root.iterchildren(qn("w:abstractNum")):
            abstract[definition.get(qn("w:abstractNumId")) or ""] = {
                int(level.get(qn("w:ilvl")) or 0): _level(level) for level in definition.iterchildren(qn("w:lvl"))
            }
        for num in root.iterchildren(qn("w:num")):
            reference = num.find(qn("w:abstractNumId"))
            levels = dict(abstract.get(reference.get(_VAL) if reference is not None else "", {}))
            for override in num.iterchildren(qn("w:lvlOverride")):
                index = _int(override.get(qn("w:ilvl")), 0)
                replaced = override.find(qn("w:lvl"))
                start = override.find(qn("w:startOverride"))
                if replaced is not None:
                    levels[index] = _level(replaced)
                elif start is not None and index in levels:
                    old = levels[index]
                    levels[index] = Level(_int(start.get(_VAL), old.start), old.number_format, old.text)
            self.levels[num.get(qn("w:numId")) or ""] = levels

    def label(self, num_id: str, level: int) -> str | None:
        """The number Word shows for the next paragraph of list `num_id` at `level` (`"3."`, `"1.2"`), "" for
        a bullet or a list that prints nothing, None for no list (`numId` 0, or one numbering.xml lacks)."""
        levels = self.levels.get(num_id)
        if not levels or level not in levels:
            return None
        counters = self.counters.setdefault(num_id, [None] * _LEVELS)
        level = min(max(level, 0), _LEVELS - 1)
        counters[level] = (counters[level] if counters[level] is not None else levels[level].start - 1) + 1
        for deeper in range(level + 1, _LEVELS):
            counters[deeper] = None
        shown = levels[level]
        if shown.number_format in _UNNUMBERED:
            return ""
        text = shown.text
        for index in range(_LEVELS):
            marker = f"%{index + 1}"
            if marker in text:
                count = counters[index] if counters[index] is not None else levels.get(index, shown).start
                text = text.replace(marker, _formatted(count, levels.get(index, shown).number_format))
        return text.strip()


def _level(element) -> Level:
    start = element.find(qn("w:start"))
    number_format = element.find(qn("w:numFmt"))
    text = element.find(qn("w:lvlText"))
    return Level(
        start=_int(start.get(_VAL) if start is not None else None, 1),
        number_format=(number_format.get(_VAL) if number_format is not None else None) or "decimal",
        text=(text.get(_VAL) if text is not None else None) or "",
    )


def _formatted(count: int, number_format: str) -> str:
    if number_format == "lowerLetter":
        return _letters(count)
    if number_format == "upperLetter":
        return _letters(count).upper()
    if number_format == "lowerRoman":
        return roman(count)
    if number_format == "upperRoman":
        return roman(count).upper()
    if number_format == "decimalZero":
        return f"{count:02d}"
    return str(count)


def _letters(count: int) -> str:
    """Word's letter numbering: a..z, then aa..zz, aaa.. (the letter repeated)."""
    count = max(count, 1)
    return chr(ord("a") + (count - 1) % 26) * ((count - 1) // 26 + 1)


def _int(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default
