"""The rows behind the vector index: which chunk each usearch key is, and which documents have vectors.

Two tables of the catalog database. `vector_chunks` maps a model's integer key
to (doc_id, chunk number, line range, hash of the embedded text); `vector_docs`
records which version (content hash) of a document a model's vectors were
computed from, how many chunks it has and by which chunking version
(`core/search/chunking.py`) it was cut. A document has *current* vectors when
its `vector_docs` row names the content hash the catalog now has; vectors cut by
an older chunking stay current (they are true to the text) but the document is
*missing* again, so the vector pass cuts it anew, reusing the vector of every
passage whose text did not change.

`VectorRows` answers for one model; `VectorIndex` (core/search/vectors.py)
decides when rows are committed relative to its saved file.
"""

from __future__ import annotations

from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.queries import BATCH

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_chunks (
    model TEXT NOT NULL,
    key INTEGER NOT NULL,
    doc_id TEXT NOT NULL,
    chunk INTEGER NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    text_hash INTEGER,
    PRIMARY KEY (model, key)
);
CREATE INDEX IF NOT EXISTS vector_chunks_of_doc ON vector_chunks(doc_id, model, key, chunk, start_line, end_line);
CREATE TABLE IF NOT EXISTS vector_docs (
    model TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    chunks INTEGER NOT NULL,
    chunking INTEGER NOT NULL DEFAULT 1,
    PRIMARY KEY (model, doc_id)
);
"""

#: a `vector_chunks` row: (model, key, doc_id, chunk, start_line, end_line, text_hash)
ChunkRow = tuple[str, int, str, int, int, int, int | None]
#: a `vector_docs` row: (model, doc_id, content_hash, chunks)
DocRow = tuple[str, str, str, int]
#: a current chunk: (key, doc_id, chunk, start_line, end_line)
CurrentChunk = tuple[int, str, int, int, int]


def cut_again(catalog: Catalog, doc_ids: list[str]) -> None:
    """Documents read again with their content unchanged (a newer extractor): every model's vectors
    stay current, as their content hash still matches, but the documents are missing again, so the
    vector pass cuts the text as now read, reusing the vector of every passage that did not change."""
    db = catalog.connect()
    if not doc_ids or db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_docs'").fetchone() is None:
        return
    with db:
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            db.execute(f"UPDATE vector_docs SET chunking = 0 WHERE doc_id IN ({','.join('?' * len(batch))})", batch)


def ensure_vector_tables(catalog: Catalog) -> None:
    """Create the vector tables that are missing, and bring older ones up to date."""
    with catalog.connect() as db:
        db.executescript(_SCHEMA)
        columns = {row[1] for row in db.execute("PRAGMA table_info(vector_chunks)")}
        if "text_hash" not in columns:  # an index from before text reuse: its rows just never match
            db.execute("ALTER TABLE vector_chunks ADD COLUMN text_hash INTEGER")
        db.execute("CREATE INDEX IF NOT EXISTS vector_chunks_text ON vector_chunks(model, text_hash)")
        # the documents' chunk rows come from `vector_chunks_of_doc` alone (`current_chunks_of_documents`),
        # which also serves what the older index served (a model's rows of a document); its document comes
        # first, so a model's rows by key keep the primary key
        db.execute("DROP INDEX IF EXISTS vector_chunks_doc")
        columns = {row[1] for row in db.execute("PRAGMA table_info(vector_docs)")}
        if "chunking" not in columns:  # an index from before chunking versions: cut by version 1
            db.execute("ALTER TABLE vector_docs ADD COLUMN chunking INTEGER NOT NULL DEFAULT 1")


def has_vectors(catalog: Catalog, model_ids: list[str]) -> bool:
    """Whether any of these models has stored vectors, without loading a model."""
    marks = ",".join("?" * len(model_ids))
    row = catalog.connect().execute(
        f"SELECT 1 FROM vector_docs WHERE model IN ({marks}) AND chunks > 0 LIMIT 1", model_ids
    ).fetchone()
    return row is not None


def stored_vector_rows(catalog: Catalog) -> tuple[list[ChunkRow], list[DocRow]] | None:
    """Every vector row of every model, for checks of a data dir from outside; None before the tables exist."""
    db = catalog.connect()
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "vector_chunks" not in tables:
        return None
    chunks = db.execute(
        "SELECT model, key, doc_id, chunk, start_line, end_line, text_hash FROM vector_chunks"
    ).fetchall()
    docs = db.execute("SELECT model, doc_id, content_hash, chunks FROM vector_docs").fetchall()
    return chunks, docs


def forget_all_vectors(catalog: Catalog) -> None:
    """Delete every model's vector rows (a copied data dir starts embedding from scratch)."""
    with catalog.connect() as db:
        for table in ("vector_chunks", "vector_docs"):
            if db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                db.execute(f"DELETE FROM {table}")


