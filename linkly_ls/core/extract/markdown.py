"""Markdown and MDX: the file's own lines, with front matter and MDX/JSX scaffolding blanked.

Line N of the document is line N of the file, so `read`, `grep` and outline
ranges point where an editor does. Scaffolding is blanked, never removed:
front matter keeps only its `title` and `description` values, and in MDX
`import`/`export` statements and component tags (`<Tabs>`, `<Card title="x">`)
become empty while the text between them stays; a tag's title/caption/label
attribute is kept, since it is text a reader sees. Headings (ATX and setext,
found by pulldown-cmark through pyromark) give the outline, with inline markup
removed from titles.
Links come from the file's own lines (`markdown_links.py`).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path

import pyromark

from linkly_ls.core.document import ExtractedDocument, Heading, OutlineNode, build_outline
from linkly_ls.core.extract.base import ExtractLimits, decode_text, read_bytes, title_from_path
from linkly_ls.core.extract.front_matter import front_matter_aliases, front_matter_lines, parse_front_matter
from linkly_ls.core.extract.markdown_links import find_links

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_ATTRIBUTES = r"""(?:\s+(?:"[^"]*"|'[^']*'|\{[^{}]*\}|[^<>{}"'])*?)?"""
_COMPONENT_TAG = re.compile(r"</?[A-Z][\w.]*" + _ATTRIBUTES + r"/?>")
_FRAGMENT_TAG = re.compile(r"</?>")
_ANY_TAG = re.compile(r"</?[a-zA-Z][\w.:-]*" + _ATTRIBUTES + r"/?>")
_HTML_COMMENT = re.compile(r"<!--.*?-->")
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}")
_TEXT_ATTRIBUTE = re.compile(r"""\b(?:title|caption|label)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
#: an admonition's fence, `:::tip[Title]` (Astro, Docusaurus 3) or `:::warning Title` (Docusaurus 2): its title kept
_ASIDE = re.compile(r"^\s*:::\s*([\w-]*)\s*(?:\[(.*)\]|(?<=[\w-])\s+([^\[\s].*?))?\s*$")
_IMPORT = re.compile(r"^import\s")
#: a whole ES module import on one line, which a `.md` file holds where its site reads it as MDX (Docusaurus)
_ESM_IMPORT = re.compile(r"""^import\s+[\w{}\s,*]+\s+from\s+['"][^'"]+['"];?\s*$""")
_EXPORT = re.compile(r"^export\s")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_CODE_OR_TAG = re.compile(r"[`<]")
#: a JSX element whose props run over several lines (prettier writes one with three or more so), and the
#: end of its opening tag: a `>` that no `=` precedes (`onClick={() => go()}` is not one)
_TAG_OPENING = re.compile(r"^\s*<[A-Za-z][\w.:-]*(?:\s|$)")
_TAG_END = re.compile(r"(?<!=)>")
#: where a construct that spans lines ends: a multi-line opening tag, a multi-line `{/* ... */}` comment
_MULTILINE_ENDS = {"tag": _TAG_END, "mdx_comment": re.compile(r"\*/\}")}
_ID_ATTRIBUTE = re.compile(r"""\s(?:id|name)\s*=\s*(?:"([^"]+)"|'([^']+)')""")
_LISTED_ID = re.compile(r"(?:^|[\s{:])#([^\s{}]+)")
#: a heading's attribute list, left out of its title: `{#id}` (Pandoc, kramdown, Docusaurus), and MkDocs'
#: attr_list `{ #id }`, `{: #id .class }`, `{: .class }`, with `key="value"` pairs (Material's `data-toc-label`)
_HEADING_ID = re.compile(r"\s*\{:?\s*[#.][^{}]*\}\s*$")


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    text, _encoding = decode_text(read_bytes(path, limits))
    source = text.split("\n")
    if source and source[-1] == "":
        source.pop()
    fields, body_start = parse_front_matter(source)
    front = front_matter_lines(source, body_start)
    body = clean_mdx_lines(source[body_start:], is_mdx=path.suffix.lower() == ".mdx")
    warnings: list[str] = []
    try:
        headings = find_headings(body)
    except HeadingsUnreadable as error:
        headings = {}
        warnings.append(f"headings could not be read, so the document has no outline ({error})")
    lines = [line.rstrip() for line in front + body]
    outline = _outline(headings, body_start, len(lines))

    title = fields.get("title", "").strip()
    if not title:
        ordered = [headings[start] for start in sorted(headings)]
        first_h1 = next((found[1] for found in ordered if found[0] == 1), "")
        title = first_h1 or (ordered[0][1] if ordered else "") or title_from_path(path)
    # Obsidian's properties link notes too (`up: "[[Index]]"`): the front matter's wikilinks, on their lines
    front_links = [link for link in find_links(source[1 : max(body_start - 1, 1)], first_line=2) if link.kind == "wiki"]
    links = front_links + find_links(source[body_start:], first_line=body_start + 1)
    aliases = front_matter_aliases(source[:body_start])
    return ExtractedDocument(
        lines=lines, title=title, doc_type="md", outline=outline, links=links, warnings=warnings, aliases=aliases,
        anchors=explicit_anchors(source, body_start),
    )


