"""What every extractor shares: long lines wrapped at a space, in one pass over them."""

from __future__ import annotations

import time

from linkly_ls.core.document import ExtractedDocument
from linkly_ls.core.extract.base import ExtractLimits, cap_lines


def test_a_line_of_tens_of_megabytes_is_wrapped_in_one_pass():
    """Cutting the rest of the line off at every piece copied it each time: minutes for 40 MB."""
    line = "word1 " * 5_000_000
    document = ExtractedDocument(lines=["# Big", line], title="Big", doc_type="md")
    started = time.thread_time()
    cap_lines(document, ExtractLimits(max_line_chars=4000))
    assert time.thread_time() - started < 2.0
    assert all(len(piece) <= 4000 for piece in document.lines)
    assert " ".join(document.lines[1:]).strip() == line.strip() and document.warnings


def test_binary_data_named_as_text_is_refused_and_text_without_a_bom_is_not(tmp_path):
    """An executable named .txt and random bytes named .md were indexed as mojibake that then ranked
    near the top in hybrid search; UTF-16 and UTF-32 text without a BOM holds NULs too, and stays text."""
    import random

    import pytest

    from linkly_ls.core.document import ExtractionError
    from linkly_ls.core.extract import extract_file
    from linkly_ls.core.extract.base import is_binary

    noise = random.Random(7).randbytes(6000)
    executable = b"\x7fELF\x02\x01\x01" + b"\x00" * 9 + b"\x03\x00>\x00\x01\x00\x00\x00" + b"glibc_2.34\x00" * 200
    for name, data in (("tool.txt", executable), ("junk.md", noise), ("page.html", noise)):
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ExtractionError, match=r"^binary content, not text: the file holds NUL bytes"):
            extract_file(tmp_path / name)
    for encoding in ("utf-16-le", "utf-16-be", "utf-32-le"):
        for text in ("Notes about borrowing.\n", "中文文本，这是一段测试。\n", "Zażółć gęślą jaźń Āā\n"):
            assert not is_binary((text * 40).encode(encoding)), (encoding, text)
    assert not is_binary((b"a long note " * 200 + b"\x00") * 3)  # a few stray NULs (a crashed editor's)