def stored_models(catalog: Catalog) -> dict[str, int]:
    """model -> how many chunks its stored vectors cover."""
    rows = catalog.connect().execute("SELECT model, SUM(chunks) FROM vector_docs GROUP BY model")
    return {model: int(chunks or 0) for model, chunks in rows}


def forget_vectors_of(catalog: Catalog, doc_ids: list[str]) -> None:
    """Delete these documents' vector rows of every model (a removed library's); the saved index's keys
    without rows are dropped when a writer next opens it."""
    db = catalog.connect()
    for start in range(0, len(doc_ids), BATCH):
        batch = doc_ids[start : start + BATCH]
        marks = ",".join("?" * len(batch))
        with db:
            db.execute(f"DELETE FROM vector_chunks WHERE doc_id IN ({marks})", batch)
            db.execute(f"DELETE FROM vector_docs WHERE doc_id IN ({marks})", batch)


class VectorRows:
    """The vector rows of one model. Each call uses the calling thread's catalog connection."""

    def __init__(self, catalog: Catalog, model_id: str, chunking: int = 1, covered_by: tuple[str, ...] = ()) -> None:
        """`chunking`: the chunking version rows are written with; documents cut by an older one are missing.
        `covered_by`: models whose current vectors stand in for this one's (a document the model has
        refined gets no new first-pass vectors): such a document is neither missing nor uncovered."""
        self.catalog = catalog
        self.model_id = model_id
        self.chunking = chunking
        self.covered_by = covered_by
        #: (connection, its (data_version, total_changes), coverage) of the last `coverage()`
        self._coverage: tuple[object, tuple[int, int], dict[str, tuple[int, int]]] | None = None

    # writing

    def commit(self, chunks: list[ChunkRow], docs: list[DocRow]) -> None:
        """Insert or replace chunk rows and document rows in one transaction."""
        with self.catalog.connect() as db:
            db.executemany(
                "INSERT OR REPLACE INTO vector_chunks (model, key, doc_id, chunk, start_line, end_line, text_hash) "
                "VALUES (?,?,?,?,?,?,?)",
                chunks,
            )
            db.executemany(
                "INSERT OR REPLACE INTO vector_docs (model, doc_id, content_hash, chunks, chunking) VALUES (?,?,?,?,?)",
                [(*doc, self.chunking) for doc in docs],
            )

    def delete_documents(self, doc_ids: list[str]) -> None:
        """Delete these documents' rows, one transaction per batch of ids."""
        db = self.catalog.connect()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            with db:
                db.execute(f"DELETE FROM vector_chunks WHERE model = ? AND doc_id IN ({marks})", [self.model_id, *batch])
                db.execute(f"DELETE FROM vector_docs WHERE model = ? AND doc_id IN ({marks})", [self.model_id, *batch])

    def delete_all(self) -> None:
        """Delete every row of this model."""
        with self.catalog.connect() as db:
            db.execute("DELETE FROM vector_chunks WHERE model = ?", (self.model_id,))
            db.execute("DELETE FROM vector_docs WHERE model = ?", (self.model_id,))

    # keys

    def max_key(self) -> int:
        """The largest key with a row (0 when there is none)."""
        row = self.catalog.connect().execute(
            "SELECT MAX(key) FROM vector_chunks WHERE model = ?", (self.model_id,)
        ).fetchone()
        return int(row[0] or 0)

    def keys(self) -> set[int]:
        """Every key with a row."""
        rows = self.catalog.connect().execute("SELECT key FROM vector_chunks WHERE model = ?", (self.model_id,))
        return {row[0] for row in rows}

    def count(self) -> int:
        """How many chunk rows the model has."""
        row = self.catalog.connect().execute(
            "SELECT COUNT(*) FROM vector_chunks WHERE model = ?", (self.model_id,)
        ).fetchone()
        return int(row[0])

    def document_count(self) -> int:
        """How many documents have rows of this model."""
        row = self.catalog.connect().execute(
            "SELECT COUNT(*) FROM vector_docs WHERE model = ?", (self.model_id,)
        ).fetchone()
        return int(row[0])

    def keys_of(self, doc_ids: list[str]) -> list[int]:
        """The keys of these documents' chunk rows (current or not)."""
        rows = self._in_batches("SELECT key FROM vector_chunks WHERE model = ? AND doc_id IN ({marks})", [self.model_id], doc_ids)
        return [row[0] for row in rows]

    def keys_for_texts(self, text_hashes: list[int]) -> dict[int, int]:
        """text hash -> the smallest key of a chunk row with that text hash, for the hashes that have one."""
        db = self.catalog.connect()
        found: dict[int, int] = {}
        for start in range(0, len(text_hashes), BATCH):
            batch = text_hashes[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            for text_hash, key in db.execute(
                f"SELECT text_hash, MIN(key) FROM vector_chunks WHERE model = ? AND text_hash IN ({marks}) "
                "GROUP BY text_hash",
                [self.model_id, *batch],
            ):
                found[text_hash] = key
        return found

    # current chunks

    def current_chunks_of_documents(self, doc_ids: list[str]) -> list[CurrentChunk]:
        """The chunks of those of `doc_ids` whose vectors are current. Which documents are current is
        asked once a document, then their rows are read from the `vector_chunks_of_doc` index alone:
        joining every chunk row to its document cost 7 ms a hybrid search at 50k chunks, this 2 ms."""
        return self._in_batches(
            "SELECT c.key, c.doc_id, c.chunk, c.start_line, c.end_line FROM vector_chunks c "
            "WHERE c.model = ? AND c.doc_id IN (SELECT v.doc_id FROM vector_docs v JOIN documents d "
            "ON d.doc_id = v.doc_id AND d.content_hash = v.content_hash WHERE v.model = ? AND v.doc_id IN ({marks}))",
            [self.model_id, self.model_id],
            doc_ids,
        )

    def current_chunks_of_keys(self, keys: list[int]) -> list[CurrentChunk]:
        """The chunks of `keys` that are current: rows of deleted or since-changed documents are left out."""
        return self._in_batches(
            "SELECT c.key, c.doc_id, c.chunk, c.start_line, c.end_line FROM vector_chunks c "
            "JOIN vector_docs v ON v.model = c.model AND v.doc_id = c.doc_id "
            "JOIN documents d ON d.doc_id = c.doc_id AND d.content_hash = v.content_hash "
            "WHERE c.model = ? AND c.key IN ({marks})",
            [self.model_id],
            keys,
        )

    def _in_batches(self, sql: str, leading: list, values: list) -> list:
        """The rows of `sql` for every batch of `values`, which its `{marks}` stands for, after the `leading` arguments."""
        db = self.catalog.connect()
        rows: list = []
        for start in range(0, len(values), BATCH):
            batch = values[start : start + BATCH]
            rows.extend(db.execute(sql.format(marks=",".join("?" * len(batch))), [*leading, *batch]))
        return rows

    # documents

    def documents_with_vectors(self, doc_ids: list[str]) -> set[str]:
        """Those of `doc_ids` whose vectors are current."""
        db = self.catalog.connect()
        have: set[str] = set()
        for start in range(0, len(doc_ids), BATCH):
            batch = doc_ids[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            have.update(
                row[0]
                for row in db.execute(
                    "SELECT v.doc_id FROM vector_docs v JOIN documents d ON d.doc_id = v.doc_id "
                    f"AND d.content_hash = v.content_hash WHERE v.model = ? AND v.doc_id IN ({marks})",
                    [self.model_id, *batch],
                )
            )
        return have

    def outdated_documents(self) -> list[str]:
        """Documents with vectors that were deleted from the catalog or changed since they were embedded."""
        return [
            row[0]
            for row in self.catalog.connect().execute(
                "SELECT v.doc_id FROM vector_docs v LEFT JOIN documents d ON d.doc_id = v.doc_id "
                "WHERE v.model = ? AND (d.doc_id IS NULL OR d.content_hash != v.content_hash)",
                (self.model_id,),
            )
        ]

    def missing_documents(self, limit: int) -> list[tuple[str, str]]:
        """(doc_id, content_hash) of at most `limit` documents without current vectors, or cut by an older
        chunking, and not covered by another model's: newest day first, then smallest."""
        rows = self.catalog.connect().execute(
            "SELECT d.doc_id, d.content_hash FROM documents d LEFT JOIN vector_docs v "
            "ON v.model = ? AND v.doc_id = d.doc_id AND v.content_hash = d.content_hash AND v.chunking >= ? "
            f"WHERE v.doc_id IS NULL{self._not_covered()} "
            "ORDER BY d.mtime_ns / 86400000000000 DESC, d.word_count ASC LIMIT ?",
            (self.model_id, self.chunking, *self.covered_by, limit),
        )
        return rows.fetchall()

    def covered_documents(self) -> list[str]:
        """Documents with this model's rows whose current vectors of a `covered_by` model stand in for them."""
        if not self.covered_by:
            return []
        marks = ",".join("?" * len(self.covered_by))
        rows = self.catalog.connect().execute(
            "SELECT v.doc_id FROM vector_docs v JOIN documents d ON d.doc_id = v.doc_id "
            "JOIN vector_docs r ON r.doc_id = d.doc_id AND r.content_hash = d.content_hash "
            f"AND r.model IN ({marks}) WHERE v.model = ? GROUP BY v.doc_id",
            (*self.covered_by, self.model_id),
        )
        return [row[0] for row in rows]

    def _not_covered(self) -> str:
        """A condition on documents `d`: no current vectors of a `covered_by` model (its ids bound in order)."""
        if not self.covered_by:
            return ""
        marks = ",".join("?" * len(self.covered_by))
        return (
            " AND NOT EXISTS (SELECT 1 FROM vector_docs r WHERE r.doc_id = d.doc_id "
            f"AND r.content_hash = d.content_hash AND r.model IN ({marks}))"
        )

    def coverage(self) -> dict[str, tuple[int, int]]:
        """library -> (words in documents with current vectors or covered, all words). Every hybrid search asks and
        the answer reads all documents, so it is kept until the database changes: `data_version` moves
        when another connection commits, `total_changes` when this thread's connection does."""
        db = self.catalog.connect()
        stamp = (db.execute("PRAGMA data_version").fetchone()[0], db.total_changes)
        cached = self._coverage
        if cached is not None and cached[0] is db and cached[1] == stamp:
            return dict(cached[2])
        rows = db.execute(
            f"SELECT d.library, SUM(CASE WHEN v.doc_id IS NULL{self._not_covered()} THEN 0 ELSE d.word_count END), "
            "SUM(d.word_count) FROM documents d LEFT JOIN vector_docs v "
            "ON v.model = ? AND v.doc_id = d.doc_id AND v.content_hash = d.content_hash GROUP BY d.library",
            (*self.covered_by, self.model_id),
        )
        coverage = {library: (int(done or 0), int(total or 0)) for library, done, total in rows}
        self._coverage = (db, stamp, coverage)
        return dict(coverage)
