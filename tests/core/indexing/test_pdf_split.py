"""A long PDF read in page ranges by several workers gives exactly the whole-file document."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest

from linkly_ls.core.indexing import pdf_split
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.indexing.pdf_split import PdfPartTask, PdfSplitter, page_share, prepare_pdf_part
from linkly_ls.core.indexing.preparation import prepare_file
from linkly_ls.core.indexing.workers import TaskOutcome, WorkerPool

LIMITS = ExtractLimits(ocr_deferred=True)
#: a PDF this large is expected to take longer than SPLIT_MIN_SECONDS (work_plan.SECONDS_PER_MB)
LONG_PDF_BYTES = 8_000_000


def _facts(document) -> tuple:
    return (
        document.lines,
        document.outline,
        document.page_starts,
        document.title,
        document.warnings,
        document.text_missing_reason,
        document.doc_type,
    )


def _read_in_parts(path: Path, parts: int, order: list[int], folder: Path):
    """Run the part tasks one after the other in `order`; returns what each returned."""
    results = {}
    for part in order:
        task = PdfPartTask(str(path), None, LIMITS, part, parts, str(folder))
        results[part] = prepare_pdf_part(task)
    return results


@pytest.mark.parametrize(
    "relative",
    [
        "books/R/R-intro.pdf",  # bookmarks
        "papers/standards/fhs-3.0.pdf",  # outline detected from fonts
        "papers/latex/multicolumn.pdf",  # two columns
        "scans/huckleberry-finn-p22.pdf",  # a scanned page, OCR pending
        "odd/cyclic-toc.pdf",  # broken page tree: no page to read, an error
        "odd/scan-0042.pdf",  # a PNG named .pdf: read whole, as an image
    ],
)
def test_parts_assemble_the_whole_file_document(relative, tmp_path, monkeypatch, corpus):
    path = corpus / relative
    monkeypatch.setattr(pdf_split, "MIN_PAGES_PER_PART", 3)
    results = _read_in_parts(path, 4, [2, 0, 3, 1], tmp_path)
    assert [part for part, value in results.items() if value is not None] == [1], "the last part assembles"
    prepared = prepare_file((str(path), None, LIMITS))
    if prepared.error:  # a file no part can read fails as the whole file does
        assert results[1].error == prepared.error and results[1].document is None
        return
    assembled = results[1].document
    whole = extract_file(path, LIMITS)
    assert _facts(assembled) == _facts(whole)
    assert (results[1].word_count, results[1].chunks, results[1].error) == (
        prepared.word_count,
        prepared.chunks,
        prepared.error,
    )


def test_the_longest_pdf_split_in_workers_equals_the_whole_file(tmp_path, corpus):
    path = corpus / "books/R/R-fullrefman.pdf"
    splitter = PdfSplitter(tmp_path / "data")
    work = [(str(path), (str(path), None, LIMITS))]
    tasks = splitter.split(work, workers=2)
    assert len(tasks) > 1 and all(isinstance(task, PdfPartTask) for _, task in tasks)
    folder = tasks[0][1].folder
    with WorkerPool(pdf_split.run_task, size=2) as pool:
        outcomes = list(splitter.merge(pool.run(tasks)))
    assert [outcome.key for outcome in outcomes] == [str(path)]
    assert outcomes[0].error is None
    assert not os.path.exists(folder), "the parts' folder is removed"
    whole = prepare_file((str(path), None, LIMITS))
    split = outcomes[0].value
    assert _facts(split.document) == _facts(whole.document)
    assert (split.word_count, split.keywords, split.chunks) == (whole.word_count, whole.keywords, whole.chunks)


def test_shares_cover_every_page_once():
    for pages in (0, 1, 299, 300, 601, 2415):
        covered = [page for part in range(5) for page in range(*page_share(pages, part, 5))]
        assert covered == list(range(pages))


def test_one_failed_part_is_the_files_one_error(tmp_path):
    path = tmp_path / "long.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"0" * LONG_PDF_BYTES)
    splitter = PdfSplitter(tmp_path / "data")
    tasks = splitter.split([(str(path), (str(path), None, LIMITS)), ("b.md", ("b.md", None, LIMITS))], workers=2)
    parts = [key for key, _ in tasks if isinstance(key, tuple)]
    assert len(parts) >= 2 and tasks[-1][0] == "b.md"
    folder = tasks[0][1].folder
    timeout = "extraction took longer than 180 s ([limits] extract_timeout_s); stopped"
    outcomes = [TaskOutcome(key=parts[0], value=None, seconds=1.0), TaskOutcome(key="b.md", value="note")]
    outcomes += [TaskOutcome(key=key, error=timeout, seconds=2.0) for key in parts[1:]]
    merged = list(splitter.merge(iter(outcomes)))
    assert [(outcome.key, outcome.error) for outcome in merged] == [("b.md", None), (str(path), timeout)]
    assert not os.path.exists(folder)


def test_a_run_stopped_early_leaves_no_parts_folder(tmp_path):
    path = tmp_path / "long.pdf"
    path.write_bytes(b"%PDF-1.4\n" + b"0" * LONG_PDF_BYTES)
    splitter = PdfSplitter(tmp_path / "data")
    tasks = splitter.split([(str(path), (str(path), None, LIMITS))], workers=2)
    merged = splitter.merge(iter([TaskOutcome(key=tasks[0][0], value=None)]))
    assert list(merged) == []
    assert not os.path.exists(tasks[0][1].folder)


def test_nothing_is_split_for_one_worker_or_a_short_pdf(tmp_path):
    long = tmp_path / "long.pdf"
    long.write_bytes(b"%PDF-1.4\n" + b"0" * LONG_PDF_BYTES)
    short = tmp_path / "short.pdf"
    short.write_bytes(b"%PDF-1.4\n" + b"0" * 100_000)
    work = [(str(long), (str(long), None, LIMITS))]
    assert PdfSplitter(tmp_path / "data").split(work, workers=1) == work
    work = [(str(short), (str(short), None, replace(LIMITS)))]
    assert PdfSplitter(tmp_path / "data").split(work, workers=2) == work


def test_an_unchanged_long_pdf_is_not_read_again(tmp_path, monkeypatch, corpus):
    path = corpus / "books/R/R-intro.pdf"
    known = prepare_file((str(path), None, LIMITS)).content_hash
    monkeypatch.setattr(pdf_split, "MIN_PAGES_PER_PART", 3)
    read: list[int] = []
    monkeypatch.setattr("linkly_ls.core.extract.pdf.read_pages", lambda *args: read.append(1))
    results = [
        prepare_pdf_part(PdfPartTask(str(path), known, LIMITS, part, 3, str(tmp_path))) for part in range(3)
    ]
    assert read == []
    assert results[:2] == [None, None] and results[2].unchanged


def test_a_long_pdf_among_plenty_of_other_work_stays_whole(tmp_path):
    long = tmp_path / "long.pdf"
    long.write_bytes(b"%PDF-1.4\n" + b"0" * LONG_PDF_BYTES)
    work = [(str(long), (str(long), None, LIMITS))]
    for number in range(4):
        other = tmp_path / f"other{number}.pdf"
        other.write_bytes(b"%PDF-1.4\n" + b"0" * 3_000_000)
        work.append((str(other), (str(other), None, LIMITS)))
    assert PdfSplitter(tmp_path / "data").split(work, workers=2) == work
    assert len(PdfSplitter(tmp_path / "data").split(work[:2], workers=2)) == 3, "beside one smaller file it is split in two"
