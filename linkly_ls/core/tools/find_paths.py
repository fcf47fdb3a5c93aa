"""`find_paths`: which folders a spoken container name ("my Notion notes") really is.

Each path that a pattern matches in a folder segment is bucketed under the
folder that ends the shallowest match (the path cut at the next `/`);
matches only in the file name are dropped: this tool finds folders.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.search.analysis import fold_accents
from linkly_ls.core.tools.common import counted, empty_index_notice, escape_path_glob, resolve_library, setup_notes
from linkly_ls.core.tools.validation import validate
from linkly_ls.core.tools.render import path_text


@dataclass
class FolderCandidate:
    #: the folder's full path with its trailing `/`: `path_glob` is a substring match, and without the
    #: slash the path of `projects` scoped a search to `projects-old` too
    path: str
    file_count: int

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "path_glob": escape_path_glob(self.path), "file_count": self.file_count}


@dataclass
class FindPathsResult:
    patterns: list[str]
    total_files: int
    truncated: bool
    directories: list[FolderCandidate]
    #: why nothing can match (an index, or a library, without documents) and what to do, as `explore` says it
    notice: str | None = None
    guidance: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "total_files": self.total_files,
            "truncated": self.truncated,
            "directories": [directory.to_json() for directory in self.directories],
        }
        if self.notice:
            data["notice"], data["guidance"] = self.notice, self.guidance
        return data

    def to_markdown(self) -> str:
        if self.notice:
            return f"**{self.notice}** {' '.join(self.guidance)}"
        out = [f"## Folders matching {', '.join(self.patterns)}", f"{self.total_files} file(s)", ""]
        for directory in self.directories:
            out.append(f"- {path_text(directory.path)} ({counted(directory.file_count, 'file')}) · path_glob: `{path_text(escape_path_glob(directory.path))}`")
        if self.truncated:
            out.append("\n(more folders matched; raise `limit` to see them)")
        return "\n".join(out)


def _fold(text: str) -> str:
    """Case and accents aside (`CAFÉ`, `cafe` and `Café` alike; a name macOS wrote decomposed too), one
    character for one: positions in the folded path are positions in the path (in NFC)."""
    return "".join(map(_fold_char, unicodedata.normalize("NFC", text)))


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    if char.isascii():
        return char.lower()
    lower = char.lower()
    lower = lower if len(lower) == 1 else char  # `İ` lowers to two characters: kept as it is
    folded = fold_accents(lower)  # as search folds them: `ø`, `ł`, `đ` too, which have no accent to take off
    return folded if folded != lower else unicodedata.normalize("NFD", lower)[0]


def bucket_for(path: str, patterns: list[str]) -> str | None:
    """The folder a path is counted under: the one whose name holds the end of the earliest match (a
    pattern may span folders, `lib/notes`), the file's own folder when the match runs into its name. A
    folder named the pattern itself comes first: `de` means `astro-docs/de/`, not the `web-dev/` above it."""
    written, path = path, unicodedata.normalize("NFC", path)
    folded = _fold(path)
    file_start = path.rfind("/") + 1
    best: tuple[bool, int, int] | None = None
    for pattern in patterns:
        whole = folded.find(f"/{pattern}/", 0, file_start)
        position = whole + 1 if whole != -1 else folded.find(pattern)
        candidate = (whole == -1, position, -len(pattern))
        if position != -1 and position < file_start and (best is None or candidate < best):
            best = candidate
    if best is None:
        return None
    _, position, negative_length = best
    length = -negative_length
    end = path.find("/", min(max(position + 1, position + length - 1), file_start - 1))
    if end == -1:
        return None
    # the folder as its path is written on disk (macOS writes `Résumés` decomposed): one that opens
    folders = path[:end].count("/")
    cut = -1
    for _ in range(folders + 1):
        cut = written.find("/", cut + 1)
    return written[:cut]


def find_paths(engine: Engine, **arguments: Any) -> FindPathsResult:
    params = validate("find_paths", arguments)
    patterns = [_fold(pattern) for pattern in params["patterns"]]
    library = resolve_library(engine.catalog, params["library"])
    buckets: Counter[str] = Counter()
    paths = engine.catalog.paths(library.name if library else None)
    for path in paths:
        bucket = bucket_for(path, patterns)
        if bucket is not None:
            buckets[bucket] += 1
    ranked = sorted(buckets.items(), key=lambda item: (-item[1], item[0]))
    limit = params["limit"]
    libraries = [library.name] if library else [record.name for record in engine.libraries()]
    notice, guidance = empty_index_notice(libraries, "find_paths", setup_notes(engine)) if not paths else (None, [])
    if paths and not buckets:
        notice = f"No folder matches {', '.join(params['patterns'])}."
        guidance = ["Matches in file names alone are not listed: call `search` directly."]
    return FindPathsResult(
        patterns=params["patterns"],
        total_files=sum(buckets.values()),
        truncated=len(ranked) > limit,
        directories=[FolderCandidate(path=path + "/", file_count=count) for path, count in ranked[:limit]],
        notice=notice,
        guidance=guidance,
    )
