"""What every extractor shares: size limits, text decoding, titles from names."""

from __future__ import annotations

import codecs
from dataclasses import dataclass
from pathlib import Path

from linkly_ls.core.document import ExtractedDocument, ExtractionError, OutlineNode

#: how every error of reading a file from disk begins (permission denied, an I/O error): it says nothing
#: of the file's content, so an unchanged file that failed so is read again by the next run
READ_ERROR = "cannot read file: "


@dataclass(frozen=True)
class ExtractLimits:
    """Caps that keep one hostile file from exhausting the indexer.

    Anything cut because of a cap is reported as a warning on the document.
    """

    max_file_bytes: int = 200 * 1024 * 1024
    max_line_chars: int = 4000
    max_lines: int = 2_000_000
    max_unzipped_bytes: int = 500 * 1024 * 1024
    ocr: bool = True
    ocr_languages: str = "eng+fra+deu+chi_sim"
    #: leave OCR for a second pass: images and scanned pages are marked "OCR pending" instead of read
    ocr_deferred: bool = False
    #: scanned pages of one PDF read by OCR at most (a page takes 2-10 s)
    max_ocr_pages: int = 500
    #: a worker still busy with one file after this long is killed and the file gets an error (in the OCR
    #: pass, this plus `OCR_SECONDS_PER_PAGE` for each page it may read: `ocr_pass_timeout_s`)
    extract_timeout_s: float = 180.0
    #: address-space cap (RLIMIT_AS) of each extraction worker process
    extract_memory_mb: int = 3072


#: what the OCR pass allows a scanned page, beyond `extract_timeout_s`: a 300-page scan was stopped at its
#: 11th page by the 180 s meant for reading one file's text layer, and nothing of it was kept
OCR_SECONDS_PER_PAGE = 20.0


def ocr_pass_timeout_s(limits: ExtractLimits) -> float:
    """How long the OCR pass lets a worker read one file."""
    return limits.extract_timeout_s + OCR_SECONDS_PER_PAGE * limits.max_ocr_pages


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode bytes of unknown encoding; returns (text, encoding name).

    BOMs decide first (UTF-8, UTF-16, UTF-32), then strict UTF-8, then
    charset-normalizer, with CP1252 as the last resort (it never fails).
    Line endings are normalised to "\\n".
    """
    for bom, name in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return _normalise_newlines(data.decode(name)), name
            except UnicodeDecodeError:
                break
    try:
        return _normalise_newlines(data.decode("utf-8")), "utf-8"
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes  # only for text that is not UTF-8; searching never needs it

    matches = from_bytes(data[:200_000])
    best = matches.best()
    if best is not None and best.encoding:
        encoding = best.encoding
        if _cp1252_fits_as_well(matches, best):
            encoding = "cp1252"
        try:
            return _normalise_newlines(data.decode(encoding)), encoding
        except (UnicodeDecodeError, LookupError):
            pass
    return _normalise_newlines(data.decode("cp1252", errors="replace")), "cp1252"


def _cp1252_fits_as_well(matches, best) -> bool:
    """Prefer Windows-1252 (Western European) when it explains the bytes as well as the best guess.

    charset-normalizer often ranks CP1250 first for French or German Latin-1
    text, which turns "à" into "ŕ"; ties between single-byte Latin codecs are
    far more often Western European.
    """
    if best.encoding == "cp1252":
        return False
    if "cp1252" in (best.could_be_from_charset or []):
        return True
    return any(
        match.encoding == "cp1252" and match.chaos <= best.chaos and match.coherence >= best.coherence
        for match in matches
    )


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def read_bytes(path: Path, limits: ExtractLimits) -> bytes:
    """A text file's bytes (Markdown, plain text, HTML); refused when they are no text at all."""
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise ExtractionError(
            f"file is {size:,} bytes, over the {limits.max_file_bytes:,}-byte limit ([limits] max_file_mb)"
        )
    data = path.read_bytes()
    if is_binary(data):
        raise ExtractionError(
            f"binary content, not text: the file holds NUL bytes as programs and data files do (an executable, "
            f"an archive or a database saved as {path.suffix or 'a text file'}?)"
        )
    return data


#: how much of a file's start tells text from binary data
_BINARY_PROBE_BYTES = 8192


