"""A new path whose content the library already holds under another one: a folder moved or renamed, a
file copied. Its document is taken from the stored one instead of reading the file again (a moved
folder of 2,845 files, PDFs among them, was read again for four minutes); only what depends on the
path is made anew: the document id, the links' targets, a title that was the file's name.

A twin is found by its size first (one query of the library's documents per run, made when the first
new path turns up), then by the content hash of the new file, read here: a file of another size is
never read twice.
"""

from __future__ import annotations

import os
from pathlib import Path

from linkly_ls.core.document import ExtractedDocument, ExtractionError, Link
from linkly_ls.core.extract.base import title_from_path
from linkly_ls.core.extract.ocr import OCR_PENDING
from linkly_ls.core.indexing.preparation import PreparedFile, chunks_of, hash_file
from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.records import make_doc_id


class Twins:
    """The library's documents by size, to find a new path's content among them."""

    def __init__(self, catalog: Catalog, states: dict[str, tuple[str, int, int, str]]) -> None:
        """`states`: the library's documents as `Catalog.file_states` gives them (a document an older
        extractor read has no hash there, and is read again rather than copied)."""
        self.catalog = catalog
        self._states = states
        self._by_size: dict[int, list[tuple[str, str, str]]] | None = None
        #: stored document id -> the id of a new path that took its document in this run
        self._taken_by: dict[str, str] = {}

    def prepared(self, path: Path, stat: os.stat_result) -> PreparedFile | None:
        """The file as the stored document of the same content makes it, or None: no such document, or
        one that cannot stand for it (another type of file; scanned pages still waiting for OCR)."""
        suffix = path.suffix.lower()
        candidates = [
            (stored_path, doc_id, content_hash)
            for stored_path, doc_id, content_hash in self._sizes().get(stat.st_size, [])
            if Path(stored_path).suffix.lower() == suffix and stored_path != str(path)
        ]
        if not candidates:
            return None
        try:
            content_hash = hash_file(path)
        except (OSError, ExtractionError):
            return None  # the file's own reading says what is wrong with it
        doc_id = next((doc_id for _, doc_id, stored_hash in candidates if stored_hash == content_hash), None)
        copied = _copied(self.catalog, doc_id, path, stat, content_hash) if doc_id else None
        if copied is not None:
            self._taken_by.setdefault(doc_id, make_doc_id(str(path)))  # type: ignore[arg-type]
        return copied

    def moves(self, removed: list[str]) -> dict[str, str]:
        """Of the documents `removed` (their paths gone), those a new path took in this run: old id -> new id."""
        return {doc_id: self._taken_by[doc_id] for doc_id in removed if doc_id in self._taken_by}

    def _sizes(self) -> dict[int, list[tuple[str, str, str]]]:
        if self._by_size is None:
            self._by_size = {}
            for stored_path, (doc_id, size, _, content_hash) in self._states.items():
                if content_hash:
                    self._by_size.setdefault(size, []).append((stored_path, doc_id, content_hash))
        return self._by_size


def copies_read(catalog: Catalog, copies: list[tuple[str, str]]) -> list[PreparedFile]:
    """For (path, path read in its place) pairs (the copies of one scan in an OCR pass: read once), each
    path as the stored document of the one read makes it; a copy gone since, or one that document cannot
    stand for, is left out."""
    prepared: list[PreparedFile] = []
    for path, read in copies:
        record = catalog.by_path(read)
        try:
            stat = Path(path).stat()
        except OSError:
            continue
        copy = _copied(catalog, record.doc_id, Path(path), stat, record.content_hash) if record else None
        if copy is not None:
            prepared.append(copy)
    return prepared


def _copied(catalog: Catalog, doc_id: str, path: Path, stat: os.stat_result, content_hash: str) -> PreparedFile | None:
    record = catalog.get(doc_id)
    if record is None or any(warning.startswith(OCR_PENDING) for warning in record.warnings):
        return None
    named = record.title == title_from_path(Path(record.path))  # a title that was the file's name follows it
    document = ExtractedDocument(
        lines=list(catalog.lines(doc_id)),
        title=title_from_path(path) if named else record.title,
        doc_type=record.doc_type,
        outline=record.outline,
        warnings=list(record.warnings),
        text_missing_reason=record.text_missing_reason,
        page_starts=list(record.page_starts),
        language=record.language,
        links=[
            Link(line=link.line, target=link.target, text=link.text, kind=link.kind, start=link.start, end=link.end,
                 target_line=link.target_line)
            for link in catalog.links_from(doc_id)
        ],
        aliases=catalog.aliases_of(doc_id),
        anchors=catalog.anchors_of(doc_id),
    )
    return PreparedFile(
        path=str(path),
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        content_hash=content_hash,
        document=document,
        word_count=record.word_count,
        keywords=[title_from_path(path) if named and word == record.title else word for word in record.keywords],
        chunks=chunks_of(document),
    )
