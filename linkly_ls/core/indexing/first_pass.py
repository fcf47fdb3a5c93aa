"""The first vector pass: every chunk gets a static vector within seconds, before the model refines it.

The bundled model costs tens of CPU-ms a passage, so a large library waits hours
for its last vectors. The first-pass embedder (core/embedding/static.py) costs
well under a millisecond, so `VectorSync` runs it over every document missing a
first-pass vector before each refining run (while the model loads on another
thread), and again whenever the keyword index brought new documents while the
model was busy. First-pass vectors live in a
vector index of their own (its model id names the table). A document keeps them
until the model has refined every document: while it refines, search places every
document by them and reorders the refined ones by the model's (search/mixed_state.py).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from linkly_ls.core.embedding.static import STATIC_MODEL_ID
from linkly_ls.core.store.vector_rows import VectorRows, has_vectors

if TYPE_CHECKING:
    from linkly_ls.core.embedding.static import StaticEmbedder
    from linkly_ls.core.indexing.vector_sync import VectorSync
    from linkly_ls.core.search.vectors import VectorIndex

#: candidates weighed when a first-pass vector joins the graph (refined vectors: 128, usearch's default).
#: Insertion was a third of a first pass, and its time grows with this number while recall barely does:
#: first-pass vectors of the six collections (22,017 passages), recall@10 of the graph against exact
#: search, 128 / 64 / 40: 0.985 / 0.983 / 0.982, inserted in 2.63 / 1.58 / 0.95 s. 40 is FAISS's
#: default for HNSW; these vectors only stand in until the model refines them.
FIRST_PASS_EXPANSION_ADD = 40


class FirstPass:
    """The first-pass side of a `VectorSync`: writing its vectors, and handing them to search."""

    def __init__(self, sync: VectorSync) -> None:
        self.sync = sync
        self.model_id = STATIC_MODEL_ID
        #: the refined models: a document they have refined gets no new first-pass vector
        self.covered_by = tuple(sync.provider.model_ids())
        self._rows = VectorRows(sync.catalog, self.model_id, covered_by=self.covered_by)
        #: set when the keyword index changed; the refining loop then runs the first pass again
        self.due = threading.Event()
        #: the last run left every document with a first-pass vector
        self.complete = False

    @property
    def enabled(self) -> bool:
        provider = self.sync.provider
        return provider.enabled and provider.settings.first_pass

    def run(self, deleted: list[str]) -> int | None:
        """Give every document without a first-pass vector one; forget `deleted`. Writer side only.

        Returns how many documents got one, or None when it could not run (off, no table, or the
        index is another process's to write)."""
        self.due.clear()
        self.empty_when_all_refined()
        with self._writing() as (embedder, index):
            if embedder is None or index is None:
                return None
            index.remove_documents(deleted)
            index.checkpoint()
            documents = self.sync.rounds.embed_missing(embedder, index, None)
        self.complete = not self.sync.stopping()
        embedder.forget_words()
        return documents

    def forget(self, deleted: list[str]) -> None:
        """Drop the first-pass vectors of deleted documents (the refining run's share of `run`)."""
        if deleted and self.enabled:
            with self._writing() as (_, index):
                if index is not None:
                    index.remove_documents(deleted)

    def empty_when_all_refined(self) -> None:
        """Empty the first-pass index, without reading it in (its file small again), once the model
        has refined every document it holds. Until then a refined document keeps its first-pass
        vectors: while the model refines, every document is placed by them (`search/mixed_state.py`).
        A document added or changed later gets new ones. Also done at the start of each first pass."""
        refined = self._rows.covered_documents()
        if not refined or len(refined) != self._rows.document_count() or not self.sync.writer_lock.held:
            return
        embedder = self.sync.provider.first_pass() if self.enabled else None
        index = self.sync.index_for(embedder) if embedder is not None else None
        if index is not None:
            index.clear()

    @contextmanager
    def _writing(self) -> Iterator[tuple[StaticEmbedder | None, VectorIndex | None]]:
        """The embedder and the index opened for writing, saved and handed back to reading afterwards
        (`VectorIndex.stop_writing`), so that the writer does not hold the whole first-pass index in
        memory while the model refines; (None, None) when off, without a table, or another process writes."""
        embedder = self.sync.provider.first_pass() if self.enabled else None
        index = self.sync.index_for(embedder, writer=True) if embedder is not None else None
        try:
            yield (embedder, index) if index is not None else (None, None)
        finally:
            if index is not None:
                index.stop_writing()

    def catch_up(self, refined_next: list[str]) -> None:
        """Between refining rounds: the first pass over documents the keyword index added meanwhile,
        unless the model refines every one of them in its next round (`refined_next`), as it does a
        note just saved, being the newest: writing them into the first pass's index means reading and
        saving the whole index, which at a million chunks costs more than the round they would wait."""
        if not self.due.is_set() or not self.enabled:
            return
        waiting = self._rows.missing_documents(limit=len(refined_next) + 1)
        if {doc_id for doc_id, _ in waiting} <= set(refined_next):
            self.due.clear()
            return
        state = self.sync.state()
        self.run([])
        self.sync.set_state(**state.__dict__)

    def search_side(self) -> tuple[StaticEmbedder | None, VectorIndex | None]:
        """The embedder and index of the first-pass vectors, or (None, None) while there are none."""
        if not self.enabled or not has_vectors(self.sync.catalog, [self.model_id]):
            return None, None
        embedder = self.sync.provider.first_pass()
        if embedder is None:
            return None, None
        index = self.sync.index_for(embedder)
        if index is None or len(index) == 0:
            return None, None
        return embedder, index

    def coverage(self) -> dict[str, float]:
        """library -> share (0-1) of its words whose chunks have first-pass vectors; empty when off."""
        if not self.enabled:
            return {}
        return {library: (done / total if total else 1.0) for library, (done, total) in self._rows.coverage().items()}
