"""OCR in a second pass: text layers first, images and scanned pages marked pending, then read."""

from __future__ import annotations

import shutil

from linkly_ls.core.store.catalog import make_doc_id
from linkly_ls.core.extract import extract_file
from linkly_ls.core.extract.base import ExtractLimits
from linkly_ls.core.extract.ocr import OCR_PENDING, ocr_pending
from linkly_ls.core.tools import call_tool
from linkly_ls.core.indexing.workers import TaskOutcome

FIXTURE_JPEG = __import__("pathlib").Path(__file__).resolve().parents[3] / "fixtures" / "scans" / "ocr-sample.jpg"


def titles(engine, query: str) -> list[str]:
    return [hit.title for hit in call_tool(engine, "search", {"query": query}).results]


def copy_scans(library_dir, corpus):
    shutil.copy(corpus / "scans/ocr-sample.jpg", library_dir / "ocr-sample.jpg")
    shutil.copy(corpus / "scans/huckleberry-finn-p22.pdf", library_dir / "huck.pdf")
    (library_dir / "note.md").write_text("# Note\n\nplain text layer\n", encoding="utf-8")


def test_deferred_extraction_marks_images_and_scanned_pages_pending(corpus):
    deferred = ExtractLimits(ocr_deferred=True)
    image = extract_file(corpus / "scans/ocr-sample.jpg", deferred)
    assert image.lines == ["ocr-sample.jpg"]
    assert image.text_missing_reason.startswith(OCR_PENDING) and ocr_pending(image.warnings)
    scan = extract_file(corpus / "scans/huckleberry-finn-p22.pdf", deferred)
    assert scan.lines == ["--- page 1 ---"] and ocr_pending(scan.warnings)
    text_pdf = extract_file(corpus / "papers/standards/fhs-3.0.pdf", deferred)
    assert not ocr_pending(text_pdf.warnings) and text_pdf.text_missing_reason is None


def test_a_long_text_pdf_with_one_scanned_page_is_not_read_twice(corpus):
    """Its scanned cover is OCR'd in the first pass: cheaper than reading 261 pages again."""
    manual = extract_file(corpus / "books/debian/debian-reference.en.pdf", ExtractLimits(ocr_deferred=True))
    assert not ocr_pending(manual.warnings) and manual.text_missing_reason is None


def test_index_reads_pending_files_with_ocr_before_it_returns(library_dir, engine_for, corpus):
    copy_scans(library_dir, corpus)
    engine = engine_for(library_dir)
    (report,) = engine.index()
    assert (report.indexed, report.failed, report.ocr_files) == (3, 0, 2)
    assert 0 < report.text_layer_seconds <= report.seconds
    assert engine.catalog.ocr_pending_paths("lib") == []
    assert "ocr-sample" in titles(engine, "quick brown dog")
    image = engine.catalog.get(make_doc_id(str(library_dir / "ocr-sample.jpg")))
    assert image.text_missing_reason is None and not ocr_pending(image.warnings)
    (again,) = engine.index()
    assert (again.indexed, again.unchanged, again.ocr_files) == (0, 3, 0)


def test_a_run_stopped_before_its_ocr_pass_is_finished_by_the_next(library_dir, engine_for, monkeypatch, corpus):
    copy_scans(library_dir, corpus)
    engine = engine_for(library_dir)
    monkeypatch.setattr(engine.indexer, "_ocr_pass", lambda *args: None)
    engine.index()
    assert engine.catalog.ocr_pending_paths("lib") == sorted([str(library_dir / "huck.pdf"), str(library_dir / "ocr-sample.jpg")])
    assert "Note" in titles(engine, "plain text layer") and titles(engine, "quick brown dog jumped") == []
    assert titles(engine, "ocr-sample")[0] == "ocr-sample", "found by its name while OCR is pending"
    assert engine.vectors.run_until_complete(wait_for_model=True) == 3
    monkeypatch.undo()
    (report,) = engine.index()
    assert (report.indexed, report.unchanged, report.ocr_files) == (0, 3, 2)
    assert engine.catalog.ocr_pending_paths("lib") == []
    assert "ocr-sample" in titles(engine, "quick brown dog jumped")
    # the OCR'd files keep their content hash, yet their text is new: their passages are cut again
    assert engine.vectors.run_until_complete(wait_for_model=True) == 2


