"""Shared fixtures for the extractor tests: cached extraction from the real corpus (the root
conftest's `corpus`), and `check`, the assertion helpers (a fixture, since test modules are
imported with importlib)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pymupdf
import pytest

from linkly_ls.core.document import ExtractedDocument, OutlineNode
from linkly_ls.core.extract import extract_file

_NON_WORD = re.compile(r"[\W_]+")


@pytest.fixture(scope="session")
def extracted(corpus: Path) -> Callable[[str], ExtractedDocument]:
    """Extract a corpus file (path relative to the corpus) once per test session."""
    cache: dict[str, ExtractedDocument] = {}

    def get(relative: str) -> ExtractedDocument:
        if relative not in cache:
            cache[relative] = extract_file(corpus / relative)
        return cache[relative]

    return get


class Checks:
    """Assertions shared by the extractor tests."""

    @staticmethod
    def flatten(nodes: list[OutlineNode]) -> list[OutlineNode]:
        """Outline nodes in document order (depth first)."""
        flat: list[OutlineNode] = []
        for node in nodes:
            flat.append(node)
            flat.extend(Checks.flatten(node.children))
        return flat

    @staticmethod
    def normalise(text: str) -> str:
        """Case, spacing and punctuation ignored: for comparing titles with the lines they stand on."""
        return _NON_WORD.sub("", text.casefold())

    @staticmethod
    def title_on_line(document: ExtractedDocument, node: OutlineNode, wrapped: bool = False) -> bool:
        """The node's title stands on its start line (or, with `wrapped`, on it and the next line)."""
        line = document.lines[node.start_line - 1]
        if wrapped and node.start_line < len(document.lines):
            line += " " + document.lines[node.start_line]
        return Checks.normalise(node.title) in Checks.normalise(line)

    @staticmethod
    def outline_points_at_titles(document: ExtractedDocument) -> None:
        nodes = Checks.flatten(document.outline)
        assert nodes, "expected an outline"
        missing = [(node.start_line, node.title) for node in nodes if not Checks.title_on_line(document, node)]
        assert not missing, f"outline entries not on their start line: {missing[:5]}"

    @staticmethod
    def well_formed(document: ExtractedDocument, source_lines: bool = False) -> None:
        """Lines are readable (no trailing spaces; no blank runs unless they are the file's own lines)
        and outline ranges are inside the document."""
        for line in document.lines:
            assert line == line.rstrip(), f"trailing space in {line!r}"
            assert "\r" not in line and "\f" not in line
        if not source_lines:
            assert all(not (a == "" and b == "") for a, b in zip(document.lines, document.lines[1:]))
        for node in Checks.flatten(document.outline):
            assert 1 <= node.start_line <= node.end_line <= len(document.lines)


@pytest.fixture(scope="session")
def check() -> Checks:
    return Checks()



class Landscape:
    """Makes a two-page PDF whose second page is a landscape page as LaTeX's pdflscape makes one: drawn
    sideways on a portrait page and turned by /Rotate 90, so its four rows read across as shown."""

    #: each row of the turned page as the page is shown (x0, y0, x1, y1)
    ROWS_SHOWN = [(142, 87 + 100 * row, 272, 104 + 100 * row) for row in range(4)]

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def pdf(self, decorate: Callable[[pymupdf.Document], None]) -> Path:
        """The file, with `decorate(doc)` (links, bookmarks) run before it is saved."""
        doc = pymupdf.open()
        first = doc.new_page(width=595, height=842)
        first.insert_text((72, 100), "the table is on the next page", fontsize=12)
        first.insert_text((72, 200), "and so is its note", fontsize=12)
        turned = doc.new_page(width=595, height=842)
        for row, x in enumerate((100, 200, 300, 400)):
            turned.insert_text((x, 700), f"row {row + 1} of the turned page", fontsize=12, rotate=90)
        turned.set_rotation(90)
        decorate(doc)
        path = self.folder / "landscape.pdf"
        doc.save(path)
        doc.close()
        return path

    @staticmethod
    def user_space(page: pymupdf.Page, shown: tuple[float, float]) -> tuple[float, float]:
        """A point of the page as it is shown, in PDF user space (as a destination gives it)."""
        drawn = pymupdf.Point(*shown) * page.derotation_matrix
        return drawn.x, page.mediabox.height - drawn.y


@pytest.fixture
def landscape(tmp_path: Path) -> Landscape:
    return Landscape(tmp_path)
