"""linkly's links and backlinks per document against an independent count with ripgrep.

The independent side: `rg -o --column` of each Markdown link syntax over the
folder (inline `[t](x)`, full and collapsed references `[t][r]` / `[t][]`,
shortcut references `[r]`, autolinks `<scheme:...>`, wikilinks `[[n]]`, HTML
`<a href>`), plus, in Python, what a regex cannot say: images `![..](..)` are
not links, overlapping matches count once (the longer syntax wins), a
reference counts only when its label has a definition (`[r]: target`, also
found by rg), and a target path is resolved relative to the file (a folder to
its README.md / index.md, a name without extension or with `.html` to the
`.md` file) for the backlink count. rg does not know code blocks, code spans or
HTML comments: that is the expected difference, and every differing link is
given its reason by looking at where it stands.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from linkly_ls.core.engine import Engine
from linkly_ls.core.links.resolver import LinkResolver
from linkly_ls.core.tools import call_tool

#: link text: brackets may nest three deep (`[`Buffer.from(b[, o[, n]])`][]`)
_TEXT = r"\[(?:[^\[\]\n]|\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\])*\]"
#: (kind, pattern); where matches overlap, the longest counts (a wikilink inside a reference's text does not)
PATTERNS = [
    ("wiki", r"!?\[\[[^\[\]\n]+\]\]"),
    ("inline", "!?" + _TEXT + r'\(\s*(?:<[^<>\n]*>|(?:[^\s()]|\([^\s()]*\))*)(?:\s+"[^"\n]*")?\s*\)'),
    ("reference", "!?" + _TEXT + r"\[[^\[\]\n]*\]"),
    ("autolink", r"<(?:[a-zA-Z][a-zA-Z0-9+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+\.[^\s<>@]+)>"),
    ("html", r"<a\s[^<>]*href\s*=[^<>]*>"),
    ("shortcut", r"!?\[[^\[\]\n]+\]"),
]
#: a link definition; `[^1]: text` is a footnote (GitHub), not one
DEFINITION = r"^ {0,3}\[[^\^\[\]\n][^\[\]\n]*\]:\s*\S+"
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_TARGET = re.compile(r"\]\(\s*<?([^\s<>()]*(?:\([^\s()]*\)[^\s<>()]*)*)")
_TRAILING_LABEL = re.compile(r"\]\[([^\[\]]*)\]$")


@dataclass
class RgLink:
    path: str
    line: int
    start: int  # 0-based character column
    end: int
    kind: str
    text: str
    target: str | None = None


@dataclass
class DocFigures:
    path: str
    linkly_links: int
    rg_links: int
    linkly_backlinks: int
    rg_backlinks: int
    reasons: Counter = field(default_factory=Counter)
    backlink_reasons: Counter = field(default_factory=Counter)

    def explained(self) -> bool:
        """Every difference in its links and backlinks has a reason Markdown gives (see EXPLAINED)."""
        reasons = set(self.reasons) if self.linkly_links != self.rg_links else set()
        if self.linkly_backlinks != self.rg_backlinks:
            reasons |= set(self.backlink_reasons) or {"unexplained"}
        return reasons <= EXPLAINED


@dataclass
class Agreement:
    documents: list[DocFigures]
    resolution_checked: int
    resolution_agreed: int
    resolution_differences: list[str]

    def totals(self) -> dict[str, int]:
        return {
            "documents": len(self.documents),
            "linkly_links": sum(d.linkly_links for d in self.documents),
            "rg_links": sum(d.rg_links for d in self.documents),
            "linkly_backlinks": sum(d.linkly_backlinks for d in self.documents),
            "rg_backlinks": sum(d.rg_backlinks for d in self.documents),
            "links_agree": sum(d.linkly_links == d.rg_links for d in self.documents),
            "backlinks_agree": sum(d.linkly_backlinks == d.rg_backlinks for d in self.documents),
            "explained": sum(d.explained() for d in self.documents),
        }


#: reasons a difference is what linkly should do (Markdown, not a regex, decides what is a link)
EXPLAINED = {
    "in fenced code", "in indented code", "in a code span", "in an HTML comment", "text wraps to the next line",
    "rg: only the label of a text nesting brackets deeper",
}


def rg_matches(folder: Path, pattern: str) -> list[tuple[str, int, int, str]]:
    """(path, line, byte column from 1, matched text) of every `rg -o` match in the folder's .md files."""
    result = subprocess.run(
        ["rg", "--no-config", "--no-heading", "--with-filename", "-n", "--column", "-o", "-g", "*.md", "-e", pattern, str(folder)],
        capture_output=True, text=True,
    )
    if result.returncode not in (0, 1):
        raise RuntimeError(f"rg failed: {result.stderr.strip()}")
    found = []
    for row in result.stdout.splitlines():
        path, line, column, text = row.split(":", 3)
        found.append((path, int(line), int(column), text))
    return found


