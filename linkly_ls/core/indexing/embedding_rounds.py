"""The model's rounds over the documents that lack its vectors, for `VectorSync`.

Documents are embedded newest day first and, within a day, smallest first, so
the files a user just touched and the many short notes get vectors early.

A passage whose exact text already has a vector (a copy of a document under
another name, an unchanged section of an edited document, a passage repeated in
the same round) gets that vector without running the model again.
"""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING

from linkly_ls.core.search.chunking import Chunk, embedding_passages
from linkly_ls.core.search.vectors import ChunkRef, VectorIndex
from linkly_ls.core.store.catalog import DocumentRecord

if TYPE_CHECKING:
    import numpy as np

    from linkly_ls.core.embedding.settings import TextEmbedder
    from linkly_ls.core.indexing.vector_sync import ProgressCallback, VectorSync

DOCS_PER_ROUND = 64
#: a round stops taking documents past this many passages, so vectors become visible (checkpoints) steadily
PASSAGES_PER_ROUND = 512
#: passages handed to the embedder at once: it sorts them by length into batches; `close()` waits at most one call
PASSAGES_PER_CALL = 256
CHECKPOINT_SECONDS = 5.0
#: rounds of documents the first pass reads ahead from one query for the documents missing vectors:
#: that query sorts every document (newest day first), and a first-pass round takes about 50 ms,
#: so querying once a round cost 0.34 of NFCorpus's 4.7 s and grows with the square of a library.
#: The model's rounds take seconds each and query once a round, so that a note just saved is next.
FIRST_PASS_ROUNDS_AHEAD = 16


class Stopped(Exception):
    """`VectorSync.close()` was called in the middle of a round."""


def passage_text(record: DocumentRecord, chunk: Chunk) -> str:
    """What a chunk's vector is computed from: title and heading path give the passage its context.

    A title without a letter (`100`, `2024-03-01`, a file named by a number) gives the model no
    context, only a token that pulls every such passage towards the others: measured on TIME, whose
    untitled articles take their numbered file names as titles, it cost the vector side 2 % nDCG@10.
    """
    parts = [record.title if _has_letter(record.title) else ""]
    if chunk.headings and chunk.headings.strip() != record.title.strip():
        parts.append(chunk.headings)
    parts.append(chunk.text)
    return "\n".join(part for part in parts if part)


def _has_letter(text: str) -> bool:
    return any(character.isalpha() for character in text)


