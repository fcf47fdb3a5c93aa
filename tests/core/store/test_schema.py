"""The database file: connections, the catalog's tables, copies."""

from __future__ import annotations

import pytest

from linkly_ls.core.store.catalog import Catalog, LibraryRecord
from linkly_ls.core.store.schema import (
    SCHEMA_VERSION,
    StoreError,
    copy_database,
    create_catalog_tables,
    open_connection,
)

TABLES = {"meta", "libraries", "documents", "errors", "tombstones"}


def tables(connection) -> set[str]:
    return {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_a_writable_connection_uses_wal_and_waits_for_locks(tmp_path):
    connection = open_connection(tmp_path / "catalog.sqlite3", read_only=False)
    assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert connection.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert connection.execute("PRAGMA busy_timeout").fetchone()[0] == 30000
    connection.close()


def test_the_catalog_tables_are_created_once_with_the_schema_version(tmp_path):
    connection = open_connection(tmp_path / "catalog.sqlite3", read_only=False)
    create_catalog_tables(connection)
    create_catalog_tables(connection)  # a second start changes nothing
    assert TABLES <= tables(connection)
    assert connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == [
        (str(SCHEMA_VERSION),)
    ]
    indexes = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"documents_library", "documents_state"} <= indexes
    connection.close()


def test_a_read_only_connection_refuses_writes_with_a_store_error(tmp_path):
    path = tmp_path / "catalog.sqlite3"
    Catalog(path).close()
    reader = Catalog(path, read_only=True)
    assert reader.libraries() == []
    with pytest.raises(StoreError):
        reader.upsert_library(LibraryRecord(name="lib", paths=["/docs"]))
    reader.close()


def test_a_read_only_catalog_creates_no_file(tmp_path):
    with pytest.raises(StoreError):
        Catalog(tmp_path / "missing.sqlite3", read_only=True).count()
    assert not (tmp_path / "missing.sqlite3").exists()


def test_copy_database_copies_every_committed_row(tmp_path, make_record):
    source = Catalog(tmp_path / "source.sqlite3")
    source.upsert_library(LibraryRecord(name="lib", paths=["/docs"]))
    source.put_document(make_record("/docs/a.md"), ["# Top"])
    copy_database(source.path, tmp_path / "copy.sqlite3")
    source.close()
    copy = Catalog(tmp_path / "copy.sqlite3", read_only=True)
    assert [library.name for library in copy.libraries()] == ["lib"]
    assert copy.paths() == ["/docs/a.md"]
    assert copy.lines(copy.doc_ids()[0]) == ["# Top"]
    copy.close()


def test_a_catalog_of_schema_version_1_is_brought_up_to_date_keeping_its_libraries(tmp_path):
    path = tmp_path / "catalog.sqlite3"
    old = open_connection(path, read_only=False)
    with old:
        old.executescript(
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
            "INSERT INTO meta VALUES ('schema_version', '1');"
            "CREATE TABLE libraries (name TEXT PRIMARY KEY, description TEXT NOT NULL DEFAULT '', paths TEXT NOT NULL,"
            " include_globs TEXT NOT NULL DEFAULT '[]', exclude_globs TEXT NOT NULL DEFAULT '[]',"
            " origin TEXT NOT NULL DEFAULT 'cli', created_at REAL NOT NULL);"
            "INSERT INTO libraries(name, paths, created_at) VALUES ('notes', '[\"/notes\"]', 1.0);"
        )
    old.close()
    catalog = Catalog(path)
    assert catalog.libraries() == [LibraryRecord(name="notes", paths=["/notes"], respect_gitignore=True)]
    assert "skipped" in tables(catalog.connect()) and catalog.skipped() == []
    assert catalog.connect().execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
        str(SCHEMA_VERSION),
    )
    catalog.close()


