"""Plain text: any encoding, the file's own lines, form feeds as page starts, an outline only where headings are clear.

Heading rules are deliberately conservative (a wrong outline is worse than
none): numbered section lines as in RFCs (`4.2.1.  Reading the Handshake`),
Chinese chapter lines (`第 1 章 ...`), lines underlined with `===`/`---`, and
column-0 section names (`NAME`, `Abstract`) in documents whose body text is
indented, like man pages and RFCs.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from linkly_ls.core.document import ExtractedDocument, Heading, build_outline
from linkly_ls.core.extract.base import ExtractLimits, decode_text, read_bytes, title_from_path
from linkly_ls.core.extract.front_matter import parse_front_matter

#: a numbered heading: `5.21. watch`, `3 Terminology`; a subsection's name may start with a number
#: (`10.3.5 304 Not Modified`, RFC 2616's status codes)
_NUMBERED = re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,5})(\.?)\s+((?:\d{1,4}\s+)?[^\W\d_].*)$")
_CHAPTER = re.compile(r"^(?:第\s*\d+\s*[章部]|Chapter\s+\d+\b|CHAPTER\s+[\dIVXLC]+\b|Appendix\s+[A-Z]\b)")
_UNDERLINE = re.compile(r"^\s*([=\-~^*#+])\1{2,}\s*$")
_WIDE_GAP = re.compile(r"\S {4,}\S")
_MAN_HEADER = re.compile(r"^([A-Za-z0-9_.:+-]+\(\w+\))\s{2,}.*\s\1\s*$")
_SECTION_WORD = re.compile(r"^[^\W\d_][^\W\d_'’-]*$")
_DOT_LEADER = re.compile(r"(\.\s?){4,}\s*\d*\s*$")

MAX_HEADING_CHARS = 80
#: longest first line taken as a title when a blank line sets it apart (titles of papers run long)
MAX_TITLE_PARAGRAPH_CHARS = 300
_SENTENCE_BREAK = re.compile(r"[.!?]\s+[A-Z]")


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    """Line N of the document is line N of the file; a form feed starts a page at its line."""
    text, _encoding = decode_text(read_bytes(path, limits))
    source_lines = text.split("\n")
    if source_lines and source_lines[-1] == "":
        source_lines.pop()
    page_starts: list[int] = []
    for index, line in enumerate(source_lines):
        if "\f" in line:
            source_lines[index] = line.replace("\f", "")
            if not page_starts:
                page_starts.append(1)
            if index > 0 or line.index("\f") > 0:
                page_starts.append(index + 1)
    lines = [line.rstrip() for line in source_lines]
    headings = find_headings(lines)
    outline = build_outline(
        [Heading(level=level, title=title, line=index + 1) for index, (level, title) in sorted(headings.items())],
        len(lines),
    )
    return ExtractedDocument(
        lines=lines,
        title=_title(lines, headings, path),
        doc_type="txt",
        outline=outline,
        page_starts=sorted(set(page_starts)),
    )


def find_headings(lines: list[str]) -> dict[int, tuple[int, str]]:
    """Map 0-based line index to (level, title) for the lines that are clearly headings."""
    indented_body = _body_is_indented(lines)
    repeated = _repeated_lines(lines)
    headings: dict[int, tuple[int, str]] = {}
    underline_levels: dict[str, int] = {}
    for index, raw in enumerate(lines):
        line = raw.rstrip()
        if not line or line[0].isspace() or len(line) > MAX_HEADING_CHARS or line.strip() in repeated:
            continue
        before = lines[index - 1].strip() if index > 0 else ""
        after = lines[index + 1].strip() if index + 1 < len(lines) else ""
        underline = _UNDERLINE.match(after) if after else None
        if underline and not before and _similar_length(line.strip(), after) and not _UNDERLINE.match(line):
            char = underline.group(1)
            level = underline_levels.setdefault(char, min(len(underline_levels) + 1, 3))
            headings[index] = (level, line.strip())
            continue
        if before or _WIDE_GAP.search(line) or _DOT_LEADER.search(line):
            continue
        title = " ".join(line.split())
        if _CHAPTER.match(title):
            headings[index] = (1, title)
            continue
        numbered = _NUMBERED.match(title)
        if numbered and numbered.group(3)[0].isdigit() and "." not in numbered.group(1):
            numbered = None  # `1 2 cups flour`: a name starting with a number only under a subsection's number
        if numbered and not after and _reads_like_title(numbered.group(3), subsection="." in numbered.group(1)):
            headings[index] = (numbered.group(1).count(".") + 1, title)
            continue
        if indented_body and not numbered and _reads_like_section_name(title):
            headings[index] = (1, title)
    if len(headings) > max(len(lines) // 4, 1):
        return {}
    return headings


def _body_is_indented(lines: list[str]) -> bool:
    """True for man pages, RFCs and similar, where body text is indented and headings are not."""
    text_lines = [line for line in lines if line.strip()]
    if len(text_lines) < 10:
        return False
    indented = sum(1 for line in text_lines if line[0].isspace())
    return indented >= 0.6 * len(text_lines)


def _repeated_lines(lines: list[str]) -> set[str]:
    """Running headers and footers: identical short lines seen many times (page numbers aside)."""
    counts = Counter(line.strip() for line in lines if 0 < len(line.strip()) <= MAX_HEADING_CHARS)
    return {line for line, count in counts.items() if count >= 5}


def _similar_length(text: str, underline: str) -> bool:
    return abs(len(underline.strip()) - len(text)) <= max(3, len(text) // 5)


def _reads_like_title(title: str, subsection: bool = False) -> bool:
    """A numbered line's text that reads as a heading. In lower case only as a subsection's few words
    (`5.21. watch`, `4.1. control`: files named by the Debian maintainers' guide), which a numbered list's
    item (`1. mix the flour`) is not."""
    if _is_cjk_title(title):
        return True
    words = title.split()
    lower_case_allowed = subsection and len(words) <= 3
    return not title.endswith((".", ",", ";", ":")) and 1 <= len(words) <= 14 and (lower_case_allowed or not title.islower())


def _is_cjk_title(title: str) -> bool:
    return not title.endswith(("。", "，", "：")) and any("\u4e00" <= char <= "\u9fff" for char in title)


def _reads_like_section_name(title: str) -> bool:
    """`NAME`, `SEE ALSO`, `Abstract`, `Status of This Memo`: a few capitalised words, no digits."""
    words = title.split()
    if not 1 <= len(words) <= 6 or not all(_SECTION_WORD.match(word) for word in words):
        return False
    if title.isupper():
        return True
    return title[0].isupper() and all(word[0].isupper() or word.islower() for word in words)


def _title(lines: list[str], headings: dict[int, tuple[int, str]], path: Path) -> str:
    """Front matter title, a man page's NAME line, a title on the first line, or a centred title line."""
    fields, _body = parse_front_matter(lines)
    if fields.get("title"):
        return fields["title"]
    first_text = next((index for index, line in enumerate(lines) if line.strip()), None)
    if first_text is None:
        return title_from_path(path)
    first = lines[first_text].rstrip()
    if _MAN_HEADER.match(first.strip()):
        return _man_page_title(lines, headings) or first.split()[0]
    candidate = " ".join(first.split()).lstrip("#").strip()
    if not first[0].isspace() and not _WIDE_GAP.search(first):
        if _looks_like_title(candidate):
            return candidate
        if (_paragraph_follows(lines, first_text) or _only_text(lines, first_text)) and _looks_like_title_paragraph(candidate):
            return candidate.rstrip(" .")
    for line in lines[first_text : first_text + 40]:
        if _is_centred(line.rstrip()) and _looks_like_title(line.strip()):
            return " ".join(line.split())
    return title_from_path(path)


def _looks_like_title(text: str) -> bool:
    return (
        3 <= len(text) <= 100
        and text[0].isalnum()
        and not text.endswith((".", ",", ";", ":"))
        and not _UNDERLINE.match(text)
    )


def _paragraph_follows(lines: list[str], index: int) -> bool:
    """The line is a paragraph of its own (a blank line after it), and text follows."""
    return index + 2 < len(lines) and not lines[index + 1].strip() and any(line.strip() for line in lines[index + 2 :])


def _only_text(lines: list[str], index: int) -> bool:
    """The line is all the file holds: a record that is only its title (a catalogue entry without an
    abstract) is titled by it, like the records of the same catalogue that have one."""
    return not any(line.strip() for line in lines[index + 1 :])


def _looks_like_title_paragraph(text: str) -> bool:
    """A first line set apart by a blank line may be a long title and end in a full stop, as titles of
    papers and records often do (`On the stability of laminar flow .`), but it is one sentence."""
    return (
        3 <= len(text) <= MAX_TITLE_PARAGRAPH_CHARS
        and text[0].isalnum()
        and not text.endswith((",", ";", ":"))
        and not _SENTENCE_BREAK.search(text.rstrip(" ."))
        and not _UNDERLINE.match(text)
    )


def _is_centred(line: str) -> bool:
    indent = len(line) - len(line.lstrip())
    text = line.strip()
    if indent < 8 or not text or _WIDE_GAP.search(text):
        return False
    return any(abs(indent - (width - indent - len(text))) <= 6 for width in (72, 76, 80))


def _man_page_title(lines: list[str], headings: dict[int, tuple[int, str]]) -> str | None:
    """The one-line description under a man page's NAME heading (`ls - list directory contents`)."""
    for index, (_level, title) in headings.items():
        if title == "NAME":
            following = next((line.strip() for line in lines[index + 1 : index + 4] if line.strip()), "")
            return " ".join(following.split()) or None
    return None
