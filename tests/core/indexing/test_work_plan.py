"""Order and place of extraction: slowest files first, a few small text files in-process."""

from __future__ import annotations

from pathlib import Path

from linkly_ls.core.indexing import work_plan


def test_large_pdfs_and_images_go_first(tmp_path: Path):
    files = [
        (tmp_path / "note.md", 4_000),
        (tmp_path / "manual.pdf", 6_500_000),
        (tmp_path / "scan.png", 140_000),
        (tmp_path / "paper.pdf", 250_000),
    ]
    order = [files[index][0].name for index in work_plan.slowest_first(files)]
    assert order == ["manual.pdf", "scan.png", "paper.pdf", "note.md"]


def test_a_few_small_text_files_are_read_in_process(tmp_path: Path):
    notes = []
    for number in range(3):
        path = tmp_path / f"n{number}.md"
        path.write_text("# Note\n\ntext\n", encoding="utf-8")
        notes.append((path, path.stat().st_size))
    assert work_plan.fits_in_process(notes)
    assert not work_plan.fits_in_process([])
    assert not work_plan.fits_in_process(notes * 3), "more than a handful: workers"


def test_anything_else_goes_to_workers(tmp_path: Path):
    disguised = tmp_path / "really-a.pdf.txt"
    disguised.write_bytes(b"%PDF-1.7\n" + b"0" * 100)
    assert not work_plan.fits_in_process([(disguised, disguised.stat().st_size)])
    big = tmp_path / "big.txt"
    big.write_text("word " * 300_000, encoding="utf-8")
    assert not work_plan.fits_in_process([(big, big.stat().st_size)])
    image = tmp_path / "a.png"
    image.write_bytes(b"\x89PNG\r\n")
    assert not work_plan.fits_in_process([(image, image.stat().st_size)])


def test_the_head_start_takes_the_quickest_plain_text_files_up_to_its_budget(tmp_path: Path):
    files = [(tmp_path / "manual.pdf", 6_500_000), (tmp_path / "deck.pptx", 90_000)]
    for name, size in [("big.txt", 700_000), ("a.md", 3_000), ("fake.md", 2_000), ("b.txt", 20_000), ("c.md", 900)]:
        path = tmp_path / name
        path.write_bytes(b"%PDF-1.7\n" + b"0" * size if name == "fake.md" else b"word " * (size // 5))
        files.append((path, path.stat().st_size))
    chosen = [files[index][0].name for index in work_plan.head_start(files)]
    # from the end; a .md that is really a PDF, a PPTX and a PDF are left to the workers, and the
    # 700 kB text file does not fit the budget left
    assert chosen == ["c.md", "b.txt", "a.md"]
    spent = sum(work_plan.estimated_seconds(*files[index]) + work_plan.HEAD_START_SECONDS_PER_FILE
                for index in work_plan.head_start(files))
    assert spent <= work_plan.HEAD_START_SECONDS
    assert work_plan.estimated_seconds(*files[2]) + spent > work_plan.HEAD_START_SECONDS


def test_the_plan_places_files_here_or_in_the_workers_in_extraction_order(tmp_path: Path):
    def files_of(sizes: dict[str, int]) -> list[tuple[Path, int]]:
        made = []
        for name, size in sizes.items():
            path = tmp_path / name
            path.write_bytes(b"w " * (size // 2))
            made.append((path, path.stat().st_size))
        return made

    notes = files_of({"a.md": 2_000, "b.md": 4_000})
    assert work_plan.plan(notes, workers_up=False) == ([1, 0], [])  # a handful: all here, largest first
    mixed = files_of({"n1.md": 900, "manual.pdf": 6_000_000, "n2.md": 3_000, **{f"x{n}.txt": 100 for n in range(8)}})
    here, workers = work_plan.plan(mixed, workers_up=False)
    assert workers == [1] and sorted(here) == [0, *range(2, 11)]
    assert [index for index in work_plan.slowest_first(mixed) if index in here] == here
    assert work_plan.plan(mixed, workers_up=True) == ([], work_plan.slowest_first(mixed))


def test_the_workers_preload_the_extractors_of_the_runs_document_types_only():
    preload = work_plan.worker_preload(["a/paper.pdf", "b/Scan.PDF", "notes/n.md", "unknown.xyz"])
    assert preload == (
        work_plan.WORKER_PRELOAD, "linkly_ls.core.extract.markdown", "linkly_ls.core.extract.pdf"
    )
    assert work_plan.worker_preload([]) == (work_plan.WORKER_PRELOAD,)


def test_small_files_may_wait_behind_another_in_a_worker_but_long_ones_not(tmp_path: Path):
    files = [
        (tmp_path / "note.md", 4_000),
        (tmp_path / "long-note.md", 400_000),
        (tmp_path / "paper.pdf", 250_000),
        (tmp_path / "letter.docx", 12_000),
        (tmp_path / "scan.png", 20_000),
    ]
    assert work_plan.quick_files(files) == {str(tmp_path / "note.md"), str(tmp_path / "letter.docx")}
