"""The links of a Markdown/MDX file, with their line and columns in the file.

Found per line with patterns, not by a Markdown parser, because a parser's
inline tokens carry no column: inline links `[t](target "title")` and
`[t](<with spaces.md>)`, reference links `[t][ref]`, `[t][]` and `[ref]` (when
a definition `[ref]: target` exists), autolinks `<https://…>`, wikilinks
`[[name]]`, `[[name#heading|label]]` (and `![[embeds]]`), and HTML `<a href>`.
Fenced and indented code, inline code spans and HTML comments hold no links.
Images (`![alt](x.png)`) and footnotes (`[^1]`, `[^1]: text`) are not links.
"""

from __future__ import annotations

import re

from linkly_ls.core.document import Link

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")
_COMMENT = re.compile(r"<!--.*?-->|%%.*?%%")
_ESCAPED = re.compile(r"\\[\[\]]")
_WIKILINK = re.compile(r"!?\[\[([^\[\]|#\n]*)(#[^\[\]|\n]*)?(?:\|([^\[\]\n]*))?\]\]")
#: `[text](target)`: the text may hold one level of brackets; the target is `<…>` or has balanced parentheses
_INLINE = re.compile(
    r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*(<[^<>\n]*>|(?:[^\s()]|\([^\s()]*\))*)(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^()]*\)))?\s*\)"
)
#: `[text][label]` and `[text][]` may be followed by anything; a shortcut `[label]` not by `(`, `[` or `:`
_REFERENCE = re.compile(r"(?<!\])(!?)\[((?:[^\[\]]|\[[^\[\]]*\])+)\](?:\[([^\[\]]*)\]|(?![(:\[]))")
#: `[label]: target`; a label starting with `^` is a footnote (`[^1]: text`), not a link definition
_DEFINITION = re.compile(r"^\s{0,3}\[([^\[\]^][^\[\]]*)\]:\s*(<[^<>]*>|\S+)")
_AUTOLINK = re.compile(r"<((?:[a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*)|(?:[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+))>")
_ANCHOR = re.compile(r"""<a\s(?:[^<>]*?\s)?href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))[^<>]*>(.*?)(?:</a>|$)""", re.I)
_TAG = re.compile(r"<[^<>]*>")
#: emphasis and code markup in a link text; an underscore inside a word (`snake_case`) is not emphasis
_EMPHASIS = re.compile(r"[*`]+|(?<!\w)_+|_+(?!\w)")


def find_links(lines: list[str], first_line: int = 1) -> list[Link]:
    """Every link of `lines` (the file's lines from `first_line`), in document order."""
    code = _code_lines(lines) | _comment_lines(lines)
    definitions = _definitions(lines, code)
    links: list[Link] = []
    for index, line in enumerate(lines):
        if index in code or ("[" not in line and "<" not in line):
            continue  # every kind of link starts with `[` or `<`
        number = first_line + index
        if "]:" in line and _DEFINITION.match(line):
            continue  # a definition is where a reference link points, not a link of its own
        links.extend(_line_links(_mask(line), line, number, definitions))
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if "[" in line and "]" in following and index + 1 not in code and following.strip():
            links.extend(_broken_across(line, following, number, definitions))
    return links


def _broken_across(line: str, following: str, number: int, definitions: dict[str, str]) -> list[Link]:
    """Links whose text wraps onto the next line: they stand on their first line, up to its end."""
    joined = line + "\n" + following
    spanning = [
        link
        for link in _line_links(_mask(line) + "\n" + _mask(following), joined, number, definitions)
        if link.start < len(line) < link.end
    ]
    for link in spanning:
        link.end = len(line)
    return spanning


