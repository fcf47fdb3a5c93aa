"""Tesseract runs as background work: at nice 19, and still stopped by its timeout."""

from __future__ import annotations

import os
import sys

import pytest
from PIL import Image

from linkly_ls.core.background import LOW_PRIORITY_NICE
from linkly_ls.core.extract import ocr
from linkly_ls.core.extract.base import ExtractLimits


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the child's priority the Linux way")
def test_tesseract_runs_at_nice_19_and_still_reads(corpus, monkeypatch):
    if ocr.tesseract_path() is None:
        pytest.skip("tesseract is not installed")
    priorities: list[int] = []
    real = ocr.lower_process

    def lower_and_look(pid: int) -> None:
        real(pid)
        priorities.append(os.getpriority(os.PRIO_PROCESS, pid))  # tesseract waits for its image on stdin

    monkeypatch.setattr(ocr, "lower_process", lower_and_look)
    with Image.open(corpus / "scans/ocr-sample.jpg") as image:
        lines = ocr.ocr_image(image, ExtractLimits())
    assert priorities == [LOW_PRIORITY_NICE]
    assert "The quick brown dog jumped over the" in " ".join(lines)


def test_a_tesseract_run_past_the_timeout_is_stopped(tmp_path, monkeypatch):
    sleeper = tmp_path / "tesseract"
    sleeper.write_text("#!/bin/sh\nexec sleep 30\n", encoding="utf-8")
    sleeper.chmod(0o755)
    monkeypatch.setattr(ocr, "OCR_TIMEOUT", 0.5)
    with pytest.raises(ocr.OcrError, match="OCR took longer than 0.5 s and was stopped"):
        ocr._read(str(sleeper), b"P5 1 1 255\n\x00", "eng")
