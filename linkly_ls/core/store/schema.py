"""The catalog database file: how a connection to it is opened, its tables, and their migrations.

One SQLite database in WAL mode holds the catalog (libraries, documents with
their lines, extraction errors, tombstones of deleted documents) and the vector
rows (`vector_rows.py` owns those two tables), and the files each library's
walk left out (`skipped`, counted per folder and reason). Every connection waits up to 30 s
for a lock instead of failing at once: one process writes, others read beside it.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path

#: 2: links (`link_rows.py`), the documents' name keys for resolving wikilinks, the files each walk
#: skipped (`skipped`) and the libraries' `respect_gitignore`
SCHEMA_VERSION = 3

#: what every storage call raises when the database cannot be read or written (a full disk, a
#: read-only folder, a damaged file, a lock held past the timeout); callers outside `store/`
#: catch this name, never the driver's own
StoreError = sqlite3.Error

#: the type of a connection storage hands between its own modules (never outside `store/`)
Connection = sqlite3.Connection

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS libraries (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL DEFAULT '',
    paths TEXT NOT NULL,
    include_globs TEXT NOT NULL DEFAULT '[]',
    exclude_globs TEXT NOT NULL DEFAULT '[]',
    origin TEXT NOT NULL DEFAULT 'cli',
    created_at REAL NOT NULL,
    respect_gitignore INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    library TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    doc_type TEXT NOT NULL,
    title TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    word_count INTEGER NOT NULL,
    total_lines INTEGER NOT NULL,
    has_outline INTEGER NOT NULL,
    language TEXT,
    keywords TEXT NOT NULL,
    outline TEXT NOT NULL,
    page_starts TEXT NOT NULL,
    warnings TEXT NOT NULL,
    text_missing_reason TEXT,
    indexed_at REAL NOT NULL,
    keyword_state TEXT NOT NULL DEFAULT 'pending',
    lines BLOB NOT NULL,
    name_key TEXT NOT NULL DEFAULT '',
    title_key TEXT NOT NULL DEFAULT '',
    links_state TEXT NOT NULL DEFAULT 'done',
    extractor INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS documents_library ON documents(library);
CREATE INDEX IF NOT EXISTS documents_state ON documents(keyword_state);
CREATE TABLE IF NOT EXISTS errors (
    path TEXT PRIMARY KEY,
    library TEXT NOT NULL,
    message TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    at REAL NOT NULL,
    extractor INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS tombstones (doc_id TEXT PRIMARY KEY);
CREATE TABLE IF NOT EXISTS skipped (
    library TEXT NOT NULL,
    folder TEXT NOT NULL,
    reason TEXT NOT NULL,
    count INTEGER NOT NULL,
    PRIMARY KEY (library, folder, reason)
);
CREATE TABLE IF NOT EXISTS links (
    source_id TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    line INTEGER NOT NULL,
    start_col INTEGER NOT NULL,
    end_col INTEGER NOT NULL,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    text TEXT NOT NULL,
    target_path TEXT,
    target_name TEXT,
    fragment TEXT NOT NULL,
    target_line INTEGER,
    PRIMARY KEY (source_id, ordinal)
);
CREATE INDEX IF NOT EXISTS links_target_path ON links(target_path);
CREATE INDEX IF NOT EXISTS links_target_name ON links(target_name);
CREATE TABLE IF NOT EXISTS aliases (doc_id TEXT NOT NULL, key TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS aliases_key ON aliases(key);
CREATE INDEX IF NOT EXISTS aliases_doc ON aliases(doc_id);
CREATE TABLE IF NOT EXISTS anchors (doc_id TEXT NOT NULL, name TEXT NOT NULL, line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS anchors_doc ON anchors(doc_id, name);
CREATE TABLE IF NOT EXISTS moved (doc_id TEXT PRIMARY KEY, now_id TEXT NOT NULL);
"""

#: column additions of later schema versions, applied to a catalog an older version created
_ADDED_COLUMNS = (
    ("libraries", "respect_gitignore", "INTEGER NOT NULL DEFAULT 1"),
    # the version of the extractor that read the document (`extract.EXTRACTOR_VERSIONS`)
    ("documents", "extractor", "INTEGER NOT NULL DEFAULT 1"),
    ("errors", "extractor", "INTEGER NOT NULL DEFAULT 1"),
)

