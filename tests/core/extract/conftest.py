"""Shared fixtures for the extractor tests: cached extraction from the real corpus (the root
conftest's `corpus`), and `check`, the assertion helpers (a fixture, since test modules are
imported with importlib)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

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
