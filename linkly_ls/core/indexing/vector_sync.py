"""Keep chunk vectors in line with the catalog: embed what is missing, forget what is gone.

Embedding is slow (tens of ms a passage on a laptop CPU), so it never blocks
indexing or search. Long-running processes (`linkly watch`, the MCP server, the
language server) call `start()` and embed in a background thread; `linkly index
--wait` calls `run_until_complete()` in the foreground. A plain `linkly index`
only writes the catalog and the keyword index, and leaves embedding to the next
of those: search meanwhile is hybrid over what has vectors and keyword-only over
the rest.

Documents are embedded newest day first, in rounds (`embedding_rounds.py`); a
passage whose exact text already has a vector gets that vector without running
the model again.

Before the model runs, the first pass (`first_pass.py`) gives every chunk a
cheap static vector, so search is hybrid everywhere within seconds.

The background thread gives way to requests (`core.background`): it runs at
nice 19 with one core fewer than the machine has, and before each round and
each model call it waits while a tool call is being answered (and a moment
after), so a search never competes with a batch it could have avoided.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.background import FOREGROUND, lower_current_thread
from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.embedding.provider import EmbeddingProvider
from linkly_ls.core.embedding.settings import EmbeddingSettings
from linkly_ls.core.embedding.static import SOURCE_MODEL_ID
from linkly_ls.core.indexing.embedding_rounds import EmbeddingRounds, Stopped
from linkly_ls.core.indexing.first_pass import FIRST_PASS_EXPANSION_ADD, FirstPass
from linkly_ls.core.indexing.refined_coverage import RefinedCoverage
from linkly_ls.core.indexing.vector_models import forget_unused_models
from linkly_ls.core.store.writer_lock import WriterLock
from linkly_ls.core.search.vectors import EXPANSION_ADD, VectorIndex
from linkly_ls.core.store.vector_rows import ensure_vector_tables, forget_vectors_of, has_vectors

if TYPE_CHECKING:
    from linkly_ls.core.embedding.settings import TextEmbedder

ProgressCallback = Callable[[int, int, str], None]
#: (documents given a first-pass vector, None when the first pass could not run; seconds it took)
FirstPassCallback = Callable[[int | None, float], None]
log = logging.getLogger("linkly_ls.vectors")

#: how long `close()` waits for the background thread before leaving the indexes to it
CLOSE_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class EmbeddingState:
    """A snapshot of the embedding work, safe to read from any thread."""

    running: bool
    done: int
    total: int
    model: str | None
    #: passages of this run that reused the vector of an identical text instead of running the model
    reused: int = 0
    #: passages of this run the model embedded
    embedded: int = 0


class VectorSync:
    def __init__(
        self, catalog: Catalog, data_dir: Path, settings: EmbeddingSettings, writer_lock: WriterLock | None = None
    ) -> None:
        """`writer_lock`: the index's writer lock; vectors are written only while this process holds it."""
        self.catalog = catalog
        self.writer_lock = writer_lock or WriterLock(data_dir)
        self.directory = data_dir / "vectors"
        self.provider = EmbeddingProvider(settings, data_dir / "models")
        self.settings = settings
        self._indexes: dict[str, VectorIndex] = {}
        self._open_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._state = EmbeddingState(False, 0, 0, None)
        self._deleted: set[str] = set()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: set (under `_open_lock`) when the background thread has left its loop
        self._loop_done = False
        #: set by a `close()` that stopped waiting for the thread: the thread closes the indexes
        self._close_left_to_thread = False
        #: cleared while `load_in_background` loads the model; search meanwhile ranks by keywords alone
        self._model_loaded = threading.Event()
        self._model_loaded.set()
        #: whether this writer has removed the vectors of models no longer configured (once a process)
        self._unused_models_checked = False
        ensure_vector_tables(catalog)
        self.first_pass = FirstPass(self)
        self.refined = RefinedCoverage(catalog, self.provider)
        self.rounds = EmbeddingRounds(self)

    # opening

    def index_for(self, embedder: TextEmbedder, writer: bool = False) -> VectorIndex | None:
        """The vector index of a model: read-only, or writable when this process can take the lock."""
        with self._open_lock:
            index = self._indexes.get(embedder.model_id)
            if index is not None and (index.writable or not writer):
                index.refresh()
                return index
            first_pass = embedder.model_id == self.first_pass.model_id
            covered_by = self.first_pass.covered_by if first_pass else ()
            expansion_add = FIRST_PASS_EXPANSION_ADD if first_pass else EXPANSION_ADD

            def open_index(writable: bool) -> VectorIndex:
                return VectorIndex(
                    self.catalog, self.directory, embedder.model_id, embedder.dim,
                    writer=writable, writer_lock=self.writer_lock, covered_by=covered_by, expansion_add=expansion_add,
                )

            candidate = open_index(writer)
            if writer and not candidate.writable:
                candidate.close()
                if index is None:
                    index = open_index(False)
                    self._indexes[embedder.model_id] = index
                return None
            if index is not None:
                candidate.adopt_writer_lock(index)
                index.close()
            self._indexes[embedder.model_id] = candidate
            return candidate

    def load_in_background(self, delay_s: float = 0.0) -> None:
        """Load the model and vector index on a daemon thread after `delay_s`; until then search
        answers with keywords alone instead of loading the model itself (a language server's
        first answers must not wait seconds for it)."""
        if not self.provider.enabled or not self._model_loaded.is_set():
            return
        self._model_loaded.clear()

        def load() -> None:
            try:
                embedder = None if self._stop.wait(delay_s) else self.provider.current()
                if embedder is not None and not self._stop.is_set():
                    self.index_for(embedder)
            except Exception:  # search loads it again and reports why it cannot
                pass
            finally:
                self._model_loaded.set()

        threading.Thread(target=load, name="linkly-model-load", daemon=True).start()

    def search_index(self) -> tuple[TextEmbedder | None, VectorIndex | None, str]:
        """The embedder and vector index search should use now, or (None, None, why not).

        Loads no model while there are no vectors to compare a query with.
        """
        if not self.provider.enabled:
            return None, None, self.provider.status().reason
        if not has_vectors(self.catalog, self.provider.model_ids()):
            if self.building(None):
                return None, None, "no vectors yet (embedding is running)"
            return None, None, "no vectors yet (run `linkly index --wait`, or keep `linkly watch` running)"
        if not self._model_loaded.is_set():
            return None, None, "the embedding model is still loading"
        embedder = self.provider.current()
        if embedder is None:
            return None, None, self.provider.status().reason
        index = self.index_for(embedder)
        if index is None or len(index) == 0:
            return None, None, f"no vectors yet for model {embedder.model_id}"
        return embedder, index, f"model {embedder.model_id}"

    def table_source_model(self) -> TextEmbedder | None:
        """The model the first-pass table was distilled from, when it is loaded and search may use it
        (as in `search_index`: not while a language server holds the model back), else None. Never
        loads it: until the refining run has loaded it, first-pass search reads the query by the table."""
        if not self.first_pass.enabled or not self._model_loaded.is_set():
            return None
        model = self.provider.loaded_bundled()
        return model if model is not None and model.model_id == SOURCE_MODEL_ID else None

    # state

    def state(self) -> EmbeddingState:
        with self._state_lock:
            return self._state

    def set_state(self, **changes: object) -> None:
        """Change fields of the state (the first pass and the model's rounds report through it)."""
        with self._state_lock:
            self._state = EmbeddingState(**{**self._state.__dict__, **changes})

    def count_passages(self, reused: int, embedded: int) -> None:
        """Passages of this run that reused a stored vector, and that the model embedded."""
        with self._state_lock:
            state = self._state
            self._state = EmbeddingState(**{**state.__dict__, "reused": state.reused + reused, "embedded": state.embedded + embedded})

    def building(self, index: VectorIndex | None) -> bool:
        """True while vectors are being computed, here or by another process."""
        if self.state().running or self.provider.downloading() or not self._model_loaded.is_set():
            return True
        return index is not None and index.writer_active_elsewhere() and bool(index.missing_documents(limit=1))

    def coverage(self) -> dict[str, float]:
        """library -> share (0-1) of its words whose chunks have vectors (`RefinedCoverage.by_library`)."""
        return self.refined.by_library()

    def embedded_words(self) -> tuple[int, int] | None:
        """(words in documents whose chunks have vectors, all words), or None without vectors."""
        return self.refined.words()

    # background work

    def on_keyword_flush(self, added: list[str], deleted: list[str]) -> None:
        """Indexer callback: new or changed documents to embed, deleted ones to forget."""
        if self._thread is None:
            return
        with self._state_lock:
            self._deleted.update(deleted)
        self.first_pass.due.set()
        self._wake.set()

    def forget_documents(self, doc_ids: list[str]) -> None:
        """Drop these documents' vectors now (a removed library's): through the vector indexes this
        process writes, then the rows of every other model."""
        with self._open_lock:
            writable = [index for index in self._indexes.values() if index.writable]
        for index in writable:
            index.remove_documents(doc_ids)
            index.checkpoint()
        forget_vectors_of(self.catalog, doc_ids)

    def start(self) -> None:
        """Embed in a background thread until `close()`; wakes up after every keyword-index flush."""
        if self._thread is not None or not self.provider.enabled:
            return
        self._loop_done = False
        self._thread = threading.Thread(target=self._loop, name="linkly-embedding", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        lower_current_thread()
        try:
            while not self._stop.is_set():
                self._wake.clear()
                try:
                    self.run_until_complete()
                except Exception as error:  # a broken document or model must not kill the thread
                    self.set_state(running=False, model=f"error: {error}")
                if self.provider.downloading():
                    self._wake.wait(5.0)
                else:
                    self._wake.wait(60.0)
        finally:
            with self._open_lock:
                self._loop_done = True
                if self._close_left_to_thread:
                    self._close_indexes()

    def run_first_pass(self, on_done: FirstPassCallback | None = None) -> int | None:
        """Give every document without a first-pass vector one; how many got one, None when it could
        not run. Skipped (0) while the last run left none without and the keyword index brought nothing
        since. `on_done(documents, seconds)` is called when it ran."""
        if not self.first_pass.enabled or (self.first_pass.complete and not self.first_pass.due.is_set()):
            return 0
        started = time.monotonic()
        with self._write_lock:
            with self._state_lock:
                pending = list(self._deleted)
            documents = self.first_pass.run(pending)
        if on_done is not None:
            on_done(documents, time.monotonic() - started)
        return documents

    def _load_model_quietly(self) -> None:
        try:
            self.provider.current()
        except Exception:  # noqa: BLE001 - the refining run loads it again and reports why it cannot
            pass

    def stopping(self) -> bool:
        return self._stop.is_set()

    def run_until_complete(
        self,
        progress: ProgressCallback | None = None,
        wait_for_model: bool = False,
        on_first_pass: FirstPassCallback | None = None,
        on_model: Callable[[str], None] | None = None,
    ) -> int:
        """Embed every document that lacks vectors; returns how many were embedded.

        The first pass runs first, while the model loads on another thread (loading takes a second or
        more, the first pass about as long; first-pass search joins the model's query vector to the
        table's once the model is loaded). `on_model(model_id)` is called once the first pass is done and
        the model is loaded: from then on search reads queries as it will until the model is done.
        When another process is already embedding, waits for it to finish instead.
        """
        if self.first_pass.enabled and not self.first_pass.complete and self.provider.loaded_bundled() is None:
            threading.Thread(target=self._load_model_quietly, name="linkly-model-load", daemon=True).start()
        self.run_first_pass(on_first_pass)
        if wait_for_model:
            self.provider.wait_for_download()
        embedder = self.provider.current()
        if embedder is None:
            return 0
        if on_model is not None:
            on_model(embedder.model_id)
        with self._write_lock:
            index = self.index_for(embedder, writer=True)
            while index is None and not self._stop.is_set():
                if self._wait_for_other_writer(embedder, progress):
                    return 0
                index = self.index_for(embedder, writer=True)
            if index is None:
                return 0
            if not self._unused_models_checked:
                self._unused_models_checked = True
                in_use = [*self.provider.model_ids(), *([self.first_pass.model_id] if self.first_pass.enabled else [])]
                forget_unused_models(self.catalog, self.directory, in_use)
            with self._state_lock:
                deleted, self._deleted = list(self._deleted), set()
            index.remove_documents(deleted)
            index.checkpoint()
            self.first_pass.forget(deleted)
            return self.rounds.embed_missing(embedder, index, progress)

    def yield_to_requests(self) -> None:
        """In the background thread: wait while requests are answered; `Stopped` once `close()` is called."""
        if threading.current_thread() is not self._thread:
            return
        FOREGROUND.wait_turn(self._stop)
        if self._stop.is_set():
            raise Stopped

    def _wait_for_other_writer(self, embedder: TextEmbedder, progress: ProgressCallback | None) -> bool:
        """Another process holds the writer lock: follow its progress.

        True once nothing is missing; False when that process let go with work left.
        """
        index = self.index_for(embedder)
        assert index is not None
        total = len(index.missing_documents(limit=1_000_000_000))
        while not self._stop.is_set():
            index.refresh()
            remaining = len(index.missing_documents(limit=1_000_000_000))
            if progress and total:
                progress(total - remaining, total, "(embedding in another process)")
            if remaining == 0:
                return True
            if not index.writer_active_elsewhere():
                return False
            time.sleep(1.0)
        return True

    def close(self) -> None:
        """Stop the background thread and close the indexes.

        A model call at the lowest priority on a saturated machine can outlast the wait: the
        indexes are then not closed under it (its round still writes and checkpoints them) but
        left to the thread, which closes them, releasing the writer lock, as it stops.
        """
        self._stop.set()
        self._wake.set()
        thread = self._thread  # kept until it ends: `yield_to_requests` stops only that thread
        if thread is not None:
            thread.join(timeout=CLOSE_WAIT_SECONDS)
        with self._open_lock:
            if thread is not None and not self._loop_done:
                self._close_left_to_thread = True
                return
            self._thread = None
            self._close_indexes()

    def _close_indexes(self) -> None:
        """(`_open_lock` held.) The index that took the writer lock closes last: the others save while it is held."""
        for index in sorted(self._indexes.values(), key=lambda index: index.releases_writer_lock):
            try:
                index.close()
            except Exception as error:  # noqa: BLE001 - one index's checkpoint must not keep the others open
                log.warning("closing the vector index of %s: %s", index.model_id, error)
        self._indexes.clear()


def coverage_text(share: float) -> str:
    """A share of documents with vectors as a whole percentage, 100 % only when every document has them
    and 0 % only when none has (one document of 10,000 without vectors was rounded to `100%`)."""
    if 0 < share < 0.01:
        return "<1%"
    if 0.99 < share < 1:
        return ">99%"
    return f"{share:.0%}"
