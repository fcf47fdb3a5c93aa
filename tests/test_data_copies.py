"""tests/data holds exact copies of corpus files: each listed here, each identical to the corpus's."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
#: file in tests/data -> its path in the shared corpus
COPIES = {
    "ch03-02-data-types.md": "notes/learning-rust/ch03-02-data-types.md",
    "grep.1.txt": "reference/man/grep.1.txt",
    "pathlib.html": "web/python-3.11-docs/library/pathlib.html",
    "report-truncated.docx": "odd/report-truncated.docx",
}


def test_every_copy_is_listed_here_and_in_the_readme() -> None:
    files = {path.name for path in DATA.iterdir()} - {"README.md"}
    assert files == set(COPIES)
    readme = (DATA / "README.md").read_text(encoding="utf-8")
    assert all(f"`{name}` | `{source}`" in readme for name, source in COPIES.items())


def test_copies_are_identical_to_the_corpus_files(corpus: Path) -> None:
    with (corpus / "MANIFEST.tsv").open(encoding="utf-8", newline="") as handle:
        digests = {row["path"]: row["sha256"] for row in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)}
    for name, source in COPIES.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digests[source], name
