"""The real shared corpus, indexed once: every format, the odd files, languages, dates."""

from __future__ import annotations

import csv
from datetime import UTC, datetime
from pathlib import Path

import pytest

from linkly_ls.core.tools import call_tool


def doc_id_of(engine, relative_path: str) -> str:
    for record in engine.catalog.all_documents():
        if record.path.endswith("/" + relative_path):
            return record.doc_id
    raise AssertionError(f"{relative_path} is not indexed")

#: odd/ files that cannot be read, and a word of the reason each gives
EXPECTED_FAILURES = {
    "odd/locked-statement.pdf": "password-protected",
    "odd/graph-encrypted.pdf": "password-protected",
    "odd/header-only.pdf": "PDF",
    "odd/empty.pdf": "empty file",
    "odd/report-truncated.docx": "DOCX",
    "odd/fhs-3.0-partial-download.pdf": "damaged",
}
#: a PDF whose page tree is as broken as its bookmarks: readable or refused, never a hang
MAY_FAIL = {"odd/cyclic-toc.pdf": "page"}


def manifest(corpus: Path) -> list[dict[str, str]]:
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def relative(path: str, root: Path) -> str:
    return Path(path).relative_to(root).as_posix()


def test_every_corpus_file_is_indexed_or_fails_with_its_reason(corpus_index, corpus_copy):
    engine, (report,) = corpus_index
    indexed = {relative(r.path, corpus_copy) for r in engine.catalog.all_documents()}
    failed = {relative(e.path, corpus_copy): e.message for e in engine.catalog.errors()}
    for path, word in EXPECTED_FAILURES.items():
        assert path in failed, f"{path} should fail"
        assert word.lower() in failed[path].lower(), failed[path]
    for path, word in MAY_FAIL.items():
        assert path not in failed or word in failed[path], failed[path]
    assert set(failed) - set(MAY_FAIL) == set(EXPECTED_FAILURES), failed
    every = {row["path"] for row in manifest(corpus_copy)}
    assert every == indexed | set(failed)
    assert report.failed == len(failed) and report.indexed == len(indexed)


@pytest.mark.parametrize(
    "path, doc_type, word",
    [
        ("odd/meeting-minutes.docx", "pdf", "PDF"),
        ("odd/readme.txt", "html", "HTML"),
        ("odd/scan-0042.pdf", "image", "IMAGE"),
    ],
)
def test_misnamed_files_are_read_as_what_they_are(corpus_engine, path, doc_type, word):
    record = corpus_engine.catalog.get(doc_id_of(corpus_engine, path))
    assert record.doc_type == doc_type
    assert any(word in warning for warning in record.warnings)


@pytest.mark.parametrize(
    "path, phrase",
    [
        ("odd/notes-fr-latin1.txt", "é"),
        ("odd/tutorial-seiten-cp1252.txt", "ü"),
        ("odd/windows-notes-utf16.txt", "the"),
        ("odd/crlf-bom-notes.md", "the"),
    ],
)
def test_legacy_encodings_decode(corpus_engine, path, phrase):
    doc_id = doc_id_of(corpus_engine, path)
    text = "\n".join(corpus_engine.catalog.lines(doc_id))
    assert phrase in text and "\ufffd" not in text and "\r" not in text and "\ufeff" not in text


def test_single_long_line_is_wrapped_and_reported(corpus_engine):
    record = corpus_engine.catalog.get(doc_id_of(corpus_engine, "odd/single-line-export.txt"))
    assert record.total_lines > 10 and any("wrapped" in w for w in record.warnings)


@pytest.mark.parametrize(
    "query, expected",
    [
        ("architecture en îlots", "notes/web-dev/astro-docs/fr/concepts/islands.mdx"),
        ("architecture en ilots", "notes/web-dev/astro-docs/fr/concepts/islands.mdx"),
        ("Inselarchitektur", "notes/web-dev/astro-docs/de/concepts/islands.mdx"),
        ("守护进程", "debian-reference.zh-cn"),
        ("Ownership borrowing references", "notes/learning-rust/ch04"),
        ("WebSocket handshake", "reference/rfc/rfc6455.txt"),
    ],
)
def test_queries_in_several_languages_find_their_documents(corpus_engine, corpus_copy, query, expected):
    results = call_tool(corpus_engine, "search", {"query": query, "limit": 5}).results
    assert any(expected in relative(hit.path, corpus_copy) for hit in results[:3]), [h.path for h in results]


def test_a_two_character_chinese_word_is_found(corpus_engine, corpus_copy):
    results = call_tool(corpus_engine, "search", {"query": "软件", "limit": 10}).results
    assert results, "a 2-character CJK word must match inside CJK sentences"
    assert all(corpus_engine.catalog.get(hit.doc_id).language in ("zh", "ja") or "软件" in hit.snippet
               for hit in results)
    assert any("**软件**" in hit.snippet for hit in results)


def test_date_window_matches_the_manifest(corpus_engine, corpus_copy):
    rows = manifest(corpus_copy)
    start, end = "2024-01-01", "2024-12-31"
    expected = {
        row["path"]
        for row in rows
        if start <= row["mtime"][:10] <= end
    }
    results = call_tool(
        corpus_engine,
        "search",
        {"query": "the", "modified_after": start, "modified_before": end, "limit": 50, "time_sort": "oldest"},
    ).results
    found = [relative(hit.path, corpus_copy) for hit in results]
    assert found and set(found) <= expected
    stamps = [datetime.fromisoformat(hit.modified_at.replace("Z", "+00:00")) for hit in results]
    assert stamps == sorted(stamps)
    assert all(datetime(2024, 1, 1, tzinfo=UTC) <= s <= datetime(2024, 12, 31, 23, 59, 59, tzinfo=UTC) for s in stamps)


def test_explore_and_find_paths_on_the_corpus(corpus_engine, corpus_copy):
    overview = call_tool(corpus_engine, "explore", {}).to_json()
    types = {entry["type"]: entry["count"] for entry in overview["doc_types"]}
    assert {"pdf", "md", "mdx", "docx", "epub", "pptx", "html", "txt", "image"} <= set(types)
    folders = call_tool(corpus_engine, "find_paths", {"patterns": ["astro"]}).to_json()
    assert folders["directories"][0]["path"] == str(corpus_copy / "notes/web-dev/astro-docs") + "/"
    assert folders["directories"][0]["file_count"] == 22