#: the document types whose extractors find links: their documents are read again once after the
#: catalog gains the links table, since an older catalog holds their text but not their links
LINKED_TYPES = ("md", "mdx", "html", "docx", "pdf", "epub")


#: how long a statement waits for another connection's lock; emptying the log waits LOG_EMPTYING_WAIT_MS only
BUSY_TIMEOUT_MS = 30_000
LOG_EMPTYING_WAIT_MS = 100


def open_connection(path: Path, read_only: bool) -> Connection:
    """A new connection: read-only ones open the file as it is; writable ones switch it to WAL."""
    if read_only:
        connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30, check_same_thread=False)
    else:
        connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        # a deleted document's text is overwritten, not left in free pages: SQLite's own default keeps it
        # (some builds, not all, turn this on)
        connection.execute("PRAGMA secure_delete=ON")
    connection.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return connection


def create_catalog_tables(db: Connection) -> None:
    """Create the catalog's tables that are missing, bring an older catalog up to this
    SCHEMA_VERSION, and record it (one transaction)."""
    with db:
        tables = _tables(db)
        if "documents" in tables:
            _add_document_columns(db)
            if "links" in tables and _stored_version(db) < 3:  # (a version 1 catalog's keys are composed above)
                _compose_name_keys(db)
        db.executescript(_SCHEMA)
        for table, column, declaration in _ADDED_COLUMNS:
            columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if column not in columns:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
        db.execute("CREATE INDEX IF NOT EXISTS documents_name_key ON documents(name_key)")
        db.execute("CREATE INDEX IF NOT EXISTS documents_title_key ON documents(title_key)")
        db.execute(
            "INSERT INTO meta(key, value) VALUES ('schema_version', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value WHERE CAST(value AS INTEGER) < ?",
            (str(SCHEMA_VERSION), SCHEMA_VERSION),
        )


def _tables(db: Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _add_document_columns(db: Connection) -> None:
    """Version 1 to 2: the name keys (filled from each document's path and title) and `links_state`,
    'pending' for the documents whose links the next index run reads (see LINKED_TYPES)."""
    from linkly_ls.core.store.records import name_key, title_key

    columns = {row[1] for row in db.execute("PRAGMA table_info(documents)")}
    if "links_state" in columns:
        return
    db.execute("ALTER TABLE documents ADD COLUMN name_key TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE documents ADD COLUMN title_key TEXT NOT NULL DEFAULT ''")
    db.execute("ALTER TABLE documents ADD COLUMN links_state TEXT NOT NULL DEFAULT 'done'")
    rows = db.execute("SELECT doc_id, path, title FROM documents").fetchall()
    db.executemany(
        "UPDATE documents SET name_key = ?, title_key = ? WHERE doc_id = ?",
        [(name_key(path), title_key(title), doc_id) for doc_id, path, title in rows],
    )
    marks = ",".join("?" * len(LINKED_TYPES))
    db.execute(f"UPDATE documents SET links_state = 'pending' WHERE doc_type IN ({marks})", LINKED_TYPES)


def _stored_version(db: Connection) -> int:
    row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def _compose_name_keys(db: Connection) -> None:
    """Version 2 to 3: the name keys of documents and wikilinks in Unicode's composed form (NFC), so that
    `[[Noël]]` typed on one machine names `Noël.md` whose name macOS wrote decomposed. A key is its
    text casefolded; composing the stored key gives the key of version 3 (`records.name_key`)."""
    rows = db.execute("SELECT doc_id, name_key, title_key FROM documents").fetchall()
    db.executemany(
        "UPDATE documents SET name_key = ?, title_key = ? WHERE doc_id = ?",
        [(_composed(name), _composed(title), doc_id) for doc_id, name, title in rows if not (name + title).isascii()],
    )
    links = db.execute("SELECT source_id, ordinal, target_name FROM links WHERE target_name IS NOT NULL").fetchall()
    db.executemany(
        "UPDATE links SET target_name = ? WHERE source_id = ? AND ordinal = ?",
        [(_composed(name), source, ordinal) for source, ordinal, name in links if not name.isascii()],
    )


def _composed(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of the database at `source` (read-only there) into the file `target`."""
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as reader:
        with sqlite3.connect(target) as writer:
            reader.backup(writer)
