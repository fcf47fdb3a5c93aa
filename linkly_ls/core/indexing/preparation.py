"""Worker side of indexing: hash a file and, when its content changed, extract, analyse and chunk it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.search.analysis import detect_language, word_lines, words_and_keywords
from linkly_ls.core.document import ExtractedDocument, ExtractionError, OutlineNode
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import READ_ERROR, ExtractLimits
from linkly_ls.core.extract.source import OpenedSource
from linkly_ls.core.search.chunking import Chunk, chunk_document
from linkly_ls.core.indexing.workers import TaskOutcome

if TYPE_CHECKING:
    from linkly_ls.core.extract.pdf import PageReading


@dataclass
class PreparedFile:
    """A file read by a worker: its document and derived data, or why it failed."""

    path: str
    size: int
    mtime_ns: int
    content_hash: str
    unchanged: bool = False
    document: ExtractedDocument | None = None
    word_count: int = 0
    keywords: list[str] = field(default_factory=list)
    chunks: list[Chunk] = field(default_factory=list)
    error: str | None = None


def hash_file(path: Path) -> str:
    """The content hash of a library file, read without following a link (ExtractionError if it is one)."""
    with OpenedSource(path) as source:
        return source.content_hash()


def one_line(message: str, limit: int = 500) -> str:
    """An error message as one line (whitespace runs, newlines included, become one space), clipped."""
    text = " ".join(message.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _outline_titles(nodes: list[OutlineNode]) -> list[str]:
    titles: list[str] = []
    for node in nodes:
        titles.append(node.title)
        titles.extend(_outline_titles(node.children))
    return titles


def prepare_file(task: tuple[str, str | None, ExtractLimits], pdf_pages: PageReading | None = None) -> PreparedFile:
    """Worker side: hash, and when the content changed, extract, analyse and chunk.

    `pdf_pages`: a long PDF's pages, read beforehand in page ranges (see core/pdf_split.py).
    """
    path_text, known_hash, limits = task
    path = Path(path_text)
    stat = path.stat()
    prepared = PreparedFile(path=path_text, size=stat.st_size, mtime_ns=stat.st_mtime_ns, content_hash="")
    try:
        with OpenedSource(path) as source:  # never through a link: see core/extract/source.py
            prepared.size, prepared.mtime_ns = source.stat.st_size, source.stat.st_mtime_ns
            prepared.content_hash = source.content_hash()
            if known_hash is not None and known_hash == prepared.content_hash:
                prepared.unchanged = True
                return prepared
            document = extract_file(path, limits, pdf_pages, source)
    except OSError as error:
        prepared.error = f"{READ_ERROR}{error.strerror or error}"
        return prepared
    except ExtractionError as error:
        prepared.error = str(error)
        return prepared
    text_lines = word_lines(document.lines, document.page_starts)  # "--- page 3 ---" is no English
    document.language = document.language or detect_language(text_lines)
    prepared.document = document
    prepared.word_count, prepared.keywords = words_and_keywords(
        document.title, text_lines, _outline_titles(document.outline)
    )
    prepared.chunks = chunks_of(document)
    return prepared


def chunks_of(document: ExtractedDocument) -> list[Chunk]:
    """The document's chunks; a document without words (an empty note) is still found by its name and
    path: one chunk without text."""
    return chunk_document(document.lines, document.outline, document.page_starts) or [
        Chunk(number=0, start_line=1, end_line=max(1, len(document.lines)), headings="", text="")
    ]


def prepare_here(work: list[tuple[str, tuple]]) -> Iterator[TaskOutcome]:
    """Run `prepare_file` in this process (for a few small plain-text files; see work_plan)."""
    for key, task in work:
        started = time.monotonic()
        outcome = TaskOutcome(key=key)
        try:
            outcome.value = prepare_file(task)
        except Exception as error:  # reported per file, as a worker would
            outcome.error = f"{type(error).__name__}: {error}"
        outcome.seconds = time.monotonic() - started
        yield outcome