class FailingPool:
    """Stands in for the worker pool: every task ends as a worker timeout would."""

    size = 2

    def run(self, work, quick=None):
        for key, _ in work:
            yield TaskOutcome(key=key, error="extraction took longer than 180 s ([limits] extract_timeout_s); stopped")

    def stop_run(self):
        pass


def test_an_ocr_failure_keeps_the_text_layer_and_says_why(library_dir, engine_for, monkeypatch, corpus):
    copy_scans(library_dir, corpus)
    engine = engine_for(library_dir)
    monkeypatch.setattr(engine.indexer, "_ocr_pass", lambda *args: None)
    engine.index()
    monkeypatch.undo()
    monkeypatch.setattr(engine.indexer, "pool", lambda paths=(): FailingPool())
    (report,) = engine.index()
    assert report.ocr_files == 2 and len(report.ocr_errors) == 2 and report.failed == 0
    image = engine.catalog.get(make_doc_id(str(library_dir / "ocr-sample.jpg")))
    assert image.text_missing_reason.startswith("OCR failed: extraction took longer than 180 s")
    scan = engine.catalog.get(make_doc_id(str(library_dir / "huck.pdf")))
    assert any(warning.startswith("OCR failed:") for warning in scan.warnings)
    assert engine.catalog.ocr_pending_paths("lib") == [], "a failed OCR is not retried until the file changes"
    assert titles(engine, "ocr-sample")[0] == "ocr-sample"


def test_images_left_unread_while_ocr_was_off_are_read_once_it_is_on(library_dir, tmp_path):
    """They stayed name-only, still saying "OCR is turned off", though the files had not changed."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.ocr import OCR_DISABLED

    shutil.copy(FIXTURE_JPEG, library_dir / "ocr-sample.jpg")
    (library_dir / "note.md").write_text("# Note\n\nplain text layer\n", encoding="utf-8")
    libraries = [LibraryConfig(name="lib", paths=[library_dir])]
    raw = {"embedding": {"model": "none"}}
    image_id = make_doc_id(str(library_dir / "ocr-sample.jpg"))
    off = Engine(Config(data_dir=tmp_path / "data", libraries=libraries, limits=ExtractLimits(ocr=False), raw=raw))
    try:
        off.index()
        assert off.catalog.get(image_id).text_missing_reason == OCR_DISABLED
    finally:
        off.close()
    on = Engine(Config(data_dir=tmp_path / "data", libraries=libraries, raw=raw))
    try:
        (report,) = on.index()
        assert (report.unchanged, report.ocr_files) == (2, 1)
        assert on.catalog.get(image_id).text_missing_reason is None and "ocr-sample" in titles(on, "quick brown dog")
        (again,) = on.index()
        assert again.ocr_files == 0
    finally:
        on.close()


def test_a_scan_longer_than_max_ocr_pages_is_reported_as_capped_and_the_ocr_pass_allows_each_page_time(library_dir, tmp_path):
    """Pages past a fixed 100 were left unread without a word anywhere but an editor diagnostic, and the
    OCR pass stopped a long scan at the 180 s meant for one file's text layer, keeping nothing."""
    import pymupdf

    from linkly_ls.core.config import Config, LibraryConfig, load_config
    from linkly_ls.core.engine import Engine
    from linkly_ls.core.extract.base import ocr_pass_timeout_s

    scan = pymupdf.open()
    for _ in range(3):
        page = scan.new_page()
        page.insert_image(page.rect, filename=str(FIXTURE_JPEG))
    scan.save(library_dir / "scan.pdf")
    config = tmp_path / "config.toml"
    config.write_text("[limits]\nmax_ocr_pages = 2\nextract_timeout_s = 60\n", encoding="utf-8")
    limits = load_config(config).limits
    assert limits.max_ocr_pages == 2 and ocr_pass_timeout_s(limits) == 60 + 2 * 20
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="lib", paths=[library_dir])],
                           limits=limits, raw={"embedding": {"model": "none"}}))
    try:
        (report,) = engine.index()
        assert [warning for _, warning in report.capped] == [
            "only the first 2 of 3 scanned pages were read by OCR ([limits] max_ocr_pages)"
        ]
        assert engine.indexer.pool().timeout_s == 60, "the OCR pass's time limit ends with it"
        text = "\n".join(engine.catalog.lines(make_doc_id(str(library_dir / "scan.pdf"))))
        pages = text.split("--- page ")
        assert ["quick brown" in page for page in pages[1:]] == [True, True, False]
    finally:
        engine.close()


