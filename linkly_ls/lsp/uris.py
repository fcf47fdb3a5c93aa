"""URIs the language server hands out and accepts.

Every indexed document has a read-only text view at `linkly://doc/<doc_id>`.
Its lines are the catalog's canonical lines, so line numbers in `outline`,
`grep`, `read` and document symbols all agree. A trailing name segment
(`linkly://doc/<doc_id>/report.pdf.txt`) is tolerated for editors that title
tabs after the last path segment, but the id alone decides what is read.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument, Workspace

SCHEME = "linkly"
_DOC_PATH = re.compile(r"^/([0-9a-f]{12})(?:/[^/]*)?$")

#: document types whose indexed lines are the file's own lines: search hits and
#: symbols point into the file itself; every other type is shown through its view
TEXT_DOC_TYPES = frozenset({"md", "mdx", "txt", "html"})


class UnknownDocumentUri(ValueError):
    """A `linkly:` URI that does not have the form `linkly://doc/<12 hex digits>`."""


def doc_uri(doc_id: str) -> str:
    return f"{SCHEME}://doc/{doc_id}"


def is_linkly_uri(uri: str) -> bool:
    return uri.startswith(f"{SCHEME}:")


def doc_id_from_uri(uri: str) -> str:
    """The document id a `linkly:` URI names; raises UnknownDocumentUri for anything else."""
    parsed = urlparse(uri)
    if parsed.scheme != SCHEME or parsed.netloc != "doc" or parsed.query or parsed.fragment:
        raise UnknownDocumentUri(f"{uri!r} is not a linkly document URI (expected linkly://doc/<doc_id>)")
    match = _DOC_PATH.fullmatch(parsed.path)
    if match is None:
        raise UnknownDocumentUri(f"{uri!r} does not name a document id (12 hexadecimal characters)")
    return match.group(1)


def path_from_uri(uri: str) -> Path | None:
    """The absolute, resolved path of a `file:` URI; None for other schemes."""
    path = to_fs_path(uri)
    if not path:
        return None
    return Path(path).resolve()


def file_uri(path: str | Path) -> str:
    return from_fs_path(str(path)) or Path(path).as_uri()


def location_uri(doc_id: str, doc_type: str, path: str) -> str:
    """Where an editor should open a document: the file for text formats, else the text view."""
    return file_uri(path) if doc_type in TEXT_DOC_TYPES else doc_uri(doc_id)


#: the suffix whose extractor reads a buffer of that language, for a buffer whose name says none
#: (`untitled:Untitled-1`, `notes.mdtext`, `README`)
LANGUAGE_SUFFIXES = {"markdown": ".md", "mdx": ".mdx", "html": ".html", "plaintext": ".txt"}


def open_buffer(workspace: Workspace, uri: str) -> TextDocument | None:
    """The client's open buffer at `uri`, if any. pygls keys open documents by the unquoted URI, while
    clients send names with a space, `é` or `#` quoted (`space%20name.md`)."""
    return workspace.text_documents.get(unquote(uri))


def open_buffer_uris(workspace: Workspace) -> list[str]:
    """The URIs of the open buffers as their client wrote them (diagnostics are published under those)."""
    return [document.uri for document in workspace.text_documents.values()]
