"""HTML pages: the main text as lines, h1-h6 as the outline.

Page chrome (scripts, navigation, site headers and footers, Wikipedia and
Sphinx/DocBook navigation) is removed first; the main content element is
preferred when the page marks one; `html_render.HtmlRenderer` writes it as
lines. The EPUB extractor reuses `parse_html` for its chapters.
"""

from __future__ import annotations

import re
from pathlib import Path

from selectolax.lexbor import LexborHTMLParser, LexborNode

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Heading, LineBuilder, Link
from linkly_ls.core.extract.base import ExtractLimits, decode_text, read_bytes, title_from_path
from linkly_ls.core.extract.html_render import HtmlRenderer, node_text, visible_words

_CHROME_SELECTORS = (
    "[role=navigation], [role=banner], [role=contentinfo], [role=complementary], [role=search], "
    ".mw-editsection, .mw-jump-link, #siteSub, #contentSub, .vector-page-toolbar, "
    ".vector-body-before-content, .vector-page-titlebar-toc, .vector-toc, .vector-menu, "
    ".vector-dropdown, .mw-indicators, #toc, .toc, .navbox, .navbox-styles, .printfooter, "
    "#catlinks, .catlinks, .noprint, sup.reference, .mw-cite-backlink, .navigation-not-searchable, "
    "a.headerlink, .docnav, .navheader, .navfooter, #banner, p#title, .sphinxsidebar, div.related, "
    ".skip-link, .skip-to-content, .breadcrumbs, .breadcrumb, .navbar, table.sidebar, "
    # LaTeX2HTML's panels; heading and definition permalinks (Node's `#` and `[src]`, Texinfo's `¶`); code
    # blocks' copy buttons
    "div.navigation, a.mark, a.srclink, a.copiable-anchor, a.copiable-link, a.anchor-link, a.anchorjs-link, "
    "a.heading-anchor, a.hash-link, .copy-button, .clipboard-button"
)
#: panels that may hold a page's own header (its title) elsewhere, chrome only when they link to the pages
#: around it: Texinfo's `Next: … Previous: … Up: …` bar, at the top and bottom of every page it writes
_NEIGHBOUR_PANELS = "div.header, div.nav-panel, table.navigation"
_NEIGHBOUR_LINKS = "a[rel=next], a[rel=prev], a[rel=previous], a[rel=up], a[accesskey=n], a[accesskey=p]"
#: a first <h1> that names a part of the page, not the page: the `<title>` says more (pod2html's `NAME`)
_GENERIC_H1 = re.compile(r"^(name|contents|table of contents|index|overview|synopsis|description|introduction)$", re.I)
_CONTENT_SELECTORS = ("main", "[role=main]", "article", "#content", "#bodyContent")
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
_REFRESH_URL = re.compile(r"^\s*\d*\s*[;,]\s*url\s*=\s*(.+)$", re.I)
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([\w.:-]+)|<\?xml[^>]+encoding\s*=\s*["']([\w.:-]+)""", re.I)


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    tree = parse_html(read_bytes(path, limits))
    page_title = _title_element_text(tree)
    redirect = _redirect_target(tree)
    remove_chrome(tree)
    root = content_root(tree)
    builder = LineBuilder()
    renderer = HtmlRenderer(builder)
    if root is not None:
        renderer.render(root)
    lines, outline = builder.finish()
    first_h1 = _first_h1(builder.headings)
    if first_h1 and page_title and _GENERIC_H1.match(first_h1):
        first_h1 = None
    if first_h1 and page_title:
        first_h1, page_title = _without_site_name(first_h1, page_title)
    title = first_h1 or page_title or _first_heading(builder.headings) or title_from_path(path)
    return ExtractedDocument(
        lines=lines,
        title=title,
        doc_type="html",
        outline=outline,
        links=([Link(line=1, target=redirect, text="redirect", kind="html")] if redirect else []) + page_links(renderer, len(lines)),
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
    for node in tree.css(_NEIGHBOUR_PANELS):
        if node.css_first(_NEIGHBOUR_LINKS) is not None:
            node.decompose()
    for node in tree.css("header, footer"):
        if not _has_ancestor(node, {"article", "main"}):
            node.decompose()


def content_root(tree: LexborHTMLParser) -> LexborNode | None:
    """The element holding the page's main text: <main>, [role=main], a single <article>, ... or <body>."""
    body = tree.body or tree.root
    if body is None:
        return None
    body_chars = len(node_text(body))  # without the navigation and sidebars left out of the text anyway
    for selector in _CONTENT_SELECTORS:
        found = tree.css(selector)
        if len(found) != 1:
            continue
        if len(node_text(found[0])) >= 0.2 * body_chars:
            return found[0]
    return body


def _without_site_name(first_h1: str, page_title: str) -> tuple[str | None, str]:
    """(None, the headline) when the first `<h1>` is a site's logo naming the site, as the `<title>` ends
    with it (`<h1><a href="/">Bayport Gazette</a></h1>`, `<title>Port audit ordered | Bayport
    Gazette</title>`): every article saved from that site was titled by its name. Else both as given (an
    `<h1>` the title starts with is the page's own name: `Microsoft - Wikipedia`)."""
    parts = [part.strip() for part in _TITLE_SEPARATOR.split(page_title) if part.strip()]
    if len(parts) < 2 or first_h1.casefold() != parts[-1].casefold():
        return first_h1, page_title
    return None, " - ".join(parts[:-1])


#: what sets a site's name apart in a page's `<title>`: ` | `, ` - `, ` – `, ` — `, ` · `, ` :: `
_TITLE_SEPARATOR = re.compile(r"\s+(?:\||-|–|—|·|::)\s+")


def _first_h1(headings: list[Heading]) -> str | None:
    title = next((heading.title for heading in headings if heading.level == 1), None)
    return title if title and len(title) <= 200 else None


def _first_heading(headings: list[Heading]) -> str | None:
    return headings[0].title if headings and len(headings[0].title) <= 200 else None


def _redirect_target(tree: LexborHTMLParser) -> str | None:
    """Where a page that sends its reader on at once goes (`<meta http-equiv="refresh" content="0;
    URL=ch18-00-oop.html">`, the stubs a renamed chapter leaves): a link of the page."""
    for meta in tree.css("meta[http-equiv]"):
        if (meta.attributes.get("http-equiv") or "").strip().lower() != "refresh":
            continue
        found = _REFRESH_URL.search(meta.attributes.get("content") or "")
        if found:
            return found.group(1).strip().strip("'\"") or None
    return None


def _title_element_text(tree: LexborHTMLParser) -> str | None:
    node = tree.css_first("title")
    text = visible_words(node.text(deep=True)) if node is not None else ""
    return text or None


def _has_ancestor(node: LexborNode, tags: set[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False
