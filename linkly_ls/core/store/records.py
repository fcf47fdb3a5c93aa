"""What the catalog stores and returns: typed records, and how they map to and from table rows."""

from __future__ import annotations

import hashlib
import json
import posixpath
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from linkly_ls.core.document import OutlineNode
from linkly_ls.core.search.analysis import MAX_KEYWORD_CHARS
from linkly_ls.core.store.line_blocks import encode_lines

DOC_COLUMNS = (
    "doc_id, library, path, doc_type, title, size, mtime_ns, content_hash, word_count, "
    "total_lines, has_outline, language, keywords, outline, page_starts, warnings, "
    "text_missing_reason, indexed_at"
)
#: the same without the outline, whose parsing is most of a record's cost for a long book (3 ms for R's manual)
DOC_COLUMNS_NO_OUTLINE = DOC_COLUMNS.replace(" outline,", " '[]',")
#: the columns of a `DocumentSummary`, in its field order
SUMMARY_COLUMNS = (
    "doc_id, library, path, doc_type, title, size, mtime_ns, content_hash, word_count, total_lines, "
    "has_outline, keywords, text_missing_reason, language"
)
#: the columns of a `DocumentLayout`
LAYOUT_COLUMNS = "doc_id, page_starts, outline"


def make_doc_id(path: str) -> str:
    """A document's id: stable for a path across restarts, re-indexing and rebuilds."""
    return hashlib.sha1(path.encode("utf-8", "surrogateescape")).hexdigest()[:12]


def name_key(path: str) -> str:
    """How a wikilink names a document by its file: the file name without its extension, casefolded,
    composed (NFC: macOS writes `Noël` in a file name decomposed)."""
    stem, _ = posixpath.splitext(posixpath.basename(path.replace("\\", "/")))
    return unicodedata.normalize("NFC", " ".join(stem.split()).casefold())


def title_key(title: str) -> str:
    """How a wikilink names a document by its title (composed, as `name_key`)."""
    return unicodedata.normalize("NFC", " ".join(title.split()).casefold())


@dataclass
class LinkRecord:
    """One link as the catalog keeps it (see core/links/targets.py for how targets are read).

    `target_path` is the absolute path a path link leads to (or the source's own
    path for a link inside it); `target_name` is a wikilink's name key; both are
    None for a URL or a site-absolute path. `fragment` is the #part;
    `target_line` a line the extractor already knows.
    """

    line: int
    start: int
    end: int
    kind: str
    target: str
    text: str
    target_path: str | None
    target_name: str | None
    fragment: str
    target_line: int | None


@dataclass
class LibraryRecord:
    name: str
    paths: list[str]
    description: str = ""
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    #: "cli" (`linkly index PATH`), "config" (the config file or an editor's settings), "workspace"
    #: (an editor's workspace folder)
    origin: str = "cli"
    #: whether `.gitignore` and `.ignore` files inside the library's folders keep files out
    respect_gitignore: bool = True


def holding_library(libraries: Iterable[LibraryRecord], path: Path) -> LibraryRecord | None:
    """The library whose folder holds `path` most closely (the innermost, when one lies inside another)."""
    best: tuple[int, LibraryRecord] | None = None
    for library in libraries:
        for root in library.paths:
            root_path = Path(root)
            if path == root_path or path.is_relative_to(root_path):
                depth = len(root_path.parts)
                if best is None or depth > best[0]:
                    best = (depth, library)
    return best[1] if best else None


@dataclass
class DocumentRecord:
    """Everything the catalog knows about one document, except its lines."""

    doc_id: str
    library: str
    path: str
    doc_type: str
    title: str
    size: int
    mtime_ns: int
    content_hash: str
    word_count: int
    total_lines: int
    has_outline: bool
    language: str | None
    keywords: list[str]
    outline: list[OutlineNode]
    page_starts: list[int]
    warnings: list[str]
    text_missing_reason: str | None
    indexed_at: float

    @property
    def modified_at(self) -> float:
        return self.mtime_ns / 1e9


@dataclass
class DocumentSummary:
    """What a search hit shows of a document's record (a full record also parses its outline, large for books)."""

    doc_id: str
    library: str
    path: str
    doc_type: str
    title: str
    size: int
    mtime_ns: int
    content_hash: str
    word_count: int
    total_lines: int
    has_outline: bool
    keywords: list[str]
    text_missing_reason: str | None
    #: the language detected (ISO 639-1), which decides the readings of its words a snippet marks
    language: str | None = None

    @property
    def modified_at(self) -> float:
        return self.mtime_ns / 1e9