def explicit_anchors(source: list[str], body_start: int) -> dict[str, int]:
    """id -> 1-based line of each anchor the note's text sets outside code: an HTML element's `id` or
    `name` (`<a name="LEGACY_OPTION"></a>`, whose tag the indexed line no longer holds) and a heading's
    attribute list (`{#id}`, `{: #id .class }`)."""
    anchors: dict[str, int] = {}
    fence: str | None = None
    for number, line in enumerate(source[body_start:], start=body_start + 1):
        if fence is not None:
            if _closes(fence, line):
                fence = None
            continue
        if ("`" in line or "~" in line) and (opening := _FENCE.match(line)):
            fence = opening.group(1)
            continue
        if "=" in line and "<" in line:
            for tag in _ANY_TAG.finditer(line):
                for found in _ID_ATTRIBUTE.finditer(tag.group(0)):
                    anchors.setdefault(found.group(1) or found.group(2), number)
        if "{" in line and (listed := _HEADING_ID.search(line)):
            for found in _LISTED_ID.finditer(listed.group(0)):
                anchors.setdefault(found.group(1), number)
    return anchors


def outline_of(source: list[str], is_mdx: bool = False) -> list[OutlineNode]:
    """The outline `extract` finds, of Markdown lines that are not on disk (an editor's unsaved buffer)."""
    _, body_start = parse_front_matter(source)
    try:
        headings = find_headings(clean_mdx_lines(source[body_start:], is_mdx))
    except HeadingsUnreadable:
        return []
    return _outline(headings, body_start, len(source))


def _outline(headings: dict[int, tuple[int, str, int]], body_start: int, line_count: int) -> list[OutlineNode]:
    return build_outline(
        [Heading(level=level, title=title, line=body_start + start + 1) for start, (level, title, _) in sorted(headings.items())],
        line_count,
    )


