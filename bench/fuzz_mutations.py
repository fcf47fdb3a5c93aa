"""Hostile variants of real documents, for `fuzz_extract.py`.

Every mutant comes from a corpus file (or, for the deep-nesting cases, from a
template) and a seeded random generator, so a run is reproducible. Mutations:

- any file: truncation at a random point, flipped bytes, a block of random bytes;
- PDF: every `/Length` made enormous;
- DOCX, PPTX, EPUB: a member's compressed data corrupted, a member's CRC
  wrong, the central directory dropped, a member's declared sizes made huge,
  a real zip bomb (a member of 2 GiB of zeros, 2 MB compressed) and the same
  bomb behind a member that keeps its small declared size (a lying header);
- deep nesting: HTML and XHTML nested 100,000 elements deep (closed and
  unclosed), Markdown with 50,000 nested list or blockquote levels, a DOCX and
  an EPUB whose XML nests 100,000 deep.
"""

from __future__ import annotations

import io
import random
import re
import struct
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ZIP_SUFFIXES = {".docx", ".epub", ".pptx"}
SOURCE_SUFFIXES = {".pdf", ".html", ".htm", ".md", *ZIP_SUFFIXES}
GENERIC_KINDS = ["truncate", "flip_bytes", "random_block"]
ZIP_KINDS = ["zip_corrupt_data", "zip_bad_crc", "zip_no_central_directory", "zip_huge_sizes", "zip_bomb",
             "zip_lying_bomb"]
#: what the error of a mutant of these kinds must say: the zip guard refused it before unpacking
EXPECTED_REFUSAL = {"zip_bomb": "zip bomb", "zip_huge_sizes": "zip bomb"}
BOMB_BYTES = 2 * 2**30
DEEP = 100_000
DEEP_MARKDOWN = 50_000


@dataclass(frozen=True)
class Mutant:
    path: Path
    kind: str
    source: str

    @property
    def expected_refusal(self) -> str | None:
        return EXPECTED_REFUSAL.get(self.kind)


