"""What one indexing run of a library did: counts, failures and warnings, and what its walk left out."""

from __future__ import annotations

from dataclasses import dataclass, field

from linkly_ls.core.extract.ocr import OCR_DISABLED
from linkly_ls.core.indexing.skips import describe


@dataclass
class IndexReport:
    library: str
    indexed: int = 0
    unchanged: int = 0
    failed: int = 0
    removed: int = 0
    seconds: float = 0.0
    errors: list[tuple[str, str]] = field(default_factory=list)
    #: (path, warning) for indexed files that a `[limits]` cap cut or wrapped
    capped: list[tuple[str, str]] = field(default_factory=list)
    #: (path, warning) for indexed files whose content is another format than their name says
    misnamed: list[tuple[str, str]] = field(default_factory=list)
    #: the longest one file spent in a worker (extraction, analysis, chunking), and which file
    slowest_seconds: float = 0.0
    slowest_path: str = ""
    #: seconds until the keyword index held every file's text layer (the OCR pass comes after)
    text_layer_seconds: float = 0.0
    #: files read by the OCR pass, and (path, message) for those whose OCR failed
    ocr_files: int = 0
    ocr_errors: list[tuple[str, str]] = field(default_factory=list)
    #: what the run tells about itself beside its files (an OCR language pack that is missing)
    notes: list[str] = field(default_factory=list)
    #: reason -> files of the library's folders a full walk left out (see skips.py); a file over
    #: `[limits] max_file_mb` is counted here and, with its error, among the failed
    skipped: dict[str, int] = field(default_factory=dict)

    def add_capped(self, path: str, warnings: list[str]) -> None:
        """Note the warnings of a file a `[limits]` cap cut (OCR turned off on purpose is no cap: an archive of
        photos printed a `capped:` line for each at every run)."""
        self.capped += [(path, warning) for warning in warnings if "[limits]" in warning and OCR_DISABLED not in warning]

    @property
    def skipped_count(self) -> int:
        return sum(self.skipped.values())

    def summary(self) -> str:
        skipped = f"; {self.skipped_count} skipped ({describe(self.skipped)})" if self.skipped else ""
        return (
            f"{self.library}: {self.indexed} indexed, {self.unchanged} unchanged, {self.failed} failed, "
            f"{self.removed} removed in {self.seconds:.1f} s{skipped}"
        )