def _line_links(masked: str, line: str, number: int, definitions: dict[str, str]) -> list[Link]:
    found: list[Link] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return all(end <= a or start >= b for a, b in taken)

    def add(link: Link) -> None:
        found.append(link)
        taken.append((link.start, link.end))

    for match in _WIKILINK.finditer(masked) if "[[" in masked else ():
        name = line[match.start(1) : match.end(1)].strip()
        heading = line[match.start(2) : match.end(2)] if match.group(2) else ""
        label = line[match.start(3) : match.end(3)].strip() if match.group(3) is not None else ""
        if name or heading:
            add(Link(number, name + heading, label or name + heading, "wiki", match.start(), match.end()))
    for match in _INLINE.finditer(masked) if "](" in masked else ():
        if not free(match.start(), match.end()):
            continue
        if match.group(1):  # an image; a link inside its alt text stays possible
            taken.append((match.start(), match.end()))
            continue
        target = line[match.start(3) : match.end(3)].strip()
        if target.startswith("<") and target.endswith(">"):
            target = target[1:-1].strip()
        add(Link(number, target, _plain(line[match.start(2) : match.end(2)]), "inline", match.start(), match.end()))
    for match in _REFERENCE.finditer(masked) if definitions else ():  # a reference needs a definition
        if match.group(1) or not free(match.start(), match.end()):
            continue
        text = line[match.start(2) : match.end(2)]
        label = match.group(3) if match.group(3) else text
        target = definitions.get(_label_key(line[match.start(3) : match.end(3)] if match.group(3) else label))
        if target is not None:
            add(Link(number, target, _plain(text), "reference", match.start(), match.end()))
    angled = "<" in masked
    for match in _AUTOLINK.finditer(masked) if angled else ():
        if free(match.start(), match.end()):
            target = match.group(1)
            if "@" in target and ":" not in target:
                target = "mailto:" + target
            add(Link(number, target, match.group(1), "autolink", match.start(), match.end()))
    for match in _ANCHOR.finditer(masked) if angled else ():
        if free(match.start(), match.end()):
            target = next(group for group in match.groups()[:3] if group is not None)
            add(Link(number, target.strip(), _plain(_TAG.sub("", match.group(4))), "html", match.start(), match.end()))
    found.sort(key=lambda link: link.start)
    return found


def _code_lines(lines: list[str]) -> set[int]:
    """Indexes of lines inside fenced code blocks (fences included) or indented code blocks."""
    code: set[int] = set()
    fence: str | None = None
    previous_blank = True
    for index, line in enumerate(lines):
        if fence is not None:
            code.add(index)
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped[len(fence) :].strip():
                fence = None
            continue
        opening = _FENCE.match(line) if "`" in line or "~" in line else None
        if opening:
            fence = opening.group(1)[0] * len(opening.group(1))
            code.add(index)
            continue
        blank = not line.strip()
        if previous_blank and not blank and (line.startswith("    ") or line.startswith("\t")):
            if not line.lstrip().startswith(("-", "*", "+")) and not re.match(r"\s*\d+[.)]\s", line):
                code.add(index)
                continue
        previous_blank = blank
    return code


def _comment_lines(lines: list[str]) -> set[int]:
    """Indexes of lines inside an Obsidian comment (`%%` ... `%%`) that spans lines: what it holds is no
    link (a comment within one line is masked by `_mask`)."""
    inside: set[int] = set()
    opened: int | None = None
    for index, line in enumerate(lines):
        if line.count("%%") % 2 == 0:
            continue
        if opened is None:
            opened = index
        else:  # the lines from the one that opens it to the one that closes it (their text outside is rare)
            inside.update(range(opened, index + 1))
            opened = None
    return inside  # a `%%` never closed (`50%% off`) hides nothing


def _definitions(lines: list[str], code: set[int]) -> dict[str, str]:
    definitions: dict[str, str] = {}
    for index, line in enumerate(lines):
        if "]:" not in line or index in code:
            continue
        match = _DEFINITION.match(line)
        if match:
            target = match.group(2)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            definitions.setdefault(_label_key(match.group(1)), target.strip())
    return definitions


def _label_key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _mask(line: str) -> str:
    """The line with code spans, HTML and Obsidian (`%% %%`) comments and escaped brackets (`\\[`) blanked.

    Same length, so columns still match. An escaped bracket is a literal one: it
    neither opens nor closes a link (`\\[0, [max][]]` holds the link `[max][]`).
    """
    masked = _CODE_SPAN.sub(lambda match: " " * len(match.group(0)), line)
    masked = _COMMENT.sub(lambda match: " " * len(match.group(0)), masked)
    return _ESCAPED.sub("  ", masked) if "\\" in masked else masked


def _plain(text: str) -> str:
    """A link text without emphasis, code or image markup."""
    text = re.sub(r"!?\[([^\[\]]*)\]\([^()]*\)", r"\1", text)
    return " ".join(_EMPHASIS.sub("", text).split())