def is_binary(data: bytes) -> bool:
    """Whether the bytes are data rather than text: NUL bytes in the first 8 KB, as in executables, images
    and archives, unless those bytes read as UTF-16 or UTF-32 text without a byte order mark (whose ASCII
    characters hold NULs; `decode_text` reads such text). A lone stray NUL in a long text is no verdict."""
    head = data[:_BINARY_PROBE_BYTES]
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return False
    if head.count(0) < max(2, len(head) // 1000):
        return False
    return not any(_reads_as_text(head, encoding) for encoding in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"))


def _reads_as_text(head: bytes, encoding: str) -> bool:
    """Whether `head` decodes in `encoding` to characters that are nearly all printable, some of them spaces
    or line breaks (random bytes read as UTF-16 hold lone surrogates; an executable, runs of U+0000, and
    its ASCII names read as a line of CJK characters without a space)."""
    whole = head[: len(head) - len(head) % 4]
    text = whole.decode(encoding, errors="replace")
    if text.count("\ufffd") > 1:  # (a pair of surrogates cut at the end of the probe is one)
        return False
    printable = sum(1 for char in text if char.isprintable() or char in "\t\n\r\f")
    spaces = sum(text.count(char) for char in " \n\u3000")
    return printable >= 0.95 * len(text) and spaces * 500 >= len(text)


def title_from_path(path: Path) -> str:
    return path.stem.replace("_", " ").strip() or path.name


def cap_lines(document: ExtractedDocument, limits: ExtractLimits) -> None:
    """Wrap over-long lines and drop lines past the line cap, saying so.

    Outline ranges and page starts are moved with the lines they point to, so
    `read`, `grep` and `outline` still agree after wrapping.
    """
    width = limits.max_line_chars
    if any(len(line) > width for line in document.lines):
        new_number: list[int] = []
        wrapped: list[str] = []
        split_count = 0
        for line in document.lines:
            new_number.append(len(wrapped) + 1)
            if len(line) <= width:
                wrapped.append(line)
            else:
                split_count += 1
                wrapped.extend(_wrap(line, width))
        new_number.append(len(wrapped) + 1)

        def move(line_no: int) -> int:
            return new_number[min(max(line_no, 1), len(new_number)) - 1]

        def move_end(line_no: int) -> int:
            return new_number[min(max(line_no, 1), len(new_number) - 1)] - 1

        _remap_outline(document.outline, move, move_end)
        document.page_starts = [move(start) for start in document.page_starts]
        _remap_links(document, move, width)
        document.anchors = {name: move(line) for name, line in document.anchors.items()}
        document.lines = wrapped
        document.warnings.append(
            f"{split_count} line(s) longer than {width:,} characters were wrapped ([limits] max_line_chars)"
        )
    if len(document.lines) > limits.max_lines:
        document.warnings.append(f"text cut at {limits.max_lines:,} lines ([limits] max_lines)")
        document.lines = document.lines[: limits.max_lines]
        last = max(len(document.lines), 1)
        _remap_outline(document.outline, lambda n: min(n, last), lambda n: min(n, last))
        document.page_starts = [start for start in document.page_starts if start <= last]
        document.links = [link for link in document.links if link.line <= last]
        document.anchors = {name: min(line, last) for name, line in document.anchors.items()}
        for link in document.links:
            if link.target_line is not None:
                link.target_line = min(link.target_line, last)


def _remap_links(document: ExtractedDocument, move, width: int) -> None:
    """Move links with their lines; a link on a wrapped line loses its columns (they no longer fit)."""
    for link in document.links:
        if 0 < link.line <= len(document.lines) and len(document.lines[link.line - 1]) > width:
            link.start = link.end = 0
        link.line = move(link.line)
        if link.target_line is not None:
            link.target_line = move(link.target_line)


def _remap_outline(nodes: list[OutlineNode], move, move_end) -> None:
    for node in nodes:
        node.start_line = move(node.start_line)
        node.end_line = max(node.start_line, move_end(node.end_line))
        _remap_outline(node.children, move, move_end)


def _wrap(line: str, width: int) -> list[str]:
    """Wrap at the last space before `width` where there is one, else hard-cut.

    Walks the line by offsets: cutting the rest off the line at every piece copied it each time, which
    took minutes for a one-line file of 40 MB (quadratic)."""
    pieces: list[str] = []
    start, end = 0, len(line)
    while end - start > width:
        cut = line.rfind(" ", start + width // 2, start + width)
        if cut <= start:
            cut = start + width
        pieces.append(line[start:cut].rstrip())
        start = cut
        while start < end and line[start].isspace():
            start += 1
    if start < end:
        pieces.append(line[start:])
    return pieces


def alt_text(descriptions: list[str]) -> str:
    """A picture's alternative text as a line of its own (`[image: ...]`), or "" without one."""
    text = " ".join(" ".join(descriptions).split())
    return f"[image: {text}]" if text else ""
