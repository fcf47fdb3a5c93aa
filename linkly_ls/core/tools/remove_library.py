"""`remove_library`: forget a library. Its documents, vectors, errors and skipped counts leave the
index; its folders are not touched (linkly never writes inside them).

A library the config file (or an editor's settings) defines is refused: it would come back at the next
start, so the message says where to remove it instead. Only the index's writer removes, as it alone
writes the keyword index; the faces take the writer role first (the CLI) or check they hold it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError, UsageError
from linkly_ls.core.indexing.writer_status import held_error
from linkly_ls.core.store.catalog import LibraryRecord
from linkly_ls.core.tools.common import resolve_library


@dataclass
class RemovedLibrary:
    library: str
    paths: list[str]
    documents: int
    errors: int

    def to_json(self) -> dict[str, Any]:
        return {"library": self.library, "paths": self.paths, "removed_documents": self.documents, "removed_errors": self.errors}

    def to_markdown(self) -> str:
        return (
            f"Removed library **{self.library}**: {self.documents} documents and {self.errors} error records left "
            f"the index; its folders were not touched ({', '.join(self.paths)})."
        )


def defined_in(engine: Engine, name: str) -> str | None:
    """Where a library that the configuration defines comes from, for the refusal; None for the others
    (the config file as it stands now: its table deleted while an editor runs, the library can go)."""
    engine.reread_config_libraries()
    for library in engine.config.libraries:
        if library.name == name:
            if library.origin == "editor":
                return "the editor's `linkly.libraries` setting"
            return f"the config file {engine.config.source}" if engine.config.source else "the config file"
    return None


def remove_library(engine: Engine, name: str) -> RemovedLibrary:
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError("give the name of a library to remove; `linkly list-libraries` shows them")
    record: LibraryRecord | None = resolve_library(engine.catalog, name.strip())
    if record is None:
        raise ArgumentError("give the name of a library to remove; `linkly list-libraries` shows them")
    origin = defined_in(engine, record.name)
    if origin is not None:
        then = (
            "it then leaves the index"
            if origin.startswith("the editor")
            else "remove its [[library]] table first (or it comes back at the next start), then remove it here"
        )
        raise UsageError(f"library {record.name!r} is defined in {origin}: {then}")
    if not engine.writer_lock.held:
        raise held_error(
            engine.writer_lock,
            "stop it to remove a library, or remove it from that editor (the linkly.removeLibrary command)",
        )
    errors = len(engine.catalog.errors(record.name))
    with engine.write_lock:
        doc_ids = engine.catalog.remove_library(record.name)
        engine.indexer.flush()  # the tombstones leave the keyword index now
        engine.vectors.forget_documents(doc_ids)
        engine.catalog.empty_log()
    return RemovedLibrary(library=record.name, paths=record.paths, documents=len(doc_ids), errors=errors)
