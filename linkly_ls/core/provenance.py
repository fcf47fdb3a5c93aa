"""Where a line of a document stands: its page and its section.

A search hit, a grep match and a `read` page all point at line numbers of the
canonical document. A person citing a PDF needs the page, a reader the section;
both follow from what extraction already stored:

- `page`: extractors start every page (PDF page, EPUB chapter, PPTX slide, image
  frame, form-feed page of a text file) with an entry in `page_starts`, in order
  and without gaps, so the page of a line is the number of page starts at or
  before it. For a PDF that is the 1-based physical page a viewer shows. Formats
  without pages (Markdown, HTML, DOCX) have no page starts and no `page`.
- `section`: the titles of the outline nodes enclosing the line, outermost
  first, joined by " > " (`"6 Package maintainer scripts > 6.5 Summary"`).

Page markers (`--- page 29 ---`, `--- slide 3 ---`, `--- chapter 2: … ---`) are
lines of the document so that `read` shows page breaks; `marker_lines` names
them so snippets can leave them out.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from linkly_ls.core.store.records import DocumentLayout

if TYPE_CHECKING:
    from linkly_ls.core.store.catalog import Catalog

SECTION_SEPARATOR = " > "
#: the marker line an extractor writes at the start of a page, slide or chapter
PAGE_MARKER = re.compile(r"^--- (?:page|slide|chapter) \d+(?:: .*)? ---$")
#: how markdown names a page of each document type (a PDF page, a slide, a chapter)
PAGE_LABELS = {"pptx": "slide", "epub": "ch."}
DEFAULT_PAGE_LABEL = "p."


@dataclass(frozen=True)
class Place:
    """The page and section of one line; either may be None (no pages, no outline, before the first heading)."""

    page: int | None = None
    section: str | None = None

    def add_to(self, data: dict) -> dict:
        """Add `page` and `section` to a JSON object, leaving out what is unknown."""
        if self.page is not None:
            data["page"] = self.page
        if self.section:
            data["section"] = self.section
        return data

    def label(self, doc_type: str) -> str:
        """`p. 29 · 6 Package maintainer scripts > 6.5 Summary`, or "" when nothing is known."""
        parts = [f"{page_label(doc_type)} {self.page}"] if self.page is not None else []
        if self.section and self.section.lower() != f"slide {self.page}":  # an untitled slide's outline entry
            parts.append(self.section)
        return " · ".join(parts)


def page_label(doc_type: str) -> str:
    return PAGE_LABELS.get(doc_type, DEFAULT_PAGE_LABEL)


def page_range_label(doc_type: str, first: int, last: int) -> str:
    """`p. 28-30`, `slide 4`: the pages of a range of lines, as markdown shows them."""
    label = page_label(doc_type)
    if label == DEFAULT_PAGE_LABEL and first != last:
        label = "pp."
    return f"{label} {first}" if first == last else f"{label} {first}-{last}"


class Provenance:
    """Answers `place(line)` for one document, from its stored layout."""

    def __init__(self, layout: DocumentLayout | None) -> None:
        self.page_starts: list[int] = sorted(layout.page_starts) if layout else []
        self._outline: list[dict] = layout.outline if layout else []
        #: the start lines of each list of sibling nodes, computed when first searched
        self._starts: dict[int, list[int]] = {}

    @classmethod
    def of_pages(cls, doc_id: str, page_starts: list[int]) -> Provenance:
        """Pages only (what `read` needs), from a record already at hand: no outline is read."""
        return cls(DocumentLayout(doc_id=doc_id, page_starts=page_starts, outline=[]))

    @property
    def has_pages(self) -> bool:
        return bool(self.page_starts)

    def page(self, line: int) -> int | None:
        number = bisect_right(self.page_starts, line)
        return number or None

    def section(self, line: int) -> str | None:
        """The sections enclosing `line`; a page's marker line is in the section whose heading opens the
        page right below it (a slide's marker, with its title on the next line, is in that slide)."""
        if line + 1 in self._heading_starts and self._is_page_start(line):
            line += 1
        titles: list[str] = []
        nodes = self._outline
        while nodes:
            starts = self._starts.get(id(nodes))
            if starts is None:
                starts = self._starts[id(nodes)] = [node["start_line"] for node in nodes]
            index = bisect_right(starts, line) - 1
            if index < 0 or line > nodes[index]["end_line"]:
                break
            if not titles or titles[-1] != nodes[index]["title"]:  # a DOCX's title style and heading of one name
                titles.append(nodes[index]["title"])
            nodes = nodes[index].get("children") or []
        return SECTION_SEPARATOR.join(titles) or None

    @cached_property
    def _heading_starts(self) -> frozenset[int]:
        starts: set[int] = set()
        pending = list(self._outline)
        while pending:
            node = pending.pop()
            starts.add(node["start_line"])
            pending.extend(node.get("children") or [])
        return frozenset(starts)

    def _is_page_start(self, line: int) -> bool:
        index = bisect_right(self.page_starts, line) - 1
        return index >= 0 and self.page_starts[index] == line

    def place(self, line: int) -> Place:
        return Place(page=self.page(line), section=self.section(line))

    def page_range(self, first: int, last: int) -> tuple[int, int] | None:
        """The first and last page of lines `first`..`last`, or None for a document without pages."""
        if not self.page_starts:
            return None
        return (self.page(first) or 1, self.page(last) or 1)

    def marker_lines(self, lines: list[str]) -> frozenset[int]:
        """The page starts that are marker lines written by the extractor (a text file's form-feed
        pages start on a line of its own text, which is no marker)."""
        return frozenset(
            start for start in self.page_starts if start <= len(lines) and PAGE_MARKER.match(lines[start - 1])
        )


def provenance_of(catalog: Catalog, doc_ids: list[str]) -> dict[str, Provenance]:
    """doc_id -> its Provenance, one catalog query for all of them."""
    layouts = catalog.layouts(doc_ids)
    return {doc_id: Provenance(layouts.get(doc_id)) for doc_id in doc_ids}