def text_hash(text: str) -> int:
    """A signed 64-bit hash of a passage (fits SQLite's INTEGER); equal texts share a vector."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


class EmbeddingRounds:
    """Rounds of documents through one model into its index, for a `VectorSync` (its catalog, first
    pass, state and stop): `embed_missing` until none lacks vectors or the sync stops."""

    def __init__(self, sync: VectorSync) -> None:
        self.sync = sync

    def embed_missing(self, embedder: TextEmbedder, index: VectorIndex, progress: ProgressCallback | None) -> int:
        """Vectors for every document `index` lacks, round by round; how many documents got them."""
        total = len(index.missing_documents(limit=1_000_000_000))
        done = 0
        self.sync.set_state(running=total > 0, done=0, total=total, model=embedder.model_id, reused=0, embedded=0)
        last_checkpoint = time.monotonic()
        rounds_ahead = FIRST_PASS_ROUNDS_AHEAD if index.model_id == self.sync.first_pass.model_id else 1
        queued: list[tuple[str, str]] = []
        try:
            while not self.sync.stopping():
                if not queued:
                    wanted = DOCS_PER_ROUND * rounds_ahead
                    queued = index.missing_documents(limit=wanted)
                    # documents saved since the count are missing too: the total grows with them, and is
                    # exact once the rest fits in the queue (status said "713 of 9 documents")
                    total = done + len(queued) if len(queued) < wanted else max(total, done + len(queued))
                    self.sync.set_state(total=total)
                missing = queued[:DOCS_PER_ROUND]
                if index.model_id != self.sync.first_pass.model_id:
                    self.sync.first_pass.catch_up([doc_id for doc_id, _ in missing])
                if not missing:
                    break
                try:
                    taken, consumed = self.embed_round(embedder, index, missing, progress, done, max(total, done + len(missing)))
                except Stopped:
                    break
                done += taken
                queued = queued[consumed:]
                self.sync.set_state(done=done)
                if time.monotonic() - last_checkpoint > CHECKPOINT_SECONDS:
                    index.checkpoint()
                    last_checkpoint = time.monotonic()
        finally:
            index.checkpoint()
            if index.model_id != self.sync.first_pass.model_id and not self.sync.stopping():
                self.sync.first_pass.empty_when_all_refined()  # when stopped, the next first pass does
            self.sync.set_state(running=False)
        return done

    def embed_round(
        self,
        embedder: TextEmbedder,
        index: VectorIndex,
        missing: list[tuple[str, str]],
        progress: ProgressCallback | None,
        done: int,
        total: int,
    ) -> tuple[int, int]:
        """Vectors for the first of `missing`: how many documents got them, and how many entries of
        `missing` the round used up (those it found deleted included; it leaves the rest once it holds
        PASSAGES_PER_ROUND passages)."""
        self.sync.yield_to_requests()
        records = self.sync.catalog.get_many([doc_id for doc_id, _ in missing])
        documents: list[tuple[DocumentRecord, list[Chunk]]] = []
        passages: list[str] = []
        consumed = 0
        for doc_id, _ in missing:
            if passages and len(passages) >= PASSAGES_PER_ROUND:
                break  # the rest stays missing: the next round takes it
            consumed += 1
            record = records.get(doc_id)
            if record is None:
                continue
            chunks = embedding_passages(self.sync.catalog.lines(doc_id), record.outline, record.page_starts)
            documents.append((record, chunks))
            passages.extend(passage_text(record, chunk) for chunk in chunks)
        hashes = [text_hash(passage) for passage in passages]
        vectors = self._vectors_for(embedder, index, passages, hashes)
        offset = 0
        added = []
        for record, chunks in documents:
            refs = [
                ChunkRef(record.doc_id, c.number, c.start_line, c.end_line, hashes[offset + position])
                for position, c in enumerate(chunks)
            ]
            added.append((record.doc_id, record.content_hash, refs, vectors[offset : offset + len(chunks)]))
            offset += len(chunks)
        index.remove_documents([record.doc_id for record, _ in documents])
        index.add_documents(added)
        if progress:
            for number, (record, _) in enumerate(documents, start=done + 1):
                progress(number, total, record.path)
        return len(documents), consumed

    def _vectors_for(self, embedder: TextEmbedder, index: VectorIndex, passages: list[str], hashes: list[int]) -> np.ndarray:
        """One vector per passage: stored ones for texts seen before, the model for the rest (each text once)."""
        import numpy as np  # loaded with the vectors, not with every open index

        known = index.vectors_for_texts(list(set(hashes)))
        first_of: dict[int, int] = {}
        for position, value in enumerate(hashes):
            if value not in known:
                first_of.setdefault(value, position)
        fresh = list(first_of.values())
        computed = self._embed_in_calls(embedder, [passages[i] for i in fresh])
        for row, position in enumerate(fresh):
            known[hashes[position]] = computed[row]
        self.sync.count_passages(reused=len(passages) - len(fresh), embedded=len(fresh))
        vectors = np.zeros((len(passages), embedder.dim), dtype=np.float32)
        for position, value in enumerate(hashes):
            vectors[position] = known[value]
        return vectors

    def _embed_in_calls(self, embedder: TextEmbedder, passages: list[str]) -> np.ndarray:
        """The model's vectors; in the background, yielding to requests before each model call
        (before each call of PASSAGES_PER_CALL passages, for an embedder that cannot pause)."""
        import numpy as np

        vectors = np.zeros((len(passages), embedder.dim), dtype=np.float32)
        pauses = getattr(embedder, "pauses_between_batches", False)
        for start in range(0, len(passages), PASSAGES_PER_CALL):
            if self.sync.stopping():
                raise Stopped
            part = passages[start : start + PASSAGES_PER_CALL]
            if pauses:
                vectors[start : start + len(part)] = embedder.embed_passages(  # type: ignore[call-arg]
                    part, self.sync.settings.batch_size, pause=self.sync.yield_to_requests
                )
            else:
                self.sync.yield_to_requests()
                vectors[start : start + len(part)] = embedder.embed_passages(part, self.sync.settings.batch_size)
        return vectors
