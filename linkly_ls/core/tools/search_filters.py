"""The filters of `search` (library, types, path, dates): which documents pass them, and what to say
when they leave none, whatever the query."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ArgumentError
from linkly_ls.core.store.records import ErrorRecord
from linkly_ls.core.tools.common import compile_path_glob, parse_time, resolve_library
from linkly_ls.core.tools.search_guidance import lead_guidance
from linkly_ls.core.tools.search_results import SearchResult

_UNESCAPED_BRACKET = re.compile(r"(?<!\\)\[")
KNOWN_TYPES = ("md", "mdx", "txt", "html", "pdf", "docx", "epub", "pptx", "image")
TYPE_ALIASES = {"markdown": "md", "htm": "html", "text": "txt"}
#: an image format asked for by name: its images alone (`image` is every image)
IMAGE_FORMATS = {"png": (".png",), "jpg": (".jpg", ".jpeg"), "jpeg": (".jpg", ".jpeg"), "bmp": (".bmp",),
                 "webp": (".webp",), "tif": (".tif", ".tiff"), "tiff": (".tif", ".tiff")}


def allowed_documents(engine: Engine, params: dict[str, Any]) -> list[str] | None:
    """Doc ids that pass the filters, or None when no filter is set."""
    library = resolve_library(engine.catalog, params.get("library"))
    asked = [TYPE_ALIASES.get(t.lower().lstrip("."), t.lower().lstrip(".")) for t in params.get("doc_types") or []]
    image_suffixes = {suffix for t in asked if t in IMAGE_FORMATS for suffix in IMAGE_FORMATS[t]}
    every_image = "image" in asked or not image_suffixes
    doc_types = list(dict.fromkeys("image" if t in IMAGE_FORMATS else t for t in asked))
    for doc_type in doc_types:
        if doc_type not in KNOWN_TYPES:
            raise ArgumentError(f"`doc_types` has unknown type {doc_type!r}; known: {', '.join(KNOWN_TYPES)}")
    after = parse_time(params.get("modified_after"), "modified_after")
    before = parse_time(params.get("modified_before"), "modified_before", end_of_day=True)
    if after is not None and before is not None and after > before:
        raise ArgumentError("`modified_after` is later than `modified_before`; no document can match")
    if "md" in doc_types and "mdx" not in doc_types:
        doc_types.append("mdx")  # the contract's Markdown is `.md` and `.mdx`
    glob = compile_path_glob(params["path_glob"]) if params.get("path_glob") else None
    if library is None and not doc_types and after is None and before is None and glob is None:
        return None
    name = library.name if library else None
    if every_image:
        rows = engine.catalog.documents_matching(name, doc_types, after, before)
    else:  # `png` asks for the PNG images, not every image
        others = [doc_type for doc_type in doc_types if doc_type != "image"]
        rows = engine.catalog.documents_matching(name, others, after, before) if others else []
        images = engine.catalog.documents_matching(name, ["image"], after, before)
        rows += [(doc_id, path) for doc_id, path in images if Path(path).suffix.lower() in image_suffixes]
    # a name may be stored composed (é) or decomposed (e + ´, as macOS writes names): both read alike
    if glob is not None and "[" in params["path_glob"]:
        # a path copied from a result (`Notion Export [1]/`) names its folder, brackets and all, not `Export 1/`
        # beside it: brackets are a set only where they match nothing as written
        literal = compile_path_glob(_UNESCAPED_BRACKET.sub(r"\\[", params["path_glob"]))
        as_written = [doc_id for doc_id, path in rows if literal.search(unicodedata.normalize("NFC", path))]
        if as_written:
            return as_written
    return [doc_id for doc_id, path in rows if glob is None or glob.search(unicodedata.normalize("NFC", path))]


#: the filters of `search`, each as the arguments that set it alone
FILTERS = {
    "library": ("library",),
    "doc_types": ("doc_types",),
    "path_glob": ("path_glob",),
    "modified_after / modified_before": ("modified_after", "modified_before"),
}


def blame_the_filters(engine: Engine, result: SearchResult, params: dict[str, Any]) -> None:
    """Guidance for a search whose filters leave no document: which filter does it, not the query's words."""
    empty: dict[str, str] = {}  # filter -> how it was set, for the filters that alone let no document through
    for name, keys in FILTERS.items():
        alone = {key: params[key] for key in keys if params.get(key)}
        if alone and allowed_documents(engine, alone) == []:
            empty[name] = ", ".join(
                ", ".join(map(str, value)) if isinstance(value, list) else repr(value) for value in alone.values()
            )
    if empty:
        lead = f"No indexed document passes {' nor '.join(f'`{name}` ({value})' for name, value in empty.items())}, whatever the query."
    else:
        lead = "Each filter alone lets documents through, but no indexed document passes them all together."
    if "doc_types" in empty:
        lead += f" Indexed types: {', '.join(doc_type for doc_type, _ in engine.catalog.type_counts())}."
    if "path_glob" in empty:
        differently_cased = _path_differing_in_case(engine, params["path_glob"])
        if differently_cased:
            lead += f" `path_glob` is case-sensitive, and {differently_cased} matches it but for case."
        failed = _failed_matching(engine, params["path_glob"])
        if failed is not None:
            lead += f" {failed.path!r} matches it but could not be indexed: {failed.message}."
        else:
            lead += " Call `find_paths` to see the real folder names."
    lead_guidance(result, lead, instead_of_other_words=True)
    result.guidance = [result.guidance[0]] + [advice for advice in result.guidance[1:] if "find_paths" not in advice]


def _failed_matching(engine: Engine, pattern: str) -> ErrorRecord | None:
    """The first file matching `pattern` that failed to index (an encrypted PDF): the file is there, so
    looking for another folder would not help."""
    glob = compile_path_glob(pattern)
    return next((error for error in engine.catalog.errors() if glob.search(unicodedata.normalize("NFC", error.path))), None)


def _path_differing_in_case(engine: Engine, pattern: str) -> str | None:
    """An indexed path that `pattern` would match were path_glob not case-sensitive, quoted; else None."""
    glob = compile_path_glob(pattern, ignore_case=True)
    for _, path in engine.catalog.documents_matching(None, [], None, None):
        if glob.search(unicodedata.normalize("NFC", path)):
            return repr(path)
    return None
