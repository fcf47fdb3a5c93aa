"""`index_library`: bring one library (or all) up to date with its folders, and say what changed.

The one tool that writes. Engine.index holds `engine.write_lock`, so a run
never overlaps a watcher batch or another run in the same process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.indexing.skips import describe
from linkly_ls.core.tools.common import resolve_library
from linkly_ls.core.tools.schema import SCHEMAS
from linkly_ls.core.tools.render import path_text

if TYPE_CHECKING:  # the indexer loads extraction code: only a run of this tool needs it
    from linkly_ls.core.indexing.indexer import IndexReport
    from linkly_ls.core.store.records import LibraryRecord

#: how many failed files a result lists per library (the counts are always complete)
MAX_LISTED_ERRORS = 20

INDEX_LIBRARY_SCHEMA = SCHEMAS["index_library"]


@dataclass
class ReindexResult:
    reports: list[IndexReport]
    document_counts: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "libraries": [
                {
                    "library": report.library,
                    "indexed": report.indexed,
                    "unchanged": report.unchanged,
                    "failed": report.failed,
                    "removed": report.removed,
                    "seconds": round(report.seconds, 3),
                    "document_count": self.document_counts.get(report.library, 0),
                    "skipped_count": report.skipped_count,
                    "skipped": report.skipped,
                    "errors": [
                        {"path": path, "message": message} for path, message in report.errors[:MAX_LISTED_ERRORS]
                    ],
                }
                for report in self.reports
            ]
        }

    def to_markdown(self) -> str:
        if not self.reports:
            return "No libraries to index. Add one with `linkly index PATH --library NAME`."
        out = ["## Indexed", ""]
        for report in self.reports:
            count = self.document_counts.get(report.library, 0)
            out.append(
                f"- **{report.library}**: {report.indexed} indexed, {report.unchanged} unchanged, "
                f"{report.failed} failed, {report.removed} removed in {report.seconds:.1f} s; {count} documents now"
            )
            if report.skipped:
                out.append(f"  - skipped: {report.skipped_count} ({describe(report.skipped)})")
            for path, message in report.errors[:MAX_LISTED_ERRORS]:
                out.append(f"  - failed: {path_text(path)}: {message}")
            hidden = len(report.errors) - MAX_LISTED_ERRORS
            if hidden > 0:
                out.append(f"  - … and {hidden} more failed file(s)")
        return "\n".join(out)


def check_arguments(engine: Engine, arguments: dict[str, Any]) -> LibraryRecord | None:
    """The library to index (None: every one); an ArgumentError for a bad call, before any writing starts."""
    unknown = set(arguments) - set(INDEX_LIBRARY_SCHEMA["properties"])
    if unknown:
        raise ArgumentError(f"unknown argument `{sorted(unknown)[0]}` for index_library; accepted: library")
    name = arguments.get("library")
    if name is not None and not isinstance(name, str):
        raise ArgumentError(f"`library` must be a string, got {name!r}")
    try:
        return resolve_library(engine.catalog, name)
    except ArgumentError:  # a library just added to the config file: this long-running process reads it now
        engine.reread_config_libraries()
        return resolve_library(engine.catalog, name)


def index_library(engine: Engine, **arguments: Any) -> ReindexResult:
    """Re-index the named library, or every library when none is named (incremental)."""
    record = check_arguments(engine, arguments)
    reports = engine.index([record.name] if record else None)
    return ReindexResult(reports=reports, document_counts=engine.catalog.document_counts())