def test_a_version_1_catalog_gains_links_and_reads_its_linked_documents_again(tmp_path):
    """The migration to version 2: name keys filled in, linked formats queued for one more read."""
    import sqlite3

    path = tmp_path / "catalog.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema_version', '1');
        CREATE TABLE documents (
            doc_id TEXT PRIMARY KEY, library TEXT NOT NULL, path TEXT NOT NULL UNIQUE, doc_type TEXT NOT NULL,
            title TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, content_hash TEXT NOT NULL,
            word_count INTEGER NOT NULL, total_lines INTEGER NOT NULL, has_outline INTEGER NOT NULL, language TEXT,
            keywords TEXT NOT NULL, outline TEXT NOT NULL, page_starts TEXT NOT NULL, warnings TEXT NOT NULL,
            text_missing_reason TEXT, indexed_at REAL NOT NULL, keyword_state TEXT NOT NULL DEFAULT 'pending',
            lines BLOB NOT NULL
        );
        INSERT INTO documents VALUES ('aaaaaaaaaaaa', 'lib', '/n/My Note.md', 'md', 'A  Title', 3, 7, 'h', 1, 1, 0,
            NULL, '[]', '[]', '[]', '[]', NULL, 1.0, 'indexed', x'');
        INSERT INTO documents VALUES ('bbbbbbbbbbbb', 'lib', '/n/slides.pptx', 'pptx', 'Slides', 3, 7, 'h2', 1, 1, 0,
            NULL, '[]', '[]', '[]', '[]', NULL, 1.0, 'indexed', x'');
        """
    )
    old.commit()
    old.close()
    catalog = Catalog(path)
    db = catalog.connect()
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    assert "links" in tables(db)
    assert catalog.documents_named("my note") == catalog.documents_named("a title") != []
    states = catalog.file_states("lib")
    assert states["/n/My Note.md"] == ("aaaaaaaaaaaa", 3, -1, "")  # read again for its links
    assert states["/n/slides.pptx"] == ("bbbbbbbbbbbb", 3, 7, "h2")  # no links in that format
    newer_pptx = catalog.file_states("lib", {"pptx": 2, "md": 1})
    assert newer_pptx["/n/slides.pptx"] == ("bbbbbbbbbbbb", 3, -1, "")  # read by the extractor before version 2
    catalog.close()
    Catalog(path).close()  # a second start changes nothing


def test_a_version_2_catalogs_name_keys_are_composed_when_it_is_opened(tmp_path):
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "noël à besançon")
    path = tmp_path / "catalog.sqlite3"
    connection = open_connection(path, read_only=False)
    create_catalog_tables(connection)
    with connection:
        connection.execute(
            "INSERT INTO documents (doc_id, library, path, doc_type, title, size, mtime_ns, content_hash, indexed_at, "
            "word_count, total_lines, has_outline, keywords, outline, page_starts, warnings, lines, name_key, title_key) "
            "VALUES ('d', 'l', '/n/x.md', 'md', 'T', 1, 1, 'h', 0, 1, 1, 0, '[]', '[]', '[]', '[]', x'', ?, ?)",
            (decomposed, "plain"),
        )
        connection.execute(
            "INSERT INTO links (source_id, ordinal, line, start_col, end_col, kind, target, text, target_name, fragment) "
            "VALUES ('d', 0, 1, 0, 0, 'wiki', 'x', '', ?, '')",
            (decomposed,),
        )
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    create_catalog_tables(connection)
    composed = unicodedata.normalize("NFC", decomposed)
    assert connection.execute("SELECT name_key, title_key FROM documents").fetchall() == [(composed, "plain")]
    assert connection.execute("SELECT target_name FROM links").fetchall() == [(composed,)]
    assert connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    connection.close()


def test_deleted_rows_leave_no_text_in_the_file(tmp_path, monkeypatch):
    """SQLite's upstream default keeps a deleted row's bytes in free pages (this build's may not): a
    deleted note's text stayed readable in the index file. Connections start with that default here,
    whatever this build's is."""
    import sqlite3

    from linkly_ls.core.store import schema

    connect = sqlite3.connect

    def upstream_default(*args, **kwargs):
        connection = connect(*args, **kwargs)
        connection.execute("PRAGMA secure_delete=OFF")
        return connection

    monkeypatch.setattr(schema.sqlite3, "connect", upstream_default)
    path = tmp_path / "catalog.sqlite3"
    connection = open_connection(path, read_only=False)
    assert connection.execute("PRAGMA secure_delete").fetchone()[0] == 1
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.executemany("INSERT INTO notes VALUES (?)", [(f"row {number} " + "filler " * 40,) for number in range(200)])
    connection.execute("INSERT INTO notes VALUES ('SSN 078-05-1120 snorkelwimbus')")
    connection.commit()
    connection.execute("DELETE FROM notes WHERE text LIKE '%snorkelwimbus%'")
    connection.commit()
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    connection.close()
    assert b"snorkelwimbus" not in path.read_bytes()
