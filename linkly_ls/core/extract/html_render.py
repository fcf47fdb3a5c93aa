"""Writing an HTML element tree as lines: block elements become lines, tables `cell | cell` rows, `pre`
keeps its lines, h1-h6 become headings; ids and links are noted at the lines where their text starts.
The HTML and EPUB extractors share it."""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

from linkly_ls.core.document import Heading, LineBuilder

#: `rt` and `rp`: a ruby annotation's reading (furigana, pinyin), shown above the line, not in it
_SKIP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "nav", "aside", "iframe",
     "object", "canvas", "head", "title", "meta", "link", "button", "select", "input", "textarea", "rt", "rp"}
)
#: characters that show nothing within a word: a soft hyphen (hyphenated e-books put one at every break a
#: word allows, and the words were indexed as their pieces), a word joiner, a BOM left inside the text
_INVISIBLE = str.maketrans("", "", "\u00ad\u2060\ufeff")
#: the marks of a note reference (`jardin<a epub:type="noteref"><sup>1</sup></a>`): written apart from
#: the word before it, which it made another word (`jardin1`)
_NOTE_REFERENCE_TYPES = frozenset({"noteref", "doc-noteref"})
_PARAGRAPH_TAGS = frozenset(
    {"p", "div", "section", "article", "main", "blockquote", "figure", "ul", "ol", "dl", "aside",
     "address", "details", "fieldset", "center", "hr", "form"}
)
_LINE_TAGS = frozenset({"li", "dt", "dd", "figcaption", "summary", "caption", "legend", "tr", "body", "html"})
_HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LIST_TAGS = frozenset({"ul", "ol"})
#: a frameset's frames and an inline frame show other pages: links, not text
_FRAME_TAGS = frozenset({"frame", "iframe", "noframes"})
_BLOCK_TAGS = _PARAGRAPH_TAGS | _LINE_TAGS | _HEADING_TAGS.keys() | {"pre", "table", "br"}


#: the marks of an <aside> that holds a note of the text, kept where other asides (sidebars) are left out:
#: docutils writes every footnote as <aside class="footnote">, EPUB 3 as <aside epub:type="footnote">
_NOTE_WORDS = ("footnote", "endnote", "rearnote")
_NOTE_ROLES = frozenset({"note", "doc-footnote", "doc-endnote", "doc-rearnote"})


def _skipped(node: LexborNode, tag: str | None) -> bool:
    """Whether an element's text is left out: scripts, forms, navigation, and asides that hold no note."""
    if tag == "aside":
        attributes = node.attributes
        marks = f"{attributes.get('class') or ''} {attributes.get('epub:type') or ''}".lower()
        return not (any(word in marks for word in _NOTE_WORDS) or (attributes.get("role") or "") in _NOTE_ROLES)
    return tag in _SKIP_TAGS or tag == "-comment" or tag is None


def node_text(node: LexborNode) -> str:
    """All visible text under `node` on one line; block boundaries and <br> become spaces."""
    parts: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        tag = current.tag
        if tag == "-text":
            parts.append(current.text_content or "")
            continue
        if _skipped(current, tag):
            continue
        if tag == "br" or tag in _PARAGRAPH_TAGS or tag in _LINE_TAGS or tag in ("td", "th") or _note_reference(current, tag):
            parts.append(" ")
        stack.extend(reversed(list(current.iter(include_text=True))))
    return visible_words("".join(parts))


def visible_words(text: str) -> str:
    """`text` as shown on one line: blanks folded, and without the characters that show nothing within a
    word (`_INVISIBLE`): for titles, contents entries and the body alike."""
    return " ".join(text.translate(_INVISIBLE).split())


def _note_reference(node: LexborNode, tag: str | None) -> bool:
    """A footnote's mark in the text: a link typed as a note reference, a superscript that is or holds a
    link (`<sup><a href="#n1">1</a></sup>`, `<a href="notes.xhtml#n2"><sup>a</sup></a>`). A superscript
    alone is an exponent or an ordinal (`mc<sup>2</sup>`, `km²`, `1<sup>st</sup>`): part of its word."""
    if tag == "a":
        attributes = node.attributes
        if {attributes.get("epub:type"), attributes.get("role")} & _NOTE_REFERENCE_TYPES:
            return True
        return "#" in (attributes.get("href") or "") and node.css_first("sup") is not None
    return tag == "sup" and node.css_first("a[href]") is not None


