"""`list_libraries`: the libraries, what they hold and how complete their index is."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from linkly_ls.core.store.catalog import LibraryRecord
from linkly_ls.core.engine import Engine
from linkly_ls.core.indexing.vector_sync import coverage_text
from linkly_ls.core.tools.common import FAILURES_SHOWN, counted
from linkly_ls.core.indexing.skips import describe, reasons_in_order
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.tools.render import path_text


#: what list_libraries and `linkly index` say of a library the config file no longer defines
DROPPED_NOTE = (
    "no longer in the config file, it stays indexed and watched: `linkly remove-library {quoted}` forgets it"
)


def dropped_note(name: str) -> str:
    """DROPPED_NOTE for library `name`, quoted for a shell (`'cfg lib'`) so the command can be pasted."""
    return DROPPED_NOTE.format(quoted=shlex.quote(name))


@dataclass
class LibraryInfo:
    record: LibraryRecord
    document_count: int
    failed_count: int
    #: share (0-1) of the library's text whose chunks have vectors; None when embeddings are off
    vector_coverage: float | None = None
    #: share (0-1) of the library's text whose chunks have a vector of either kind (first-pass, or refined
    #: by the model); None when the first pass is off
    first_pass_coverage: float | None = None
    #: documents indexed by name or text layer whose images or scanned pages still wait for the OCR pass
    ocr_pending_count: int = 0
    #: reason -> files the last full walk of the library's folders left out (see indexing/skips.py)
    skipped: dict[str, int] = field(default_factory=dict)
    #: the config file no longer defines it (`Engine.dropped_from_config`)
    dropped_from_config: bool = False
    #: (path, why) of the first FAILURES_SHOWN files that could not be indexed, by path
    failures: list[tuple[str, str]] = field(default_factory=list)

    @property
    def skipped_count(self) -> int:
        return sum(self.skipped.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.record.name,
            "description": self.record.description,
            "paths": self.record.paths,
            "document_count": self.document_count,
            "failed_count": self.failed_count,
            "failed": [{"path": path, "message": message} for path, message in self.failures],
            "ocr_pending_count": self.ocr_pending_count,
            "skipped_count": self.skipped_count,
            "skipped": self.skipped,
            "respect_gitignore": self.record.respect_gitignore,
            "vector_coverage": None if self.vector_coverage is None else round(self.vector_coverage, 4),
            "first_pass_coverage": None if self.first_pass_coverage is None else round(self.first_pass_coverage, 4),
            "include": self.record.include,
            "exclude": self.record.exclude,
            "source": self.record.origin,
            **({"note": dropped_note(self.record.name)} if self.dropped_from_config else {}),
        }


@dataclass
class LibrariesResult:
    libraries: list[LibraryInfo]

    def to_json(self) -> dict[str, Any]:
        return {"libraries": [library.to_json() for library in self.libraries]}

    def to_markdown(self) -> str:
        if not self.libraries:
            return "No libraries yet. Add one with `linkly index PATH --library NAME`."
        out = ["## Libraries", ""]
        for library in self.libraries:
            record = library.record
            failed = f", {library.failed_count} failed" if library.failed_count else ""
            vectors = "" if library.vector_coverage is None else f", vectors {coverage_text(library.vector_coverage)}"
            if library.first_pass_coverage is not None:
                vectors += f", first-pass vectors {coverage_text(library.first_pass_coverage)}"
            if not library.document_count:  # nothing to cover: "vectors 100%" read as work done
                vectors = ""
            pending = f", {library.ocr_pending_count} awaiting OCR" if library.ocr_pending_count else ""
            skipped = f", {library.skipped_count} skipped ({describe(library.skipped)})" if library.skipped else ""
            out.append(f"- **{record.name}**: {counted(library.document_count, 'document')}{failed}{pending}{skipped}{vectors}")
            if record.description:
                out.append(f"  {record.description}")
            if library.dropped_from_config:
                out.append(f"  {dropped_note(record.name)}")
            out.append(f"  paths: {', '.join(record.paths)}")
            for path, message in library.failures:
                out.append(f"  failed: {path_text(path)}: {message}")
            if library.failed_count > len(library.failures):
                out.append(f"  ... and {library.failed_count - len(library.failures)} more failed (`linkly status` lists them)")
        return "\n".join(out)


def list_libraries(engine: Engine, **arguments: Any) -> LibrariesResult:
    validate("list_libraries", arguments)
    counts = engine.catalog.document_counts()
    failures = engine.catalog.error_counts()
    skipped = skipped_by_library(engine)
    coverage = engine.vectors.coverage()
    first_pass = engine.vectors.first_pass.coverage()
    dropped = set(engine.dropped_from_config())
    return LibrariesResult(
        libraries=[
            LibraryInfo(
                record=record,
                document_count=counts.get(record.name, 0),
                failed_count=failures.get(record.name, 0),
                ocr_pending_count=len(engine.catalog.ocr_pending_paths(record.name)),
                skipped=skipped.get(record.name, {}),
                vector_coverage=coverage.get(record.name, 1.0 if counts.get(record.name, 0) == 0 else 0.0)
                if engine.vectors.provider.enabled
                else None,
                first_pass_coverage=first_pass.get(record.name, 1.0 if counts.get(record.name, 0) == 0 else 0.0)
                if engine.vectors.first_pass.enabled
                else None,
                dropped_from_config=record.name in dropped,
                failures=[(error.path, error.message) for error in engine.catalog.errors(record.name)[:FAILURES_SHOWN]]
                if failures.get(record.name)
                else [],
            )
            for record in engine.libraries()
        ]
    )


def skipped_by_library(engine: Engine) -> dict[str, dict[str, int]]:
    """library -> reason -> files its last full walk left out."""
    pairs: dict[str, list[tuple[str, int]]] = {}
    for row in engine.catalog.skipped():
        pairs.setdefault(row.library, []).append((row.reason, row.count))
    return {library: reasons_in_order(rows) for library, rows in pairs.items()}