def rg_links(folder: Path) -> dict[str, list[RgLink]]:
    """Every link rg finds, per file path (see the module docstring)."""
    lines_of: dict[str, list[str]] = {}

    def lines(path: str) -> list[str]:
        if path not in lines_of:
            lines_of[path] = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
        return lines_of[path]

    definitions: dict[str, dict[str, str]] = {}
    for path, _, _, text in rg_matches(folder, DEFINITION):
        label, _, target = text.strip()[1:].partition("]:")
        definitions.setdefault(path, {}).setdefault(_key(label), target.strip().strip("<>"))
    candidates: dict[str, list[RgLink]] = {}
    for kind, pattern in PATTERNS:
        for path, number, column, text in rg_matches(folder, pattern):
            line = lines(path)[number - 1]
            start = len(line.encode("utf-8")[: column - 1].decode("utf-8", errors="ignore"))
            candidates.setdefault(path, []).append(RgLink(path, number, start, start + len(text), kind, text))
    per_file: dict[str, list[RgLink]] = {}
    for path, found in candidates.items():
        kept: list[RgLink] = []
        for match in sorted(found, key=lambda m: (m.line, -(m.end - m.start), m.start)):
            if any(o.line == match.line and o.start < match.end and match.start < o.end for o in kept):
                continue
            kept.append(match)
        for match in sorted(kept, key=lambda m: (m.line, m.start)):
            line = lines(path)[match.line - 1]
            if match.text.startswith("!") or (match.kind == "shortcut" and line[match.end : match.end + 1] in ("(", "[", ":")):
                continue
            if match.kind == "shortcut" and re.match(DEFINITION, line):
                continue
            match.target = _target(match.kind, match.text, definitions.get(path, {}))
            if match.kind in ("reference", "shortcut") and match.target is None:
                continue
            per_file.setdefault(path, []).append(match)
    return per_file


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


def _target(kind: str, text: str, definitions: dict[str, str]) -> str | None:
    if kind == "inline":
        match = _INLINE_TARGET.search(text)
        return match.group(1) if match else ""
    if kind == "reference":
        label = _TRAILING_LABEL.search(text).group(1) or text[1 : text.rindex("][")]
        return definitions.get(_key(label))
    if kind == "shortcut":
        return definitions.get(_key(text[1:-1]))
    if kind == "autolink":
        return text[1:-1]
    if kind == "wiki":
        return None
    match = re.search(r"href\s*=\s*[\"']?([^\"'\s>]*)", text)
    return match.group(1) if match else ""


def resolve(source: str, target: str | None, files: set[str]) -> str | None:
    """The file of the set a link target names, resolved as a static site generator would."""
    if target is None or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
        return None
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path:
        return source
    base = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    stem, extension = posixpath.splitext(base)
    for candidate in (base, stem + ".md" if extension in (".html", ".htm") else base + ".md",
                      posixpath.join(base, "README.md"), posixpath.join(base, "index.md")):
        if candidate in files:
            return candidate
    return None


def why(lines: list[str], line: int, start: int, rg_only: bool) -> str:
    """Where a link that only one side counts stands."""
    if rg_only:
        code = _code_lines(lines)
        if line - 1 in code:
            return code[line - 1]
        text = lines[line - 1]
        if text[:start].count("`") % 2 == 1:
            return "in a code span"
        if text.rfind("<!--", 0, start) > text.rfind("-->", 0, start):
            return "in an HTML comment"
        if start > 0 and text[start - 1] == "]" and "[" not in text[:start]:
            return "text wraps to the next line"
        return "rg only: other"
    text = lines[line - 1]
    if "](" not in text[start:] and "][" not in text[start:] and "]]" not in text[start:] and "</a>" not in text[start:]:
        return "text wraps to the next line"
    return "linkly only: other"