@dataclass(frozen=True)
class SkippedCount:
    """How many files of one folder a library's last full walk left out, for one reason."""

    library: str
    folder: str
    reason: str
    count: int


@dataclass
class DocumentLayout:
    """Where a document's pages and sections begin, for the provenance of a hit or a match.

    The outline stays as stored (nested dicts with `title`, `start_line`, `end_line`,
    `children`): finding the sections of a few lines never needs its node objects.
    """

    doc_id: str
    page_starts: list[int]
    outline: list[dict]


@dataclass
class ErrorRecord:
    path: str
    library: str
    message: str
    size: int
    mtime_ns: int
    #: the version of the extractor that failed (`extract.EXTRACTOR_VERSIONS`): a newer one tries again
    extractor: int = 1


def library_row(library: LibraryRecord, created_at: float) -> tuple:
    return (
        library.name,
        library.description,
        json.dumps(library.paths),
        json.dumps(library.include),
        json.dumps(library.exclude),
        library.origin,
        int(library.respect_gitignore),
        created_at,
    )


def library_from_row(row: tuple) -> LibraryRecord:
    return LibraryRecord(
        name=row[0],
        description=row[1],
        paths=json.loads(row[2]),
        include=json.loads(row[3]),
        exclude=json.loads(row[4]),
        origin=row[5],
        respect_gitignore=bool(row[6]),
    )


def document_row(record: DocumentRecord, lines: list[str]) -> tuple:
    """The values of `DOC_COLUMNS` followed by the encoded lines."""
    blob = encode_lines(lines)
    return (
        record.doc_id,
        record.library,
        record.path,
        record.doc_type,
        record.title,
        record.size,
        record.mtime_ns,
        record.content_hash,
        record.word_count,
        record.total_lines,
        int(record.has_outline),
        record.language,
        json.dumps(record.keywords, ensure_ascii=False),
        json.dumps([node.to_dict() for node in record.outline], ensure_ascii=False),
        json.dumps(record.page_starts),
        json.dumps(record.warnings, ensure_ascii=False),
        record.text_missing_reason,
        record.indexed_at,
        blob,
    )


def document_from_row(row: tuple) -> DocumentRecord:
    """A record from the values of `DOC_COLUMNS` (or `DOC_COLUMNS_NO_OUTLINE`)."""
    return DocumentRecord(
        doc_id=row[0],
        library=row[1],
        path=row[2],
        doc_type=row[3],
        title=row[4],
        size=row[5],
        mtime_ns=row[6],
        content_hash=row[7],
        word_count=row[8],
        total_lines=row[9],
        has_outline=bool(row[10]),
        language=row[11],
        keywords=_stored_keywords(row[12]),
        outline=[OutlineNode.from_dict(node) for node in json.loads(row[13])],
        page_starts=json.loads(row[14]),
        warnings=json.loads(row[15]),
        text_missing_reason=row[16],
        indexed_at=row[17],
    )


def summary_from_row(row: tuple) -> DocumentSummary:
    """A summary from the values of `SUMMARY_COLUMNS`."""
    summary = DocumentSummary(*row)
    summary.has_outline = bool(summary.has_outline)
    summary.keywords = _stored_keywords(row[11])
    return summary


def _stored_keywords(stored: str) -> list[str]:
    """The keywords as stored, without the over-long ones an index written before `MAX_KEYWORD_CHARS` holds."""
    return [keyword for keyword in json.loads(stored) if len(keyword) <= MAX_KEYWORD_CHARS]


def layout_from_row(row: tuple) -> DocumentLayout:
    """A layout from the values of `LAYOUT_COLUMNS`."""
    return DocumentLayout(doc_id=row[0], page_starts=json.loads(row[1]), outline=json.loads(row[2]))


@dataclass(frozen=True)
class WorkFacts:
    """What the catalog says of one document that tells whether another is the same work."""

    doc_id: str
    content_hash: str
    doc_type: str
    title: str
    path: str
    library: str
    keywords: tuple[str, ...]
    word_count: int
