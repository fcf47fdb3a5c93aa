"""Which document, and which line of it, a stored link leads to; and the links that lead to a document.

Resolution happens when links are read, against the catalog as it is then:

- a path link: the indexed file at that path; for a path without an
  extension or ending in `.html` (how mdBook, Docusaurus and Astro sources
  link their Markdown), the `.md`/`.mdx` file of that name; for a folder,
  its `index.md` / `README.md`;
- a wikilink: the document whose file name (without extension) is the name,
  else whose title is; `[[folder/name]]` narrows by folder. Two candidates
  of the same kind are *ambiguous*: reported with both paths, never guessed;
- a fragment: the heading whose anchor (`heading_slug`) or title it names, an
  explicit `{#id}` / `id="…"` anchor in a Markdown target, `page=N` of a
  paged document, or `nameddest=NAME`, a PDF's named destination: the line
  where the target PDF's own links to that name lead (a LaTeX or Texinfo
  document links its sections by name from its contents), else the heading
  titled NAME (how Texinfo names them; see `HeadingIndex.titled`), else the
  page the target file names it for (read from the file: LaTeX's unnumbered
  `section*.7`, which no contents line links).
  A heading is also found by its title without its number (`#Lists and
  data frames` for "6 Lists and data frames"). A Markdown, HTML, PDF or EPUB
  target can miss a heading; the anchors of other formats (a Word bookmark)
  are not kept, so their fragments lead to the document.

A status says what became of each link: `ok`, `external` (a URL),
`site` (a path from a web site's root), `unindexed` (the file exists but is
not indexed: an image, a source file), `outside` (a path outside every
library, not looked for: see `LinkResolver`), `missing`, `missing_heading`,
`missing_block` (an Obsidian `#^id` no line carries), `ambiguous`. Broken
links are the last four.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from urllib.parse import unquote

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.links.headings import HeadingIndex, SectionIndex
from linkly_ls.core.links.anchors import block_line, explicit_anchor_line
from linkly_ls.core.links.resolved import OutgoingLinks, ResolvedLink
from linkly_ls.core.links.targets import (
    is_external,
    is_note_path,
    path_candidates,
    paths_naming,
    wikilink_folder,
    wikilink_key,
    wikilink_suffix,
)
from linkly_ls.core.store.catalog import Catalog, DocumentRecord, LinkRecord
from linkly_ls.core.store.records import LibraryRecord, holding_library, name_key, title_key

_NOTE_TYPES = ("md", "mdx")
#: formats whose headings a link's fragment is held to beside Markdown's and HTML's anchors (`_place_by_destination`)
_OUTLINED_BOOK_TYPES = ("pdf", "epub")
_PAGE_FRAGMENT = re.compile(r"^page=(\d+)$")
#: a PDF's named destination (`other.pdf#nameddest=NAME`, as PDF viewers read a URL's fragment)
_NAMED_DESTINATION = "nameddest="


class LinkResolver:
    """Resolves links against one catalog; keeps the target records it read, for one request."""

    def __init__(self, catalog: Catalog, look_outside: bool = False) -> None:
        """`look_outside`: whether a link to a path outside every library is checked on disk (`unindexed`
        or `missing`), as an editor's own server may for its user; the tools answer `outside` instead, so
        that whoever can ask them cannot learn which files exist elsewhere on the machine."""
        self.catalog = catalog
        self.look_outside = look_outside
        self._records: dict[str, DocumentRecord | None] = {}
        self._sections: dict[str, SectionIndex] = {}
        self._lines: dict[str, list[str]] = {}
        self._headings: dict[str, HeadingIndex] = {}
        self._destinations: dict[str, dict[str, int]] = {}
        self._anchors: dict[str, dict[str, int]] = {}  # an HTML page's element ids -> lines
        self._destination_pages: dict[tuple[str, str], int | None] = {}
        self._libraries: list[LibraryRecord] | None = None

    def links_of(self, record: DocumentRecord, line: int | None = None) -> list[ResolvedLink]:
        """The document's links resolved (`line`: those on that line: a request about the link under the
        cursor need not resolve a manual's thousands)."""
        return [self.resolve(record, link) for link in self.catalog.links_from(record.doc_id, line)]

    def broken_links(self, record: DocumentRecord) -> list[ResolvedLink]:
        """The document's broken links; the links placed within it at extraction are never broken."""
        found = (self.resolve(record, link) for link in self.catalog.links_from(record.doc_id) if link.target_line is None)
        return [link for link in found if link.broken]

    def outgoing(self, record: DocumentRecord, within_shown: int) -> OutgoingLinks:
        """The document's links, those leaving it apart from those within it, each in document order;
        of the links placed within it at extraction (a PDF's or EPUB's internal ones, never broken: a
        manual holds tens of thousands) only the first `within_shown` are resolved."""
        leaving: list[ResolvedLink] = []
        within: list[tuple[int, int, ResolvedLink | LinkRecord]] = []
        for link in self.catalog.links_from(record.doc_id):
            if link.target_line is not None:
                within.append((link.line, link.start, link))
                continue
            resolved = self.resolve(record, link)
            if resolved.doc_id == record.doc_id:
                within.append((resolved.line, resolved.start, resolved))
            else:
                leaving.append(resolved)
        within.sort(key=lambda item: (item[0], item[1]))
        shown = [item if isinstance(item, ResolvedLink) else self.resolve(record, item) for _, _, item in within[:within_shown]]
        unshown_broken = sum(1 for _, _, item in within[within_shown:] if isinstance(item, ResolvedLink) and item.broken)
        return OutgoingLinks(leaving, shown, len(within), unshown_broken)

    def linked_documents(self, record: DocumentRecord) -> set[str]:
        """The ids of the documents `record` links to, without finding the line each link leads to."""
        links = self.catalog.links_from(record.doc_id)
        resolved = (self.resolve_from(record.doc_id, record.path, link, record, place=False) for link in links)
        return {link.doc_id for link in resolved if link.doc_id}

    def resolve(self, source: DocumentRecord, link: LinkRecord) -> ResolvedLink:
        return self.resolve_from(source.doc_id, source.path, link, source)

    def resolve_from(
        self, source_id: str, source_path: str, link: LinkRecord, source: DocumentRecord | None = None, place: bool = True
    ) -> ResolvedLink:
        """`resolve` for a source that may not be indexed (an editor's new, unsaved note); `place=False`
        leaves out the target's line and heading (and so `missing_heading`)."""
        resolved = ResolvedLink(
            source_id=source_id,
            source_path=source_path,
            line=link.line,
            start=link.start,
            end=link.end,
            kind=link.kind,
            target=link.target,
            text=link.text,
            status="ok",
        )
        if link.target_path is None and link.target_name is None:
            resolved.status = "external" if is_external(link.target) else "site"
            return resolved
        if link.target_name is not None:
            target = self._by_name(link, resolved, source_path)
        else:
            target = self._by_path(link.target_path or "", source_path, source, resolved)
        if target is None:
            return resolved
        resolved.doc_id, resolved.path, resolved.title = target.doc_id, target.path, target.title
        if place:
            self._place(target, link, resolved)
        return resolved

    def backlinks(
        self, record: DocumentRecord, from_itself: bool = True, section: OutlineNode | None = None
    ) -> list[ResolvedLink]:
        """Every link of any indexed document that resolves to `record`, by source path and line
        (`from_itself=False`: of any other document). `section`: of the links placed within the
        document (a PDF's thousands), only those into that section's lines are read."""
        between = None if section is None else (section.start_line, section.end_line or 2**31)
        found = self.catalog.links_to(
            paths_naming(record.path),
            sorted({name_key(record.path), _title(record), *self.catalog.aliases_of(record.doc_id)}),
            None if from_itself else record.doc_id,
            between,
        )
        sources = self.catalog.get_many(sorted({source_id for source_id, _ in found}))
        resolved: list[ResolvedLink] = []
        for source_id, link in found:
            source = sources.get(source_id)
            if source is None:
                continue
            candidate = self.resolve(source, link)
            if candidate.doc_id == record.doc_id:
                resolved.append(candidate)
        resolved.sort(key=lambda item: (item.source_path, item.line, item.start))
        return resolved

    def document_at(self, path: str) -> DocumentRecord | None:
        """The indexed document a path link to `path` leads to, if any."""
        candidates = path_candidates(path)
        found = self.catalog.documents_at(candidates)
        return next((self.record(found[c][0]) for c in candidates if c in found), None)

    def record(self, doc_id: str) -> DocumentRecord | None:
        if doc_id not in self._records:
            self._records[doc_id] = self.catalog.get(doc_id)
        return self._records[doc_id]

    # targets

    def _by_path(
        self, path: str, source_path: str, source: DocumentRecord | None, resolved: ResolvedLink
    ) -> DocumentRecord | None:
        if path == source_path and source is not None:
            return source
        target = self.document_at(path)
        if target is not None:
            return target
        if self.look_outside or self._library_of(path) is not None:
            if os.path.islink(path) and (real := self.document_at(os.path.realpath(path))) is not None:
                return real  # MkDocs' `docs/changelog.md -> ../CHANGELOG.md`: the link leads to the file indexed
            resolved.status = "unindexed" if os.path.exists(path) else "missing"
        else:
            resolved.status = "outside"
        resolved.path = path
        return None

    def named(self, name: str, source_path: str) -> DocumentRecord | None:
        """The document `[[name]]` written in `source_path` leads to, when exactly one does."""
        chosen = self._named_candidates(name, wikilink_key(name.partition("#")[0].strip()), source_path)
        return self.record(chosen[0][0]) if len(chosen) == 1 else None

    def _named_candidates(self, target: str, key: str, source_path: str) -> list[tuple[str, str, str, str]]:
        """The documents a wikilink's name may mean: narrowed by its folder (`[[alpha/readme]]`), its file
        name before a title, and, among several, notes before other files (`[[diagram]]` beside
        `diagram.png`), then those of the source's own library (another vault's note of the same name,
        indexed in the same data dir, made every such link ambiguous). A name with a file's suffix
        (`![[diagram.png]]`) means the file of that name alone."""
        named = self.catalog.documents_named(key)
        folder = wikilink_folder(target)
        if folder:
            named = [row for row in named if posixpath.dirname(row[1]).endswith("/" + folder.strip("/"))]
        suffix = wikilink_suffix(target)
        if suffix:
            return [row for row in named if name_key(row[1]) == key and row[1].lower().endswith(suffix)]
        chosen = [row for row in named if name_key(row[1]) == key] or named
        if len(chosen) > 1:
            chosen = [row for row in chosen if is_note_path(row[1])] or chosen
        if len(chosen) > 1:
            library = self._library_of(source_path)
            chosen = [row for row in chosen if row[3] == library] or chosen
        return chosen

    def _library_of(self, path: str) -> str | None:
        """The library whose folder holds `path` most closely (a note not indexed yet has no record)."""
        if self._libraries is None:
            self._libraries = self.catalog.libraries()
        library = holding_library(self._libraries, Path(path))
        return library.name if library is not None else None

    def _by_name(self, link: LinkRecord, resolved: ResolvedLink, source_path: str) -> DocumentRecord | None:
        chosen = self._named_candidates(link.target, link.target_name or "", source_path)
        if len(chosen) == 1:
            return self.record(chosen[0][0])
        if not chosen:
            resolved.status = "missing"
        else:
            resolved.status = "ambiguous"
            resolved.candidates = [row[1] for row in chosen]
        return None

    def _place(self, target: DocumentRecord, link: LinkRecord, resolved: ResolvedLink) -> None:
        """The line and heading of the target the link leads to (its first line without a fragment)."""
        if link.target_line is not None:
            resolved.target_line = link.target_line
            self._set_heading(resolved, self._section_opened_at(target, link.target_line))
            return
        fragment = link.fragment
        if not fragment:
            resolved.target_line = 1
            return
        if target.doc_id not in self._headings:
            self._headings[target.doc_id] = HeadingIndex(target.outline)
        headings = self._headings[target.doc_id]
        if fragment.startswith(_NAMED_DESTINATION):
            name = fragment[len(_NAMED_DESTINATION) :]
            if target.doc_id not in self._destinations:
                self._destinations[target.doc_id] = self.catalog.destination_lines(target.doc_id)
            line = self._destinations[target.doc_id].get(name)
            node = headings.titled(name) if line is None else self._section_opened_at(target, line)
            if line is None and node is None:
                line = self._destination_page_start(target, name)
                node = self._section_at(target, line + 1) if line is not None else None
            if line is None:
                line = node.start_line if node is not None else 1
            resolved.target_line = line
            self._set_heading(resolved, node)
            return
        if fragment.startswith("^") and target.doc_type in _NOTE_TYPES:  # an Obsidian block: `[[note#^abc123]]`
            line = block_line(self.catalog.lines(target.doc_id), fragment[1:])
            resolved.status = "ok" if line is not None else "missing_block"
            resolved.target_line = line or 1
            self._set_heading(resolved, self._section_at(target, line) if line is not None else None)
            return
        node = headings.named(fragment, wiki=link.kind == "wiki") or headings.titled(" ".join(unquote(fragment).split()))
        if node is not None:
            resolved.target_line = node.start_line
            self._set_heading(resolved, node)
            return
        page = _PAGE_FRAGMENT.match(fragment)
        if page and target.page_starts:
            number = min(max(int(page.group(1)), 1), len(target.page_starts))
            resolved.target_line = target.page_starts[number - 1]
            # the page's first line after its marker: a section that starts the page is the one shown
            self._set_heading(resolved, self._section_at(target, resolved.target_line + 1))
            return
        # an element's id (`maxima_102.html#realroots`, Texinfo's `#index-…`, Sphinx's `#pathlib.Path.glob`, a
        # note's `<a name="…">` or `{: #id }`); a note read before its anchors were kept: its lines
        anchors = self._element_anchors(target)
        line = anchors.get(fragment) or anchors.get(unquote(fragment))
        if line is None and target.doc_type in _NOTE_TYPES:
            line = explicit_anchor_line(self.catalog.lines(target.doc_id), fragment)
        if anchors or target.doc_type in _NOTE_TYPES:  # none in an HTML page: one read before anchors were kept
            resolved.status = "ok" if line is not None else "missing_heading"
            resolved.target_line = line or 1
            self._set_heading(resolved, self._section_at(target, line) if line is not None else None)
            return
        resolved.target_line = 1
        if target.doc_type in _OUTLINED_BOOK_TYPES:
            self._place_by_destination(target, fragment, resolved)

    def _place_by_destination(self, target: DocumentRecord, fragment: str, resolved: ResolvedLink) -> None:
        """A PDF's or EPUB's fragment that names no heading or page: for a PDF a named destination written
        bare (`paper.pdf#intro`, as PDF readers take it), else a heading that is not there (a typo, a
        section since renamed): `missing_heading`, where it led to page 1 without a word."""
        if target.doc_type == "pdf":
            if target.doc_id not in self._destinations:
                self._destinations[target.doc_id] = self.catalog.destination_lines(target.doc_id)
            line = self._destinations[target.doc_id].get(fragment)
            if line is not None:
                resolved.target_line = line
                self._set_heading(resolved, self._section_opened_at(target, line))
                return
        resolved.status = "missing_heading"

    def _element_anchors(self, target: DocumentRecord) -> dict[str, int]:
        """An HTML page's or a note's anchors -> lines, read once per document (an index page links one page
        hundreds of times)."""
        if target.doc_type != "html" and target.doc_type not in _NOTE_TYPES:
            return {}
        if target.doc_id not in self._anchors:
            self._anchors[target.doc_id] = self.catalog.anchors_of(target.doc_id)
        return self._anchors[target.doc_id]

    def _destination_page_start(self, target: DocumentRecord, name: str) -> int | None:
        """The marker line of the page a named destination of the target PDF is on, asked of the file itself
        (`pdf_links.destination_page`): a name no link of the target uses and no heading is titled by."""
        if target.doc_type != "pdf" or not target.page_starts:
            return None
        key = (target.doc_id, name)
        if key not in self._destination_pages:
            from linkly_ls.core.extract.pdf_links import destination_page  # MuPDF: only for such a link

            page = destination_page(target.path, name)
            self._destination_pages[key] = None if page is None else target.page_starts[min(page, len(target.page_starts) - 1)]
        return self._destination_pages[key]

    @staticmethod
    def _set_heading(resolved: ResolvedLink, node: OutlineNode | None) -> None:
        resolved.heading = node.title if node else None
        resolved.heading_line = node.start_line if node else None

    def _section_index(self, target: DocumentRecord) -> SectionIndex:
        """A PDF's links all lead into one outline: its index is built once."""
        index = self._sections.get(target.doc_id)
        if index is None:
            index = self._sections[target.doc_id] = SectionIndex(target.outline)
        return index

    def _section_at(self, target: DocumentRecord, line: int) -> OutlineNode | None:
        """The innermost section of `target` holding `line`."""
        return self._section_index(target).at(line)

    def _section_opened_at(self, target: DocumentRecord, line: int) -> OutlineNode | None:
        """The section a PDF link's destination at `line` opens (`SectionIndex.opened_at`); in other formats a
        link's line is its heading's own."""
        if target.doc_type != "pdf":
            return self._section_at(target, line)
        if target.doc_id not in self._lines:
            self._lines[target.doc_id] = self.catalog.lines(target.doc_id)
        return self._section_index(target).opened_at(line, self._lines[target.doc_id])


def _title(record: DocumentRecord) -> str:
    return title_key(record.title)
