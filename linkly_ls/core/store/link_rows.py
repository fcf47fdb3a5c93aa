"""The `links` and `aliases` tables: every document's links, and the other names a note goes by, written
with the document and read for the notes graph.

A document's links are replaced in the same transaction as its row, and
dropped with it, so they are never out of step with the text they came from.
Backlinks are found by the target's path (`target_path`, indexed) or by a
wikilink name (`target_name`, indexed); deciding which document a link really
leads to is `core/links/resolver.py`'s work.

A link already placed on a line of its own document (`target_line`: a PDF's or
an EPUB's internal links) leads to its source, so its target path is not stored
but read from the source's row: a manual holds thousands of such links, and its
path in each row (and in the path index) made up most of the table.
"""

from __future__ import annotations

from collections.abc import Callable

from linkly_ls.core.store.queries import BATCH
from linkly_ls.core.store.records import LinkRecord, title_key
from linkly_ls.core.store.schema import Connection

_LINK_COLUMNS = "line, start_col, end_col, kind, target, text, target_path, target_name, fragment, target_line"
#: the same columns read back, a placed link's target path being its source's (a join on `documents`)
_READ_COLUMNS = (
    "links.line, links.start_col, links.end_col, links.kind, links.target, links.text, "
    "CASE WHEN links.target_line IS NULL THEN links.target_path ELSE COALESCE(links.target_path, documents.path) END, "
    "links.target_name, links.fragment, links.target_line"
)
_WITH_SOURCE = "links LEFT JOIN documents ON documents.doc_id = links.source_id"


def replace_links(db: Connection, doc_id: str, links: list[LinkRecord]) -> None:
    """Inside the caller's transaction: the document's links become `links`."""
    db.execute("DELETE FROM links WHERE source_id = ?", (doc_id,))
    db.executemany(
        f"INSERT INTO links(source_id, ordinal, {_LINK_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                doc_id,
                ordinal,
                link.line,
                link.start,
                link.end,
                link.kind,
                link.target,
                link.text,
                None if link.target_line is not None else link.target_path,
                link.target_name,
                link.fragment,
                link.target_line,
            )
            for ordinal, link in enumerate(links)
        ],
    )


def replace_aliases(db: Connection, doc_id: str, aliases: list[str]) -> None:
    """Inside the caller's transaction: the names a wikilink may also give the document are `aliases`."""
    db.execute("DELETE FROM aliases WHERE doc_id = ?", (doc_id,))
    keys = dict.fromkeys(title_key(alias) for alias in aliases)
    db.executemany("INSERT INTO aliases(doc_id, key) VALUES (?, ?)", [(doc_id, key) for key in keys if key])


def replace_anchors(db: Connection, doc_id: str, anchors: dict[str, int]) -> None:
    """Inside the caller's transaction: the document's anchors (name -> line) become `anchors`."""
    db.execute("DELETE FROM anchors WHERE doc_id = ?", (doc_id,))
    db.executemany("INSERT INTO anchors(doc_id, name, line) VALUES (?, ?, ?)", [(doc_id, name, line) for name, line in anchors.items()])


def drop_links(db: Connection, doc_id: str) -> None:
    db.execute("DELETE FROM links WHERE source_id = ?", (doc_id,))


def _record(row: tuple) -> LinkRecord:
    return LinkRecord(*row)


