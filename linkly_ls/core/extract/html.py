"""HTML pages: the main text as lines, h1-h6 as the outline.

Page chrome (scripts, navigation, site headers and footers, Wikipedia and
Sphinx/DocBook navigation) is removed first; the main content element is
preferred when the page marks one. Block elements become lines, tables become
`cell | cell` rows and `pre` keeps its lines. The EPUB extractor reuses
`parse_html`, `node_text` and `HtmlRenderer` for its chapters.
"""

from __future__ import annotations

import re
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Heading, LineBuilder, Link
from linkly_ls.core.extract.base import ExtractLimits, decode_text, read_bytes, title_from_path

_SKIP_TAGS = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "nav", "aside", "iframe",
     "object", "canvas", "head", "title", "meta", "link", "button", "select", "input", "textarea"}
)
_CHROME_SELECTORS = (
    "[role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=search], "
    ".mw-editsection, .mw-jump-link, #siteSub, #contentSub, .vector-page-toolbar, "
    ".vector-body-before-content, .vector-page-titlebar-toc, .vector-toc, .vector-menu, "
    ".vector-dropdown, .mw-indicators, #toc, .toc, .navbox, .navbox-styles, .printfooter, "
    "#catlinks, .catlinks, .noprint, sup.reference, .mw-cite-backlink, .navigation-not-searchable, "
    "a.headerlink, .docnav, .navheader, .navfooter, #banner, p#title, .sphinxsidebar, div.related, "
    ".skip-link, .skip-to-content, .breadcrumbs, .breadcrumb, .navbar, table.sidebar"
)
_CONTENT_SELECTORS = ("main", "[role=main]", "article", "#content", "#bodyContent")
_PARAGRAPH_TAGS = frozenset(
    {"p", "div", "section", "article", "main", "blockquote", "figure", "ul", "ol", "dl", "aside",
     "address", "details", "fieldset", "center", "hr", "form"}
)
_LINE_TAGS = frozenset({"li", "dt", "dd", "figcaption", "summary", "caption", "legend", "tr", "body", "html"})
_HEADING_TAGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCK_TAGS = _PARAGRAPH_TAGS | _LINE_TAGS | _HEADING_TAGS.keys() | {"pre", "table", "br"}
_WINDOWS_1252_LABELS = frozenset({"iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii"})
#: deeper nesting is refused: HTML parsers take time quadratic in the depth (100,000 levels: 15 s per MB)
MAX_NESTING = 5_000
_TAG = re.compile(r"<(/?)([A-Za-z][\w:-]*)[^<>]*?(/?)>")
#: elements without content or closed implicitly by the next sibling: they do not deepen the tree
_FLAT_TAGS = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track",
     "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead", "tbody", "tfoot",
     "colgroup", "rb", "rt", "rp", "html", "head", "body"}
)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)|<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)""", re.I)


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    tree = parse_html(read_bytes(path, limits))
    page_title = _title_element_text(tree)
    remove_chrome(tree)
    root = content_root(tree)
    builder = LineBuilder()
    renderer = HtmlRenderer(builder)
    if root is not None:
        renderer.render(root)
    lines, outline = builder.finish()
    title = _first_h1(builder.headings) or page_title or _first_heading(builder.headings) or title_from_path(path)
    return ExtractedDocument(
        lines=lines,
        title=title,
        doc_type="html",
        outline=outline,
        links=page_links(renderer, len(lines)),
        anchors={name: min(line, max(len(lines), 1)) for name, line in renderer.anchors.items()},
    )


def page_links(renderer: HtmlRenderer, total_lines: int) -> list[Link]:
    """The page's `<a href>` links; one to an anchor of the page itself knows its target line."""
    links: list[Link] = []
    for line, href, text in renderer.links:
        target_line = renderer.anchors.get(href[1:]) if href.startswith("#") else None
        links.append(
            Link(
                line=min(line, max(total_lines, 1)),
                target=href,
                text=text,
                kind="html",
                target_line=min(target_line, max(total_lines, 1)) if target_line else None,
            )
        )
    return links


def decode_html(data: bytes) -> str:
    """Decode with a BOM, else the declared charset, else by detection."""
    if not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        declared = _CHARSET.search(data[:4096])
        if declared:
            encoding = (declared.group(1) or declared.group(2)).decode("ascii", "replace").lower()
            if encoding in _WINDOWS_1252_LABELS:
                encoding = "cp1252"  # as browsers do: these labels all mean windows-1252
            try:
                return data.decode(encoding).replace("\r\n", "\n")
            except (LookupError, UnicodeDecodeError):
                pass
    return decode_text(data)[0]


def parse_html(data: bytes | str) -> LexborHTMLParser:
    text = decode_html(data) if isinstance(data, bytes) else data
    depth = nesting_depth(text, MAX_NESTING)
    if depth > MAX_NESTING:
        raise ExtractionError(
            f"HTML nests elements more than {MAX_NESTING:,} levels deep; not parsed (that would take minutes)"
        )
    return LexborHTMLParser(text)