def clean_mdx_lines(lines: list[str], is_mdx: bool) -> list[str]:
    """Blank out scaffolding lines (one output line per input line, so positions still match).

    Code stays as written: fenced blocks, code spans, and in Markdown an indented block (4 spaces or a tab
    after a blank line, outside an HTML block); its tags were taken for markup (`<groupId>` of a Maven
    example read as an empty line). In MDX an indented line is JSX inside a component, and is cleaned.
    """
    cleaned: list[str] = []
    fence: str | None = None
    skip_until: str | None = None
    after_blank, in_html_block, in_indented_code = True, False, False
    for line in lines:
        blank = not line.strip()
        if not is_mdx and fence is None and skip_until is None:
            indented = line.startswith(("    ", "\t"))
            in_indented_code = (in_indented_code and (blank or indented)) or (indented and after_blank and not in_html_block)
            in_html_block = not blank and (in_html_block or line.startswith("<"))
            after_blank = blank
            if in_indented_code:
                cleaned.append(line.rstrip())
                continue
        if fence is not None:
            cleaned.append(line)
            if _closes(fence, line):
                fence = None
            continue
        if skip_until is not None:
            if skip_until == "comment" and "-->" in line:
                cleaned.append(_clean_line(line[line.index("-->") + 3 :]))
                skip_until = None
                continue
            if skip_until in _MULTILINE_ENDS:
                end = _MULTILINE_ENDS[skip_until].search(line)
                cleaned.append("" if end is None else _clean_line(line[end.end() :]))
                skip_until = skip_until if end is None else None
                continue
            cleaned.append("")
            if _statement_ends(line, skip_until):
                skip_until = None
            continue
        opening = _FENCE.match(line) if "`" in line or "~" in line else None
        if opening:
            fence = opening.group(1)
            cleaned.append(line)
            continue
        if (is_mdx and (_IMPORT.match(line) or _EXPORT.match(line))) or (not is_mdx and _ESM_IMPORT.match(line)):
            cleaned.append("")
            if not _statement_ends(line, "import" if line.startswith("import") else "export"):
                skip_until = "import" if line.startswith("import") else "export"
            continue
        if is_mdx and _TAG_OPENING.match(line) and not _TAG_END.search(line):  # `<Card` with props on the next lines
            cleaned.append("")
            skip_until = "tag"
            continue
        if is_mdx and "{/*" in line and "*/}" not in line[line.index("{/*") :]:
            cleaned.append(_clean_line(line[: line.index("{/*")]))
            skip_until = "mdx_comment"
            continue
        if "<!--" in line and "-->" not in line:
            cleaned.append(line[: line.index("<!--")].rstrip())
            skip_until = "comment"
            continue
        cleaned.append(_clean_line(line))
    return cleaned


def _closes(fence: str, line: str) -> bool:
    """Whether `line` closes a code block opened by `fence` (its run of backticks or tildes, alone on the line)."""
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped[len(fence) :].strip()


def _statement_ends(line: str, kind: str) -> bool:
    stripped = line.rstrip()
    if kind == "comment":
        return "-->" in line
    if kind == "import":
        return bool(re.search(r"""(from\s*['"][^'"]*['"]|^import\s*['"][^'"]*['"])\s*;?$""", stripped))
    return stripped.endswith((";", "}", ")", "]")) or not stripped


def _clean_line(line: str) -> str:
    if "<" not in line and "{" not in line and ":::" not in line and "&" not in line:
        return line.rstrip()  # no comment, tag, aside or entity: most lines
    aside = _ASIDE.match(line)
    if aside:
        return aside.group(2) or aside.group(3) or ""
    block_line = line.lstrip().startswith("<") and not line.lstrip().startswith("<http")
    tags = _ANY_TAG if block_line else _COMPONENT_TAG  # a block-level tag line holds HTML; others JSX components
    parts = []
    position = 0
    for code in _code_spans_outside_tags(line, tags):
        parts.append(_strip_markup(line[position : code.start()], tags))
        parts.append(code.group(0))
        position = code.end()
    parts.append(_strip_markup(line[position:], tags))
    result = "".join(parts).rstrip()
    return result if result.strip() else ""


def _code_spans_outside_tags(line: str, tags: re.Pattern[str]) -> Iterator[re.Match[str]]:
    """The line's code spans, read left to right past its tags: backticks in a tag's attribute
    (`<Tab label="`x`">`) open no span, and a span's own tags (`[`<Image />`](...)` after a `<ReadMore>`
    that opens the line) are code, kept as written."""
    position = 0
    while (start := _CODE_OR_TAG.search(line, position)) is not None:
        at = start.start()
        found = (tags.match(line, at) or _HTML_COMMENT.match(line, at)) if line[at] == "<" else _CODE_SPAN.match(line, at)
        if found is None:
            position = at + 1
            continue
        if line[at] == "`":
            yield found
        position = found.end()