class HtmlRenderer:
    """Writes an element tree into a LineBuilder.

    `anchors` maps element ids (and `<a name>`) to the line where their text
    starts, so EPUB table-of-contents links with #fragments can be resolved.
    With `emit_headings=False` headings are written as plain lines (the EPUB's
    own table of contents is the outline then) but still listed in `heading_lines`.
    """

    def __init__(self, builder: LineBuilder, emit_headings: bool = True) -> None:
        self.builder = builder
        self.emit_headings = emit_headings
        self.anchors: dict[str, int] = {}
        self.heading_lines: list[tuple[int, str]] = []
        #: (line, href, text) of each `<a href>`, the line being where the link's text starts
        self.links: list[tuple[int, str, str]] = []
        self._pending_links: list[tuple[str, str]] = []
        self._inline: list[str] = []
        self._pending_ids: list[str] = []
        self._prefix = ""
        self._lists = 0  # lists open around the element being written

    def render(self, root: LexborNode) -> None:
        stack: list[tuple[LexborNode, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            tag = node.tag
            if leaving:
                self._flush()
                if tag == "li":
                    self._prefix = ""  # an item that wrote nothing (a theme menu's button) marks no next line
                elif tag in _LIST_TAGS:
                    self._lists -= 1
                if tag in _PARAGRAPH_TAGS:
                    self.builder.blank()
                continue
            if tag == "-text":
                self._inline.append(node.text_content or "")
                continue
            if tag in _FRAME_TAGS:
                self._note_frame(node)
                continue
            if _skipped(node, tag):
                continue
            if tag in _BLOCK_TAGS:
                self._flush()  # text before a block is a line of its own, before the block's anchor
            elif _note_reference(node, tag):
                self._inline.append(" ")
            self._note_anchor(node)
            if tag == "a":
                self._note_link(node)
            if tag in _HEADING_TAGS:
                self._heading(node, _HEADING_TAGS[tag])
            elif tag == "pre":
                self._preformatted(node)
            elif tag == "table":
                self._table(node)
            elif tag != "br":
                if tag in _PARAGRAPH_TAGS or tag in _LINE_TAGS:
                    if tag == "li":
                        self._prefix = "  " * max(self._lists - 1, 0) + "- "  # an item of a nested list, indented
                    elif tag in _LIST_TAGS:
                        self._lists += 1
                    stack.append((node, True))
                stack.extend((child, False) for child in reversed(list(node.iter(include_text=True))))
        self._flush()
        for anchor in self._pending_ids:
            self.anchors.setdefault(anchor, max(len(self.builder.lines), 1))
        self._pending_ids.clear()
        self._place_links(max(len(self.builder.lines), 1))

    def _note_frame(self, node: LexborNode) -> None:
        """A frame's page is a link of the page showing it; `<noframes>` (which the parser keeps as raw
        text) is read as the HTML it holds."""
        if node.tag == "noframes":
            inner = LexborHTMLParser(node.text(deep=True)).body
            if inner is not None:
                self.render(inner)
            return
        source = (node.attributes.get("src") or "").strip()
        if source and not source.lower().startswith(("javascript:", "about:", "data:")):
            self._pending_links.append((source, node.attributes.get("title") or node.attributes.get("name") or ""))

    def _note_link(self, node: LexborNode) -> None:
        """A link's target and text; not a script (`javascript:`) nor the content itself (`data:`, a saved
        page's whole PDF in base64: 533 KB in one answer)."""
        href = (node.attributes.get("href") or "").strip()
        if href and not href.lower().startswith(("javascript:", "data:")):
            self._pending_links.append((href, node_text(node) or _image_text(node)))

    def _note_inner_links(self, node: LexborNode) -> None:
        """The links of a heading or a table row, which is written whole rather than walked; not a heading's
        permalink (Sphinx's `¶`, a `#`), which every heading of a generated manual has."""
        for link in node.css("a[href]"):
            text = node_text(link)
            if any(character.isalnum() for character in text) or not (link.attributes.get("href") or "").startswith("#"):
                self._note_link(link)

    def _place_links(self, line: int) -> None:
        self.links.extend((line, href, text) for href, text in self._pending_links)
        self._pending_links.clear()

    def _note_anchor(self, node: LexborNode) -> None:
        attributes = node.attributes
        for key in ("id", "name") if node.tag == "a" else ("id",):
            value = attributes.get(key)
            if value:
                self._pending_ids.append(value)

    def _note_inner_anchors(self, node: LexborNode) -> None:
        for inner in node.css("[id], a[name]"):
            anchor = inner.attributes.get("id") or inner.attributes.get("name")
            if anchor:
                self._pending_ids.append(anchor)

    def _write(self, line: str) -> None:
        self.builder.text(line)
        number = len(self.builder.lines)
        for anchor in self._pending_ids:
            self.anchors.setdefault(anchor, number)
        self._pending_ids.clear()
        self._place_links(number)

    def _flush(self) -> None:
        if not self._inline:
            return
        line = visible_words("".join(self._inline))
        self._inline.clear()
        if line:
            self._write(self._prefix + line)
            self._prefix = ""

    def _heading(self, node: LexborNode, level: int) -> None:
        title = _without_permalinks(node, node_text(node))
        if not title:
            return
        self._note_inner_anchors(node)
        self._note_inner_links(node)
        self.builder.blank()
        if self.emit_headings:
            self.builder.headings.append(Heading(level=level, title=title, line=self.builder.next_line))
        self.heading_lines.append((self.builder.next_line, title))
        self._write(title)
        self.builder.blank()

    def _preformatted(self, node: LexborNode) -> None:
        self.builder.blank()
        text = preformatted_text(node).strip("\n")
        for line in text.split("\n"):
            if line.strip():
                self._write(line.rstrip())
            else:
                self.builder.blank()
        self.builder.blank()

    def _table(self, node: LexborNode) -> None:
        self.builder.blank()
        for row in _table_rows(node):
            cells = [cell for cell in row.iter() if cell.tag in ("td", "th")]
            if len(cells) == 1 and cells[0].css_first("table") is not None:
                # a layout table framing another (ExifTool's tag tables): the cell is written as a block, so the
                # inner table's rows stay rows instead of one run-on line
                self.render(cells[0])
                continue
            self._note_inner_anchors(row)
            self._note_inner_links(row)
            if row.tag == "caption":
                caption = node_text(row)
                if caption:
                    self._write(caption)
                continue
            cells = [node_text(cell) for cell in cells]
            while cells and not cells[0]:
                cells.pop(0)  # layout cells (an admonition's icon) would start the row with " | "
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                self._write(" | ".join(cells))
        self.builder.blank()


def _image_text(link: LexborNode) -> str:
    """What a link made of a picture says: its images' alternative text (LaTeX2HTML's arrows, `next`)."""
    return " ".join(" ".join((image.attributes.get("alt") or "").split()) for image in link.css("img[alt]")).strip()


def _without_permalinks(heading: LexborNode, title: str) -> str:
    """A heading's text without the permalink marks a generator puts before or after it (`¶`, `#`, `§`: a
    link to the heading itself with no letter in it); a `#` of the title itself (`C#`) stays."""
    for link in heading.css("a[href]"):
        mark = node_text(link)
        if not mark or any(character.isalnum() for character in mark) or not (link.attributes.get("href") or "").startswith("#"):
            continue
        if title.endswith(mark):
            title = title[: -len(mark)].rstrip()
        elif title.startswith(mark):
            title = title[len(mark) :].lstrip()
    return title


def preformatted_text(node: LexborNode) -> str:
    """The text of a `<pre>` as shown: its copy buttons and other controls left out, and each of several
    `<code>` blocks side by side in it (Node's ES module and CommonJS versions of one example, of which
    the page shows one) on lines of its own."""
    parts: list[str] = []
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            parts.append(child.text_content or "")
        elif not _skipped(child, tag):
            if tag == "code" and parts and not parts[-1].endswith("\n"):
                parts.append("\n")
            parts.append(preformatted_text(child) if child.css_first("button, input, script, style, select") else child.text(deep=True))
    return "".join(parts).translate(_INVISIBLE)


def _table_rows(table: LexborNode) -> list[LexborNode]:
    """The caption and rows of `table` itself, not of tables nested in its cells."""
    rows: list[LexborNode] = []
    for child in table.iter():
        if child.tag in ("tr", "caption"):
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            rows.extend(row for row in child.iter() if row.tag == "tr")
    return rows
