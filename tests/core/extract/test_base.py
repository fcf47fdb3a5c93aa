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