def _strip_markup(segment: str, tags: re.Pattern[str]) -> str:
    """Remove comments and `tags` from a piece of a line; a component's title/caption/label stays as text,
    and an entity reads as its character (`&nbsp;` was searched and shown as such)."""
    segment = _HTML_COMMENT.sub("", segment)
    segment = _MDX_COMMENT.sub("", segment)
    segment = tags.sub(_component_text, segment)
    segment = _FRAGMENT_TAG.sub("", segment)
    return html.unescape(segment) if "&" in segment else segment


def _component_text(match: re.Match[str]) -> str:
    tag = match.group(0)
    if tag.startswith("</") or not tag[1].isupper():
        return ""
    attribute = _TEXT_ATTRIBUTE.search(tag)
    if attribute is None:
        return ""
    return attribute.group(1) if attribute.group(1) is not None else attribute.group(2)


_WIKILINK_SHOWN = re.compile(r"!?\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|([^\[\]]*))?\]\]")


def _shown_wikilink(match: re.Match[str]) -> str:
    name, heading, label = match.group(1).strip(), (match.group(2) or "").strip(), (match.group(3) or "").strip()
    return label or (f"{name} > {heading}" if name and heading else name or heading)


def find_headings(lines: list[str]) -> dict[int, tuple[int, str, int]]:
    """Map the 0-based line where each heading starts to (level, plain title, end line exclusive).

    CommonMark's headings as pulldown-cmark reads them (pyromark's events, each with its place in
    the UTF-8 text), about three times faster than markdown-it-py's block parse alone and with the
    same headings, levels, titles and ends on 3,993 Markdown files of npm and Python packages and
    of documentation sets. A title keeps its text and code, a line break as a space, and neither
    markup nor inline HTML. Raises `HeadingsUnreadable` if the parser fails (a Rust panic is a
    `BaseException`, which would otherwise pass every handler between here and the indexer).
    """
    text = "\n".join(lines)
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an editor's buffer can hold one): "?" in its place
        text = text.encode("utf-8", "replace").decode("utf-8")
        data = text.encode("utf-8")
    headings: dict[int, tuple[int, str, int]] = {}
    line = offset = 0  # the line of byte `offset`
    level = start_line = 0
    title: list[str] | None = None
    try:
        for event, span in pyromark.events_with_range(text):
            if title is None:
                opened = event.get("Start") if type(event) is dict else None
                if type(opened) is dict and "Heading" in opened:
                    line += data.count(b"\n", offset, span["start"])
                    offset = span["start"]
                    level, start_line, title = int(opened["Heading"]["level"][1:]), line, []
            elif type(event) is dict:
                if "Text" in event or "Code" in event:
                    title.append(event.get("Text") or event.get("Code") or "")
                elif "End" in event and type(event["End"]) is dict and "Heading" in event["End"]:
                    last = max(span["start"], span["end"] - 1)
                    line += data.count(b"\n", offset, last)
                    offset = last
                    plain = " ".join(_HEADING_ID.sub("", "".join(title)).split())
                    if "[[" in plain:  # a wikilink reads as Obsidian shows it: its label, else its name
                        plain = _WIKILINK_SHOWN.sub(_shown_wikilink, plain)
                    if plain:
                        headings[start_line] = (level, plain, line + 1)
                    title = None
            elif event in ("SoftBreak", "HardBreak"):
                title.append(" ")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # noqa: BLE001 - pyo3 raises a Rust panic as a BaseException
        raise HeadingsUnreadable(f"{type(error).__name__}: {error}") from None
    return headings


class HeadingsUnreadable(Exception):
    """The Markdown parser failed on this text: the document is read without an outline."""
