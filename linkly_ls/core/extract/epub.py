"""EPUB: chapters in spine order, the book's own table of contents as the outline.

Each spine document starts with a `--- chapter N: title ---` line and is
rendered like an HTML page (html_render.HtmlRenderer). Table-of-contents links are
resolved to the line of the element their #fragment names, or to the
chapter's heading, or to the chapter marker. Books without a table of
contents get their outline from the chapters' h1-h6.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from pathlib import Path

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Heading, LineBuilder, Link
from linkly_ls.core.extract.base import ExtractLimits, title_from_path
from linkly_ls.core.extract.epub_package import (
    EpubFormatError,
    EpubPackage,
    TocEntry,
    encrypted_documents,
    read_from_zip,
    read_with_ebooklib,
)
from linkly_ls.core.extract.html import parse_html
from linkly_ls.core.extract.html_render import HtmlRenderer, node_text
from linkly_ls.core.extract.zipguard import open_checked_zip

_NON_WORD = re.compile(r"[\W_]+")
#: numbering that is not text: SiSU's paragraph "object citation numbers" (Debian live-manual)
_NOISE_SELECTORS = "label.ocn"


@dataclass
class _RenderedChapter:
    marker_line: int
    anchors: dict[str, int]
    heading_lines: list[tuple[int, str]]
    links: list[tuple[int, str, str]]


def extract(path: Path, limits: ExtractLimits) -> ExtractedDocument:
    package = _read_package(path, limits)
    if not package.chapters:
        raise ExtractionError("not a readable EPUB file: its spine lists no readable chapters")
    toc = _without_repeats(package.toc)
    builder = LineBuilder()
    rendered: dict[str, _RenderedChapter] = {}
    continuing: str | None = None  # the contents entry the text read so far ends in
    for number, chapter in enumerate(package.chapters, start=1):
        tree = parse_html(chapter.data)
        for noise in tree.css(_NOISE_SELECTORS):
            noise.decompose()
        root = tree.body or tree.root
        builder.page("")
        renderer = HtmlRenderer(builder, emit_headings=not toc)
        if root is not None:
            renderer.render(root)
        placed = _RenderedChapter(builder.page_starts[-1], renderer.anchors, renderer.heading_lines, renderer.links)
        rendered.setdefault(chapter.href, placed)
        entries = _entries_in(chapter.href, toc, placed)
        title = _chapter_title(entries, placed, builder.lines, continuing) or _page_title(tree, chapter.href)
        builder.lines[placed.marker_line - 1] = f"--- chapter {number}: {title} ---"
        if entries:
            continuing = entries[-1][1].title
    if toc:
        builder.headings = _toc_headings(toc, rendered)
    lines, outline = builder.finish()
    warnings = []
    if package.missing:
        shown = ", ".join(package.missing[:3]) + (", ..." if len(package.missing) > 3 else "")
        warnings.append(
            f"{len(package.missing)} file(s) the book's spine lists are missing from the EPUB ({shown}): "
            "their text is not indexed"
        )
    return ExtractedDocument(
        lines=lines,
        title=package.title or title_from_path(path),
        warnings=warnings,
        doc_type="epub",
        outline=outline,
        page_starts=builder.page_starts,
        links=_chapter_links(rendered, len(lines)),
    )


def _chapter_links(rendered: dict[str, _RenderedChapter], total_lines: int) -> list[Link]:
    """Every chapter's links: one to a chapter of the book (and its anchor) knows the line it leads to;
    a link leaving the book keeps its URL."""
    links: list[Link] = []
    last = max(total_lines, 1)
    for href, chapter in rendered.items():
        for line, target, text in chapter.links:
            file_part, _, fragment = target.partition("#")
            target_line: int | None = None
            if not _EXTERNAL.match(target):
                target_file = posixpath.normpath(posixpath.join(posixpath.dirname(href), file_part)) if file_part else href
                found = rendered.get(target_file)
                if found is not None:
                    target_line = found.anchors.get(fragment, found.marker_line) if fragment else found.marker_line
            links.append(
                Link(
                    line=min(line, last),
                    target=target,
                    text=text,
                    kind="epub",
                    target_line=min(target_line, last) if target_line else None,
                )
            )
    return links


def _read_package(path: Path, limits: ExtractLimits) -> EpubPackage:
    archive = open_checked_zip(path, limits, "EPUB")
    try:
        encrypted = encrypted_documents(archive)
        if encrypted:
            raise ExtractionError(
                f"DRM-protected EPUB: {len(encrypted)} of its files are encrypted ({encrypted[0]}, ...), so its text "
                "cannot be read; index a copy without DRM"
            )
        try:
            return read_with_ebooklib(path)
        except Exception:  # noqa: BLE001 - ebooklib fails in many ways on real files; the fallback decides
            return read_from_zip(archive)
    except EpubFormatError as error:
        raise ExtractionError(f"not a readable EPUB file: {error}") from error
    finally:
        archive.close()


def _without_repeats(toc: list[TocEntry]) -> list[TocEntry]:
    """Drop an entry that repeats its parent's title and target (Sphinx-made NCX files do this)."""
    kept: list[TocEntry] = []
    parents: list[TocEntry] = []
    for entry in toc:
        while parents and parents[-1].level >= entry.level:
            parents.pop()
        parent = parents[-1] if parents else None
        if not (parent and parent.title == entry.title and parent.href == entry.href):
            kept.append(entry)
        parents.append(entry)
    return kept