class LinkReads:
    """The link queries, mixed into `Catalog` (whose per-thread `connect()` they use)."""

    connect: Callable[[], Connection]

    def links_from(self, doc_id: str, line: int | None = None) -> list[LinkRecord]:
        """A document's links in document order (`line`: those on that line only)."""
        on_line = "" if line is None else " AND links.line = ?"
        rows = self.connect().execute(
            f"SELECT {_READ_COLUMNS} FROM {_WITH_SOURCE} WHERE links.source_id = ?{on_line} ORDER BY links.ordinal",
            (doc_id,) if line is None else (doc_id, line),
        )
        return [_record(row) for row in rows]

    def links_to(
        self, paths: list[str], names: list[str], other_than: str | None = None, placed_between: tuple[int, int] | None = None
    ) -> list[tuple[str, LinkRecord]]:
        """(source doc_id, link) of every link whose target path is one of `paths` or whose
        wikilink name is one of `names`, by source and position; `other_than`: not from that document;
        `placed_between`: of the links placed within their own document, those to these lines only."""
        found: dict[tuple[str, int], LinkRecord] = {}
        db = self.connect()
        placed_in_source = "documents.path IN ({}) AND links.target_path IS NULL AND links.target_line IS NOT NULL"
        placed_arguments: list = []
        if placed_between is not None:
            placed_in_source += " AND links.target_line BETWEEN ? AND ?"
            placed_arguments = list(placed_between)
        not_from = "" if other_than is None else " AND links.source_id != ?"
        not_from_arguments = [] if other_than is None else [other_than]
        for condition, values, extra in (
            ("links.target_path IN ({})", paths, []),
            ("links.target_name IN ({})", names, []),
            (placed_in_source, paths, placed_arguments),
        ):
            for start in range(0, len(values), BATCH):
                batch = values[start : start + BATCH]
                where = condition.format(",".join("?" * len(batch))) + not_from
                arguments = [*batch, *extra, *not_from_arguments]
                rows = db.execute(f"SELECT links.source_id, links.ordinal, {_READ_COLUMNS} FROM {_WITH_SOURCE} WHERE {where}", arguments)
                for row in rows:
                    found[(row[0], row[1])] = _record(row[2:])
        return [(key[0], found[key]) for key in sorted(found)]

    def destination_lines(self, doc_id: str) -> dict[str, int]:
        """name -> line for the named destinations a document's own links lead to (a PDF's `nameddest=NAME`
        fragments; the first link to a name decides)."""
        rows = self.connect().execute(
            "SELECT fragment, target_line FROM links WHERE source_id = ? AND fragment LIKE 'nameddest=%' "
            "AND target_line IS NOT NULL ORDER BY ordinal DESC",
            (doc_id,),
        )
        return {fragment[len("nameddest=") :]: line for fragment, line in rows}

    def anchors_of(self, doc_id: str) -> dict[str, int]:
        """A document's anchors (an HTML page's element ids), name -> line."""
        return dict(self.connect().execute("SELECT name, line FROM anchors WHERE doc_id = ?", (doc_id,)).fetchall())

    def link_count(self, doc_id: str) -> int:
        """How many links a document has."""
        return self.connect().execute("SELECT COUNT(*) FROM links WHERE source_id = ?", (doc_id,)).fetchone()[0]

    def documents_at(self, paths: list[str]) -> dict[str, tuple[str, str, str]]:
        """path -> (doc_id, title, doc_type) for those of `paths` the catalog has."""
        found: dict[str, tuple[str, str, str]] = {}
        db = self.connect()
        for start in range(0, len(paths), BATCH):
            batch = paths[start : start + BATCH]
            marks = ",".join("?" * len(batch))
            for path, doc_id, title, doc_type in db.execute(
                f"SELECT path, doc_id, title, doc_type FROM documents WHERE path IN ({marks})", batch
            ):
                found[path] = (doc_id, title, doc_type)
        return found

    def alias_keys(self) -> dict[str, list[str]]:
        """doc_id -> the alias keys of every document that has aliases (what link completion also matches)."""
        found: dict[str, list[str]] = {}
        for doc_id, key in self.connect().execute("SELECT doc_id, key FROM aliases ORDER BY doc_id, key"):
            found.setdefault(doc_id, []).append(key)
        return found

    def aliases_of(self, doc_id: str) -> list[str]:
        """The alias keys of a document (`replace_aliases`)."""
        return [row[0] for row in self.connect().execute("SELECT key FROM aliases WHERE doc_id = ? ORDER BY key", (doc_id,))]

    def documents_named(self, key: str) -> list[tuple[str, str, str, str]]:
        """(doc_id, path, title, library) of the documents whose file name, title or an alias has this name
        key, by path."""
        rows = self.connect().execute(
            "SELECT doc_id, path, title, library FROM documents WHERE name_key = ? "
            "UNION SELECT doc_id, path, title, library FROM documents WHERE title_key = ? "
            "UNION SELECT d.doc_id, d.path, d.title, d.library FROM aliases a JOIN documents d ON d.doc_id = a.doc_id "
            "WHERE a.key = ? ORDER BY 2",
            (key, key, key),
        )
        return [tuple(row) for row in rows]  # type: ignore[misc]

    def document_names(self, library: str | None = None) -> list[tuple[str, str, str, str]]:
        """(doc_id, path, title, doc_type) of every document (of one library), by path: what link
        completion offers."""
        query = "SELECT doc_id, path, title, doc_type FROM documents"
        rows = (
            self.connect().execute(query + " WHERE library = ? ORDER BY path", (library,))
            if library is not None
            else self.connect().execute(query + " ORDER BY path")
        )
        return [tuple(row) for row in rows]  # type: ignore[misc]

    def documents_with_hash(self, content_hash: str) -> list[str]:
        """Ids of the documents with this content (copies of one file)."""
        rows = self.connect().execute("SELECT doc_id FROM documents WHERE content_hash = ?", (content_hash,))
        return [row[0] for row in rows]
