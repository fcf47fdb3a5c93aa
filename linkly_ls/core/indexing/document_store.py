"""What an indexing run has read, on its way to the catalog and the keyword index.

Documents are kept as they come back from extraction and written in batches:
`save_read_documents` puts every document read since the last save into the
catalog in one transaction; `flush` then makes the keyword index match the
catalog, with the chunks kept here (a document whose chunks are not kept, such
as one saved by a run that stopped before its flush, is chunked again from its
catalog lines). The indexer decides when to save and when to flush.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from linkly_ls.core.extract import EXTRACTOR_VERSIONS, extractor_version
from linkly_ls.core.extract.ocr import OCR_PENDING
from linkly_ls.core.indexing.preparation import PreparedFile
from linkly_ls.core.links.targets import link_records
from linkly_ls.core.search.chunking import chunk_document
from linkly_ls.core.search.keyword import IndexedChunks, KeywordIndex
from linkly_ls.core.store.catalog import Catalog, DocumentRecord, ErrorRecord, LinkRecord, make_doc_id
from linkly_ls.core.store.vector_rows import cut_again

#: called after each commit of a flush with the document ids it added to the keyword index and those it removed
FlushCallback = Callable[[list[str], list[str]], None]
#: chunks the keyword index gets per commit of a flush (see `DocumentStore.flush`)
FLUSH_BATCH_CHUNKS = 50_000


class DocumentStore:
    """The documents read since the last save and flush, and the writing of them."""

    def __init__(self, catalog: Catalog, keyword: KeywordIndex) -> None:
        self.catalog = catalog
        self.keyword = keyword
        self._chunk_cache: dict[str, IndexedChunks] = {}
        #: documents read but not yet in the catalog: written in one transaction by the next save
        self._unsaved: list[tuple[DocumentRecord, list[str]]] = []
        self._unsaved_links: dict[str, list[LinkRecord]] = {}
        self._unsaved_aliases: dict[str, list[str]] = {}
        self._unsaved_anchors: dict[str, dict[str, int]] = {}
        self.after_flush: list[FlushCallback] = []

    def record_ocr_failure(self, path: str, message: str) -> None:
        """Keep the document as its first pass read it, its "OCR pending" note replaced by the failure."""
        record = self.catalog.by_path(path)
        if record is None:
            return
        failure = f"OCR failed: {message}"
        warnings = [failure if warning.startswith(OCR_PENDING) else warning for warning in record.warnings]
        reason = record.text_missing_reason
        if reason is not None and reason.startswith(OCR_PENDING):
            reason = failure
        self.catalog.set_warnings(record.doc_id, warnings, reason)

    def forget(self, path: str) -> bool:
        """A file gone from disk: its document (True if there was one) and any error of it leave the index."""
        existing = self.catalog.by_path(path)
        if existing is not None:
            self.catalog.remove_document(existing.doc_id)
        self.catalog.remove_error(path)
        return existing is not None

    def record_error(self, path: str, library: str, message: str) -> bool:
        """A file that could not be read: its error replaces what the catalog held for it. True when that
        was a document, which has now left the index."""
        try:
            stat = Path(path).stat()
            size, mtime_ns = stat.st_size, stat.st_mtime_ns
        except OSError:
            size, mtime_ns = 0, 0
        existing = self.catalog.by_path(path)
        if existing is not None:
            self.catalog.remove_document(existing.doc_id)
        extractor = extractor_version(Path(path))
        self.catalog.put_error(ErrorRecord(path, library, message, size, mtime_ns, extractor))
        return existing is not None

    def store(self, prepared: PreparedFile, library: str) -> None:
        """Keep a file read in full for the next save; its chunks wait here for the next flush."""
        document = prepared.document
        assert document is not None
        record = DocumentRecord(
            doc_id=make_doc_id(prepared.path),
            library=library,
            path=prepared.path,
            doc_type=document.doc_type,
            title=document.title,
            size=prepared.size,
            mtime_ns=prepared.mtime_ns,
            content_hash=prepared.content_hash,
            word_count=prepared.word_count,
            total_lines=len(document.lines),
            has_outline=bool(document.outline),
            language=document.language,
            keywords=prepared.keywords,
            outline=document.outline,
            page_starts=document.page_starts,
            warnings=document.warnings,
            text_missing_reason=document.text_missing_reason,
            indexed_at=time.time(),
        )
        self._unsaved.append((record, document.lines))
        self._unsaved_links[record.doc_id] = link_records(document.links, record.path)
        self._unsaved_aliases[record.doc_id] = document.aliases
        self._unsaved_anchors[record.doc_id] = document.anchors
        self._chunk_cache[record.doc_id] = IndexedChunks(
            doc_id=record.doc_id,
            title=record.title,
            path=record.path,
            language=record.language,
            chunks=prepared.chunks,
        )

    def save_read_documents(self) -> None:
        """Write the documents read since the last save to the catalog, in one transaction."""
        unsaved, self._unsaved = self._unsaved, []
        links, self._unsaved_links = self._unsaved_links, {}
        aliases, self._unsaved_aliases = self._unsaved_aliases, {}
        anchors, self._unsaved_anchors = self._unsaved_anchors, {}
        try:
            read_again = self.catalog.put_documents(unsaved, links, EXTRACTOR_VERSIONS, aliases, anchors)
            cut_again(self.catalog, read_again)
        except Exception:
            for record, _ in unsaved:  # not in the catalog: the next run reads these files again
                self._chunk_cache.pop(record.doc_id, None)
            raise

    def flush(self, wait_s: float = 30.0) -> None:
        """Make the keyword index match the catalog: add pending documents, drop tombstones.

        Pending documents go to the keyword index in commits of about FLUSH_BATCH_CHUNKS chunks: an
        index rebuilt for a new schema re-adds every document of the catalog, and one commit of them
        all would hold every chunk's text in memory at once (about a gigabyte at a million chunks).
        Each commit is marked done in the catalog as it lands, so a stop in between leaves the rest
        pending for the next flush.
        """
        self.save_read_documents()
        pending, tombstones = self.catalog.pending_keyword_work()
        if not pending and not tombstones:
            return
        records = self.catalog.get_many([doc_id for doc_id in pending if doc_id not in self._chunk_cache])
        batch: list[IndexedChunks] = []
        batch_ids: list[str] = []
        chunk_count = 0
        removed = tombstones  # with the first commit
        for doc_id in pending:
            chunks = self._chunk_cache.pop(doc_id, None)
            record = records.get(doc_id)
            if chunks is None and record is not None:
                chunks = IndexedChunks(
                    doc_id, record.title, record.path, record.language,
                    chunk_document(self.catalog.lines(doc_id), record.outline, record.page_starts),
                )
            batch_ids.append(doc_id)
            if chunks is not None:
                batch.append(chunks)
                chunk_count += len(chunks.chunks)
            if chunk_count >= FLUSH_BATCH_CHUNKS:
                self._commit(batch, batch_ids, removed, wait_s)
                batch, batch_ids, chunk_count, removed = [], [], 0, []
        if batch_ids or removed:
            self._commit(batch, batch_ids, removed, wait_s)

    def _commit(self, documents: list[IndexedChunks], doc_ids: list[str], removed: list[str], wait_s: float) -> None:
        self.keyword.replace(documents, removed, wait_s=wait_s)
        self.catalog.mark_keyword_done(doc_ids, removed)
        for callback in self.after_flush:
            callback(doc_ids, removed)