def _entries_in(href: str, toc: list[TocEntry], chapter: _RenderedChapter) -> list[tuple[int, TocEntry]]:
    """The contents entries that lead into the spine file `href`, with the line each leads to, in the
    order of the text (an entry whose anchor is not found leads to the file's start)."""
    found = []
    for entry in toc:
        file_path, _, fragment = entry.href.partition("#")
        if file_path == href and entry.title:
            line = chapter.anchors.get(fragment, chapter.marker_line) if fragment else chapter.marker_line
            found.append((line, entry))
    return sorted(found, key=lambda placed: placed[0])


def _chapter_title(
    entries: list[tuple[int, TocEntry]], chapter: _RenderedChapter, lines: list[str], continuing: str | None
) -> str | None:
    """What a spine file's marker calls it: the contents entry that leads to its start (the whole file, or
    an anchor with no text above it), else the entry the file goes on with (`continuing`): a file that
    ends one chapter and starts the next is named for the one its first lines belong to."""
    for line, entry in entries:
        if not any(text.strip() for text in lines[chapter.marker_line : line - 1]):
            return entry.title
        break
    if continuing is not None:
        return f"{continuing} (continued)"
    return entries[0][1].title if entries else None


def _page_title(tree, href: str) -> str:
    """A spine file the contents does not name: its first heading, its HTML title, else its file name."""
    for selector in ("h1", "h2", "h3"):
        node = tree.css_first(selector)
        text = node_text(node) if node is not None else ""
        if text:
            return text[:120]
    node = tree.css_first("title")
    text = " ".join((node.text(deep=True) if node is not None else "").split())
    return text[:120] if text else posixpath.basename(href)


def _toc_headings(toc: list[TocEntry], rendered: dict[str, _RenderedChapter]) -> list[Heading]:
    by_basename: dict[str, list[str]] = {}
    for href in rendered:
        by_basename.setdefault(posixpath.basename(href), []).append(href)
    headings: list[Heading] = []
    for entry in toc:
        file_path, _, fragment = entry.href.partition("#")
        chapter = rendered.get(file_path)
        if chapter is None:  # broken relative links: match the file name when it is unique
            candidates = by_basename.get(posixpath.basename(file_path), [])
            chapter = rendered[candidates[0]] if len(candidates) == 1 else None
        if chapter is None or not entry.title:
            continue
        line = chapter.anchors.get(fragment) if fragment else None
        if line is None:
            line = _heading_line(chapter, entry.title)
        headings.append(Heading(level=entry.level, title=entry.title, line=line))
    return headings


def _heading_line(chapter: _RenderedChapter, title: str) -> int:
    """The chapter heading that reads like the entry's title, else the chapter's marker line."""
    wanted = _NON_WORD.sub("", title.casefold())
    for line, text in chapter.heading_lines[:5]:
        found = _NON_WORD.sub("", text.casefold())
        if wanted and found and (found == wanted or found.endswith(wanted) or wanted.endswith(found)):
            return line
    return chapter.marker_line


_EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//")


def _file_of(href: str) -> str:
    return href.partition("#")[0]