def nesting_depth(text: str, stop_above: int) -> int:
    """How deep the tags nest, counting only elements that need an end tag (stops once past `stop_above`).

    A linear scan of the tags, not a parse: enough to tell a hostile file from a real page.
    """
    depth = deepest = 0
    for match in _TAG.finditer(text):
        closing, name, self_closing = match.groups()
        if self_closing or name.lower() in _FLAT_TAGS:
            continue
        if closing:
            depth = max(depth - 1, 0)
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > stop_above:
                break
    return deepest


def remove_chrome(tree: LexborHTMLParser) -> None:
    """Drop navigation and site furniture; header/footer only outside the article itself."""
    for node in tree.css(_CHROME_SELECTORS):
        node.decompose()
    for node in tree.css("header, footer"):
        if not _has_ancestor(node, {"article", "main"}):
            node.decompose()


def content_root(tree: LexborHTMLParser) -> LexborNode | None:
    """The element holding the page's main text: <main>, [role=main], a single <article>, ... or <body>."""
    body = tree.body or tree.root
    if body is None:
        return None
    body_chars = len(body.text(deep=True, strip=True))
    for selector in _CONTENT_SELECTORS:
        found = tree.css(selector)
        if len(found) != 1:
            continue
        if len(found[0].text(deep=True, strip=True)) >= 0.2 * body_chars:
            return found[0]
    return body


def _first_h1(headings: list[Heading]) -> str | None:
    title = next((heading.title for heading in headings if heading.level == 1), None)
    return title if title and len(title) <= 200 else None


def _first_heading(headings: list[Heading]) -> str | None:
    return headings[0].title if headings and len(headings[0].title) <= 200 else None


def _title_element_text(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first("title")
    text = " ".join(node.text(deep=True).split()) if node is not None else ""
    return text or None


def _has_ancestor(node: LexborNode, tags: set[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False


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
        if tag == "br" or tag in _PARAGRAPH_TAGS or tag in _LINE_TAGS or tag in ("td", "th"):
            parts.append(" ")
        stack.extend(reversed(list(current.iter(include_text=True))))
    return " ".join("".join(parts).split())


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

    def render(self, root: LexborNode) -> None:
        stack: list[tuple[LexborNode, bool]] = [(root, False)]
        while stack:
            node, leaving = stack.pop()
            tag = node.tag
            if leaving:
                self._flush()
                if tag in _PARAGRAPH_TAGS:
                    self.builder.blank()
                continue
            if tag == "-text":
                self._inline.append(node.text_content or "")
                continue
            if _skipped(node, tag):
                continue
            if tag in _BLOCK_TAGS:
                self._flush()  # text before a block is a line of its own, before the block's anchor
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
                        self._prefix = "- "
                    stack.append((node, True))
                stack.extend((child, False) for child in reversed(list(node.iter(include_text=True))))
        self._flush()
        for anchor in self._pending_ids:
            self.anchors.setdefault(anchor, max(len(self.builder.lines), 1))
        self._pending_ids.clear()
        self._place_links(max(len(self.builder.lines), 1))

    def _note_link(self, node: LexborNode) -> None:
        href = (node.attributes.get("href") or "").strip()
        if href and not href.lower().startswith("javascript:"):
            self._pending_links.append((href, node_text(node)))

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
        line = " ".join("".join(self._inline).split())
        self._inline.clear()
        if line:
            self._write(self._prefix + line)
            self._prefix = ""

    def _heading(self, node: LexborNode, level: int) -> None:
        title = node_text(node)
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
        text = node.text(deep=True).strip("\n")
        for line in text.split("\n"):
            if line.strip():
                self._write(line.rstrip())
            else:
                self.builder.blank()
        self.builder.blank()

    def _table(self, node: LexborNode) -> None:
        self.builder.blank()
        for row in _table_rows(node):
            self._note_inner_anchors(row)
            self._note_inner_links(row)
            if row.tag == "caption":
                caption = node_text(row)
                if caption:
                    self._write(caption)
                continue
            cells = [node_text(cell) for cell in row.iter() if cell.tag in ("td", "th")]
            while cells and not cells[0]:
                cells.pop(0)  # layout cells (an admonition's icon) would start the row with " | "
            while cells and not cells[-1]:
                cells.pop()
            if cells:
                self._write(" | ".join(cells))
        self.builder.blank()


def _table_rows(table: LexborNode) -> list[LexborNode]:
    """The caption and rows of `table` itself, not of tables nested in its cells."""
    rows: list[LexborNode] = []
    for child in table.iter():
        if child.tag in ("tr", "caption"):
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            rows.extend(row for row in child.iter() if row.tag == "tr")
    return rows