def test_a_miss_while_files_wait_for_ocr_says_so_first(library_dir, engine_for, monkeypatch):
    shutil.copy(FIXTURE_JPEG, library_dir / "letter.jpg")
    (library_dir / "note.md").write_text("# Note\n\nplain text layer\n", encoding="utf-8")
    engine = engine_for(library_dir)
    monkeypatch.setattr(engine.indexer, "_ocr_pass", lambda *args: None)
    engine.index()
    answer = call_tool(engine, "search", {"query": "lazy fox jumped", "mode": "keyword"})
    assert answer.miss and answer.guidance[0].startswith("1 file(s) (images, scanned pages) still wait for OCR")
    assert not call_tool(engine, "search", {"query": "plain text layer", "mode": "keyword"}).miss


def test_one_scan_under_two_names_is_read_by_ocr_once(library_dir, engine_for):
    """An archive scanned or exported twice OCRed each copy: OCR is the costly step of such a run."""
    for name in ("receipt-A.jpg", "receipt-B.jpg"):
        shutil.copy(FIXTURE_JPEG, library_dir / name)
    engine = engine_for(library_dir)
    (report,) = engine.index()
    assert report.ocr_files == 1, "one file handed to OCR, the other copied from it"
    for name in ("receipt-A.jpg", "receipt-B.jpg"):
        record = engine.catalog.by_path(str(library_dir / name))
        assert record.text_missing_reason is None and "quick brown dog" in " ".join(engine.catalog.lines(record.doc_id))


def test_a_file_deleted_while_the_ocr_pass_runs_leaves_the_index_and_ocr_off_is_no_cap(library_dir, tmp_path, monkeypatch):
    """It stayed as a ghost whose text was missing for "OCR failed: FileNotFoundError", and every image of an
    archive indexed with OCR turned off printed a `capped:` line."""
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    for name in ("kept.jpg", "gone.jpg"):
        shutil.copy(FIXTURE_JPEG, library_dir / name)
    (library_dir / "gone.jpg").write_bytes((library_dir / "gone.jpg").read_bytes() + b"\0")  # not a twin of kept.jpg
    libraries = [LibraryConfig(name="lib", paths=[library_dir])]
    off = Engine(Config(data_dir=tmp_path / "off", libraries=libraries, limits=ExtractLimits(ocr=False), raw={"embedding": {"model": "none"}}))
    try:
        (report,) = off.index()
        assert report.indexed == 2 and report.capped == []
    finally:
        off.close()
    engine = Engine(Config(data_dir=tmp_path / "on", libraries=libraries, raw={"embedding": {"model": "none"}}))
    try:
        ocr_pass = engine.indexer._ocr_pass

        def delete_first(*arguments):
            (library_dir / "gone.jpg").unlink()
            ocr_pass(*arguments)

        monkeypatch.setattr(engine.indexer, "_ocr_pass", delete_first)
        (report,) = engine.index()
        assert (report.indexed, report.removed, report.ocr_errors) == (2, 1, [])
        assert engine.catalog.by_path(str(library_dir / "gone.jpg")) is None
    finally:
        engine.close()


def test_a_run_says_which_ocr_language_packs_it_lacks(library_dir, tmp_path):
    from linkly_ls.core.config import Config, LibraryConfig
    from linkly_ls.core.engine import Engine

    shutil.copy(FIXTURE_JPEG, library_dir / "protokol.jpg")
    limits = ExtractLimits(ocr_languages="zzz_none+eng")
    engine = Engine(Config(data_dir=tmp_path / "data", libraries=[LibraryConfig(name="lib", paths=[library_dir])],
                           limits=limits, raw={"embedding": {"model": "none"}}))
    try:
        (report,) = engine.index()
        (note,) = report.notes
        assert note.startswith("OCR language pack(s) zzz_none named by [limits] ocr_languages are not installed")
        assert "eng" in note and "quick brown" in " ".join(engine.catalog.lines(make_doc_id(str(library_dir / "protokol.jpg"))))
    finally:
        engine.close()
