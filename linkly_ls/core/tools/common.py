"""Helpers the tools share: argument parsing for ids, dates and path globs, and time stamps."""

from __future__ import annotations

import os
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from linkly_ls.core.store.catalog import Catalog, DocumentRecord, DocumentSummary, LibraryRecord
from linkly_ls.core.remote.names import REMOTE_DOC_ID
from linkly_ls.core.errors import ArgumentError, ToolError

if TYPE_CHECKING:
    from linkly_ls.core.engine import Engine

DOC_ID_PATTERN = re.compile(r"^[0-9a-f]{12}$")
_DATE_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
#: the files that could not be indexed that list_libraries (per library) and explore name; the counts say
#: how many in all, and `linkly status` lists every one
FAILURES_SHOWN = 10


def counted(count: int, noun: str) -> str:
    """`1 document`, `3 documents`: a count with its noun in the number it needs."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def empty_index_notice(libraries: list[str], again: str, setup: list[str] | None = None) -> tuple[str, list[str]]:
    """(notice, advice) for an index, or the libraries asked for, without documents: why, and how to add
    some, rather than an answer that reads as if nothing matched. `again`: the tool to call once there are;
    `setup`: what may point at the wrong index or config file (`setup_notes`), said first."""
    if not libraries:
        return "No libraries yet: nothing is indexed.", [*(setup or []),
            "Add a folder as a library: `linkly index ~/notes --library notes` (or a [[library]] table in the "
            f"config file, or open the folder in an editor with the linkly extension), then {again} again."
        ]
    return "No documents indexed yet.", [*(setup or []),
        f"The libraries ({', '.join(libraries)}) hold no documents yet: indexing may still be running, or every "
        "file was skipped. `linkly status` (or `list_libraries`, with `skipped_count` and the reasons) says which."
    ]


def setup_notes(engine: Engine) -> list[str]:
    """For an empty index: a config file LINKLY_CONFIG names that does not exist, and an index folder this
    process made (both what a misspelt variable gives, which otherwise reads as an index still filling)."""
    notes = []
    missing = engine.config.missing_named_file
    if missing is not None:
        notes.append(f"LINKLY_CONFIG names {missing}, which does not exist: no config file is read.")
    if engine.made_data_dir:
        origin = engine.config.data_dir_origin
        if not origin:
            notes.append(f"The index folder {engine.data_dir} did not exist before this process made it: "
                         "if your index is elsewhere, set LINKLY_DATA_DIR or data_dir in the config file.")
        else:
            notes.append(f"The index folder {engine.data_dir} did not exist before this process made it ({origin} names "
                         f"it): if your index is elsewhere, correct {origin}.")
    return notes


def utc_now() -> str:
    return iso_utc(datetime.now(UTC).timestamp())


def iso_utc(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: what `on_disk` says of a document's file, and how the text forms say it
ON_DISK_NOTES = {
    "changed": "the file changed on disk since it was indexed: this is the indexed text (a running "
    "`linkly watch`, a `linkly serve` that watches or an editor re-indexes it within seconds; otherwise "
    "`linkly index`, or the `index_library` tool, reads it again)",
    "deleted": "the file is gone from disk: this is the text indexed before (the next index run removes it, "
    "unless its whole library folder is missing: then it is kept until the folder is back)",
}


def on_disk(record: DocumentRecord | DocumentSummary) -> str | None:
    """"changed" or "deleted" when the file on disk is not what was indexed, else None."""
    try:
        stat = os.stat(record.path)
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return None  # unreadable for a moment (permissions): nothing to say about its content
    return "changed" if stat.st_mtime_ns != record.mtime_ns or stat.st_size != record.size else None


def add_on_disk(data: dict, record: DocumentRecord) -> dict:
    """`data` (a JSON form) with `on_disk` when the document's file is not as indexed."""
    state = on_disk(record)
    if state:
        data["on_disk"] = state
    return data


def on_disk_note(data: dict) -> list[str]:
    """The note a text form ends with when the JSON form says the file is not as indexed."""
    state = data.get("on_disk")
    return [f"> Note: {ON_DISK_NOTES[state]}."] if state in ON_DISK_NOTES else []


#: a language server's view of a document, `linkly://doc/<id>` (with the file name it may end with)
VIEW_URI = re.compile(r"linkly://doc/([0-9a-fA-F]{12})(?:/[^/?#]*)?")


def check_doc_id(value: str, argument: str = "doc_id") -> str:
    """Only ids that search handed out are accepted: never a path, never `..`. One typed in capitals (or
    pasted with a space around it) is the same id, and so is the editor's view of it (`linkly://doc/<id>`,
    as the language server hands it out)."""
    if isinstance(value, str) and (view := VIEW_URI.fullmatch(value.strip())):
        value = view.group(1)
    if isinstance(value, str) and DOC_ID_PATTERN.fullmatch(value.strip().lower()):  # `$` alone lets a trailing newline in
        return value.strip().lower()
    if isinstance(value, str) and REMOTE_DOC_ID.fullmatch(value.strip()):  # the tools that take one resolve it first
        raise ArgumentError(
            f"`{argument}` {value.strip()!r} is a document of the remote {value.split(':')[0].strip()!r}: only search, "
            "outline, grep and read reach documents on remotes"
        )
    raise ArgumentError(
        f"`{argument}` must be a document id from search results (12 hexadecimal characters, "
        f"e.g. 3f2a9c01b7de), got {value!r}"
    )