class ZeroBomb:
    """A raw deflate stream of BOMB_BYTES zeros (about 2 MB) and its CRC, built once.

    Each 1 MiB of zeros is compressed after a full flush, so every block's bytes
    are the same and the stream is that block repeated, then the final block.
    """

    def __init__(self) -> None:
        zeros = bytes(2**20)
        compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
        block = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
        self.data = block * (BOMB_BYTES // len(zeros)) + compressor.flush()
        crc = 0
        for _ in range(BOMB_BYTES // len(zeros)):
            crc = zlib.crc32(zeros, crc)
        self.crc = crc


@dataclass
class ZipEntry:
    name: str
    local_offset: int
    central_offset: int
    data_offset: int
    compressed_size: int


def zip_entries(data: bytes) -> tuple[list[ZipEntry], int]:
    """The members of a (non-zip64) archive, read from its central directory; and where that starts."""
    end = data.rfind(b"PK\x05\x06")
    if end < 0:
        return [], len(data)
    central_start = struct.unpack_from("<I", data, end + 16)[0]
    entries: list[ZipEntry] = []
    position = central_start
    while data[position : position + 4] == b"PK\x01\x02":
        compressed = struct.unpack_from("<I", data, position + 20)[0]
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, position + 28)
        local = struct.unpack_from("<I", data, position + 42)[0]
        name = data[position + 46 : position + 46 + name_length].decode("utf-8", "replace")
        local_name, local_extra = struct.unpack_from("<HH", data, local + 26)
        entries.append(ZipEntry(name, local, position, local + 30 + local_name + local_extra, compressed))
        position += 46 + name_length + extra_length + comment_length
    return entries, central_start


def _content_entries(entries: list[ZipEntry]) -> list[ZipEntry]:
    """Members worth damaging: not the EPUB `mimetype` marker, not empty."""
    chosen = [entry for entry in entries if entry.name != "mimetype" and entry.compressed_size > 0]
    return chosen or entries


def truncate(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    return data[: rng.randrange(0, len(data))]


def flip_bytes(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 32)):
        position = rng.randrange(len(out))
        out[position] ^= 1 << rng.randrange(8)
    return bytes(out)


def random_block(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    out = bytearray(data)
    size = rng.randint(16, 4096)
    position = rng.randrange(len(out))
    out[position : position + size] = rng.randbytes(size)
    return bytes(out)


def pdf_huge_lengths(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    return re.sub(rb"/Length\s+\d+", b"/Length 99999999999", data)


def zip_corrupt_data(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    entries, _ = zip_entries(data)
    entry = rng.choice(_content_entries(entries))
    out = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        position = entry.data_offset + rng.randrange(max(entry.compressed_size, 1))
        out[position] ^= 0xFF
    return bytes(out)


def zip_bad_crc(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    entries, _ = zip_entries(data)
    entry = rng.choice(_content_entries(entries))
    out = bytearray(data)
    crc = rng.getrandbits(32)
    struct.pack_into("<I", out, entry.local_offset + 14, crc)
    struct.pack_into("<I", out, entry.central_offset + 16, crc)
    return bytes(out)


def zip_no_central_directory(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    _, central_start = zip_entries(data)
    return data[:central_start]


def zip_huge_sizes(data: bytes, rng: random.Random, _: ZeroBomb) -> bytes:
    entries, _ = zip_entries(data)
    out = bytearray(data)
    for entry in rng.sample(_content_entries(entries), k=min(3, len(entries))):
        struct.pack_into("<I", out, entry.local_offset + 22, 0xFFFFFFF0)
        struct.pack_into("<I", out, entry.central_offset + 24, 0xFFFFFFF0)
    return bytes(out)


def _with_raw_member(data: bytes, name: str, bomb: ZeroBomb, declared: tuple[int, int] | None) -> bytes:
    """The archive with member `name` replaced (or added) by the zero bomb's deflate data.

    zipfile can only write data it compresses itself, so the bomb is stored
    as-is and its headers are then patched: method deflate, and either the
    bomb's real CRC and size or `declared` (crc, size), a lie.
    """
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            if info.filename != name:
                target.writestr(info, source.read(info.filename), compress_type=info.compress_type)
        target.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), bomb.data,
                        compress_type=zipfile.ZIP_STORED)
    out = bytearray(buffer.getvalue())
    crc, size = declared or (bomb.crc, BOMB_BYTES)
    entry = next(entry for entry in zip_entries(bytes(out))[0] if entry.name == name)
    for header, method_at, crc_at in ((entry.local_offset, 8, 14), (entry.central_offset, 10, 16)):
        struct.pack_into("<H", out, header + method_at, zipfile.ZIP_DEFLATED)
        struct.pack_into("<I", out, header + crc_at, crc)
        struct.pack_into("<I", out, header + crc_at + 8, size)
    return bytes(out)


def zip_bomb(data: bytes, rng: random.Random, bomb: ZeroBomb) -> bytes:
    """A member of 2 GiB of zeros, honestly declared; in an EPUB sometimes as its `mimetype` marker."""
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    name = "mimetype" if "mimetype" in names and rng.random() < 0.3 else f"media/zeros-{rng.randrange(1000)}.bin"
    return _with_raw_member(data, name, bomb, None)


def zip_lying_bomb(data: bytes, rng: random.Random, bomb: ZeroBomb) -> bytes:
    archive = zipfile.ZipFile(io.BytesIO(data))
    members = [info for info in archive.infolist() if info.filename.endswith((".xml", ".xhtml", ".html"))]
    victim = rng.choice(members or archive.infolist())
    return _with_raw_member(data, victim.filename, bomb, (victim.CRC, victim.file_size))


MUTATIONS: dict[str, Callable[[bytes, random.Random, ZeroBomb], bytes]] = {
    "truncate": truncate,
    "flip_bytes": flip_bytes,
    "random_block": random_block,
    "pdf_huge_lengths": pdf_huge_lengths,
    "zip_corrupt_data": zip_corrupt_data,
    "zip_bad_crc": zip_bad_crc,
    "zip_no_central_directory": zip_no_central_directory,
    "zip_huge_sizes": zip_huge_sizes,
    "zip_bomb": zip_bomb,
    "zip_lying_bomb": zip_lying_bomb,
}


def choose_kind(source: Path, rng: random.Random) -> str:
    suffix = source.suffix.lower()
    if suffix in ZIP_SUFFIXES and rng.random() < 0.5:
        return rng.choice(ZIP_KINDS)
    if suffix == ".pdf" and rng.random() < 0.15:
        return "pdf_huge_lengths"
    return rng.choice(GENERIC_KINDS)


def _replace_member(data: bytes, name: str, content: bytes) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for info in source.infolist():
            payload = content if info.filename == name else source.read(info.filename)
            target.writestr(info, payload, compress_type=info.compress_type)
    return buffer.getvalue()


def _largest_member(data: bytes, suffixes: tuple[str, ...]) -> str:
    infos = [info for info in zipfile.ZipFile(io.BytesIO(data)).infolist() if info.filename.endswith(suffixes)]
    return max(infos, key=lambda info: info.file_size).filename


def deep_html(closed: bool) -> bytes:
    body = "<div>" * DEEP + "deep nesting text" + ("</div>" * DEEP if closed else "")
    return f"<!doctype html><html><head><title>Deep</title></head><body>{body}</body></html>".encode()


def deep_formatting_html() -> bytes:
    """Unclosed, interleaved formatting elements: the HTML parser's adoption-agency worst case."""
    body = "<b><i><u><a href='#'>" * (DEEP // 4) + "text" + "</b></i></u></a>" * 10
    return f"<!doctype html><html><body><p>{body}</p></body></html>".encode()


def deep_xhtml() -> bytes:
    body = "<section>" * DEEP + "<p>deep nesting text</p>" + "</section>" * DEEP
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml">'
        f"<head><title>Deep</title></head><body>{body}</body></html>"
    ).encode()


def deep_markdown_lists() -> bytes:
    return ("- " * DEEP_MARKDOWN + "deep item\n").encode()


def deep_markdown_quotes() -> bytes:
    return (">" * DEEP_MARKDOWN + " deep quote\n").encode()


def deep_markdown_indented_lists(levels: int = 1500) -> bytes:
    return "".join("  " * level + f"- level {level}\n" for level in range(levels)).encode()


def deep_docx(template: bytes) -> bytes:
    namespace = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    body = "<w:sdt><w:sdtContent>" * DEEP + "<w:p><w:r><w:t>deep</w:t></w:r></w:p>" + "</w:sdtContent></w:sdt>" * DEEP
    xml = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
           f'<w:document xmlns:w="{namespace}"><w:body>{body}</w:body></w:document>')
    return _replace_member(template, "word/document.xml", xml.encode())


def deep_epub(template: bytes) -> bytes:
    return _replace_member(template, _largest_member(template, (".xhtml", ".html", ".htm")), deep_xhtml())


#: deep-nesting mutant -> (file suffix, corpus template or None, builder)
DEEP_NESTING: dict[str, tuple[str, str | None, Callable[[bytes], bytes]]] = {
    "deep_html": (".html", None, lambda _: deep_html(closed=True)),
    "deep_html_unclosed": (".html", None, lambda _: deep_html(closed=False)),
    "deep_html_formatting": (".html", None, lambda _: deep_formatting_html()),
    "deep_xhtml": (".xhtml", None, lambda _: deep_xhtml()),
    "deep_markdown_lists": (".md", None, lambda _: deep_markdown_lists()),
    "deep_markdown_quotes": (".md", None, lambda _: deep_markdown_quotes()),
    "deep_markdown_indented": (".md", None, lambda _: deep_markdown_indented_lists()),
    "deep_docx": (".docx", "documents/work/dpkg cheat sheet.docx", deep_docx),
    "deep_epub": (".epub", "books/epub/sample-ebook.epub", deep_epub),
}


def write_deep_nesting(folder: Path, corpus: Path) -> list[Mutant]:
    folder.mkdir(parents=True, exist_ok=True)
    mutants: list[Mutant] = []
    for kind, (suffix, template, build) in DEEP_NESTING.items():
        if template is not None and not (corpus / template).is_file():
            continue
        path = folder / f"{kind}{suffix}"
        path.write_bytes(build((corpus / template).read_bytes() if template else b""))
        mutants.append(Mutant(path, kind, template or "synthetic"))
    return mutants


def make_mutants(sources: list[Path], corpus: Path, count: int, seed: int, folder: Path) -> list[Mutant]:
    """The deep-nesting set, then `count` minus that many random mutants of `sources`."""
    rng = random.Random(seed)
    bomb = ZeroBomb()
    mutants = write_deep_nesting(folder / "deep", corpus)
    by_type: dict[str, list[Path]] = {}
    for source in sorted(sources):
        suffix = source.suffix.lower()
        by_type.setdefault(".html" if suffix == ".htm" else suffix, []).append(source)
    types = sorted(by_type)
    cache: dict[Path, bytes] = {}
    for number in range(max(0, count - len(mutants))):
        source = rng.choice(by_type[rng.choice(types)])
        kind = choose_kind(source, rng)
        data = cache.setdefault(source, source.read_bytes())
        path = folder / kind / f"{number:04d}-{source.stem[:40]}{source.suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(MUTATIONS[kind](data, rng, bomb))
        mutants.append(Mutant(path, kind, source.relative_to(corpus).as_posix()))
    return mutants