def _code_lines(lines: list[str]) -> dict[int, str]:
    """Line index -> 'in fenced code' / 'in indented code' (CommonMark's rules, simplified)."""
    code: dict[int, str] = {}
    fence = ""
    previous_blank = True
    for index, line in enumerate(lines):
        if fence:
            code[index] = "in fenced code"
            closing = _FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) and not line.strip()[len(closing.group(1)):].strip():
                fence = ""
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            code[index] = "in fenced code"
            continue
        if previous_blank and line.startswith(("    ", "\t")) and line.strip() and not re.match(r"\s*([-*+]|\d+[.)])\s", line):
            code[index] = "in indented code"
            continue
        previous_blank = not line.strip() or index in code
    return code


def compare(engine: Engine, library: str, folder: Path, examples: int = 12) -> Agreement:
    """Per document of `library`: linkly's `links` counts against rg's, with the reasons of each difference.

    A difference in a document's backlinks is a link that only one side counts in
    another document: its reason is recorded for the target too.
    """
    found = rg_links(folder)
    files = {str(path) for path in folder.rglob("*.md")}
    rg_backlinks: Counter = Counter()
    for path, matches in found.items():
        for match in matches:
            target = resolve(path, match.target, files)
            if target is not None:
                rg_backlinks[target] += 1
    resolver = LinkResolver(engine.catalog)
    figures: dict[str, DocFigures] = {}
    backlink_reasons: dict[str, Counter] = {}
    checked = agreed = 0
    differences: list[str] = []
    for doc_id, path in sorted(engine.catalog.documents_matching(library), key=lambda row: row[1]):
        counts = call_tool(engine, "links", {"doc_id": doc_id, "limit": 1}).to_json()["counts"]
        mine = found.get(path, [])
        doc = figures[path] = DocFigures(path, counts["links"], len(mine), counts["backlinks"], rg_backlinks[path])
        record = engine.catalog.get(doc_id)
        resolved = {(link.line, link.start): link for link in resolver.links_of(record)} if record else {}
        theirs = {(match.line, match.start): match for match in mine}
        lines = Path(path).read_text(encoding="utf-8", errors="replace").split("\n")
        linkly_only = resolved.keys() - theirs.keys()
        label_only = {(line, theirs[(line, start)].end) for line, start in theirs.keys() - resolved.keys()}
        for key in theirs.keys() - resolved.keys():
            paired = any(line == key[0] and resolved[(line, start)].end == theirs[key].end for line, start in linkly_only)
            reason = "rg: only the label of a text nesting brackets deeper" if paired else why(lines, key[0], key[1], True)
            doc.reasons[reason] += 1
            target = resolve(path, theirs[key].target, files)
            if target is not None:
                backlink_reasons.setdefault(target, Counter())[reason] += 1
        for key in linkly_only:
            link = resolved[key]
            paired = (key[0], link.end) in label_only
            reason = "rg: only the label of a text nesting brackets deeper" if paired else why(lines, key[0], key[1], False)
            doc.reasons[reason] += 1
            if link.path and link.status in ("ok", "missing_heading"):
                backlink_reasons.setdefault(link.path, Counter())[reason] += 1
        for key in resolved.keys() & theirs.keys():
            if theirs[key].kind == "wiki":
                continue
            expected = resolve(path, theirs[key].target, files)
            got = resolved[key].path if resolved[key].status in ("ok", "missing_heading") else None
            checked += 1
            if expected == got:
                agreed += 1
            elif len(differences) < examples:
                differences.append(f"{path}:{key[0]}: {theirs[key].text[:80]} -> linkly {got or resolved[key].status}, rg {expected}")
    for path, reasons in backlink_reasons.items():
        if path in figures:
            figures[path].backlink_reasons.update(reasons)
    return Agreement(list(figures.values()), checked, agreed, differences)