def get_document(
    catalog: Catalog, doc_id: str, argument: str = "doc_id", with_outline: bool = True
) -> DocumentRecord:
    wanted = check_doc_id(doc_id, argument)
    record = catalog.get(wanted, with_outline=with_outline)
    if record is None and (now := catalog.moved_to(wanted)) is not None:  # its file moved unchanged since
        record = catalog.get(now, with_outline=with_outline)
    if record is None:
        raise ToolError(
            f"`{argument}` {doc_id!r} is not an indexed document; use an id from search results"
        )
    return record


def parse_time(value: str | None, argument: str, end_of_day: bool = False) -> float | None:
    """A bare date (`2024-01-01`, midnight UTC) or RFC 3339 time, as a Unix timestamp.

    For an upper bound, a bare date means the end of that day, so
    `modified_before=2024-09-30` includes files changed on the 30th.
    """
    if value is None or value == "":
        return None
    text = value.strip()
    try:
        if _DATE_ONLY.match(text):
            moment = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=UTC)
            if end_of_day:
                moment += timedelta(days=1) - timedelta(microseconds=1)
            return moment.timestamp()
        normalised = text.replace("z", "Z").replace("Z", "+00:00")
        if " " in normalised and "T" not in normalised:
            normalised = normalised.replace(" ", "T", 1)
        moment = datetime.fromisoformat(normalised)
        if moment.tzinfo is None:
            raise ValueError("no time zone")
        return moment.timestamp()
    except ValueError:
        raise ArgumentError(
            f"`{argument}` must be a date like 2024-01-01 or an RFC 3339 time like "
            f"2024-01-01T00:00:00Z, got {value!r}"
        ) from None


class PathGlob:
    """A compiled `path_glob`: its pieces between `*`s, each a regex of fixed length (`?` and sets), found
    in order, each at its leftmost place after the one before. Leftmost is always right, since a `*`
    takes whatever lies between: a match costs a pass over the path, where one regex of `.*`s
    backtracked for minutes on `*L*L*L*L*X` against a long name (the whole server waited)."""

    def __init__(self, pieces: list[re.Pattern[str]]) -> None:
        self.pieces = pieces

    def search(self, path: str) -> bool:
        position = 0
        for piece in self.pieces:
            found = piece.search(path, position)
            if found is None:
                return False
            position = found.end()
        return True


def compile_path_glob(pattern: str, ignore_case: bool = False) -> PathGlob:
    """The spec's path_glob: substring match, `*` spans `/`, `?` one character, `[...]` a set,
    backslash escapes a metacharacter, case-sensitive (`ignore_case` is for the guidance of a glob
    that matched nothing); in Unicode's composed form (NFC), as `allowed_documents` compares paths."""
    pattern = unicodedata.normalize("NFC", pattern)
    pieces: list[list[str]] = [[]]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\" and index + 1 < len(pattern):
            pieces[-1].append(re.escape(pattern[index + 1]))
            index += 2
            continue
        if char == "*":
            pieces.append([])
        elif char == "?":
            pieces[-1].append(".")
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end == -1:
                pieces[-1].append(re.escape(char))
            else:
                body = pattern[index + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                pieces[-1].append("[" + body.replace("\\", "\\\\") + "]")
                index = end
        else:
            pieces[-1].append(re.escape(char))
        index += 1
    try:
        flags = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        return PathGlob([re.compile("".join(piece), flags) for piece in pieces if piece])
    except re.error as error:
        raise ArgumentError(f"`path_glob` {pattern!r} is not a valid pattern: {error}") from None


def escape_path_glob(path: str) -> str:
    """Quote a literal path so path_glob matches it exactly (`*`, `?`, `[` escaped)."""
    return re.sub(r"([*?\[\\])", r"\\\1", path)


def resolve_library(catalog: Catalog, name: str | None) -> LibraryRecord | None:
    """A library by plain name or `local://name`; None when no restriction was asked for."""
    if name is None or name == "" or name in ("local://", "local:///"):
        return None
    plain = name
    if plain.startswith("cloud:"):
        raise ArgumentError(
            f"`library` {name!r} is a remote library: remote calls are read-only and only reach search, outline, "
            "grep, read, list_libraries, explore and find_paths; re-index it on its own machine"
        )
    if plain.startswith("local://"):
        plain = plain[len("local://") :].strip("/")
    library = catalog.library(unicodedata.normalize("NFC", plain))
    if library is None:
        names = ", ".join(lib.name for lib in catalog.libraries()) or "(none yet: run `linkly index PATH`)"
        raise ArgumentError(f"`library` {name!r} does not exist; available: {names}")
    return library
