"""Line storage: blocks round-trip, ranges decompress only what they need, old single-stream blobs still read."""

import zlib

from linkly_ls.core.store import line_blocks
from linkly_ls.core.store.line_blocks import blocks, decode_range, decode_text, encode_lines, is_blocked


def test_round_trip_across_many_blocks(monkeypatch):
    monkeypatch.setattr(line_blocks, "BLOCK_CHARS", 100)
    lines = [f"line {n} é € \U0001f600" for n in range(1, 301)] + ["", "last"]
    blob = encode_lines(lines)
    assert is_blocked(blob) and len(blocks(blob)) > 20
    assert decode_text(blob)[0].split("\n") == lines
    assert sum(block.line_count for block in blocks(blob)) == len(lines)
    for first, count in [(0, 1), (0, 500), (5, 40), (299, 10), (301, 1), (302, 5), (150, 0)]:
        assert decode_range(blob, first, count) == lines[first : first + count]


def test_lines_longer_than_a_block_and_trailing_empty_lines(monkeypatch):
    monkeypatch.setattr(line_blocks, "BLOCK_CHARS", 10)
    for lines in (["short", "x" * 50, "after"], ["x" * 50, ""], ["abcdefghij", ""], ["a", "", ""], ["", "a"]):
        blob = encode_lines(lines)
        assert sum(block.line_count for block in blocks(blob)) == len(lines)
        assert decode_text(blob)[0].split("\n") == lines
        for first in range(len(lines)):
            assert decode_range(blob, first, 2) == lines[first : first + 2]


def test_newlines_inside_lines_split_them_as_before():
    blob = encode_lines(["a\nb", "c"])
    assert decode_text(blob) == ("a\nb\nc", 3)
    assert decode_range(blob, 0, 3) == ["a", "b", "c"]


def test_empty_document():
    assert decode_text(encode_lines([])) == ("", 0)
    assert decode_range(encode_lines([]), 0, 10) == []


def test_surrogates_survive():
    lines = ["bad \udcff byte", "ok"]
    assert decode_text(encode_lines(lines))[0].split("\n") == lines


def test_single_stream_blobs_of_older_catalogs_still_read():
    lines = ["first", "second é", "third"]
    legacy = zlib.compress("\n".join(lines).encode("utf-8", "surrogatepass"), 6)
    assert not is_blocked(legacy)
    assert decode_text(legacy) == ("\n".join(lines), None)
    assert decode_range(legacy, 1, 5) == lines[1:]


def test_zlib_blocks_of_older_catalogs_still_read(monkeypatch):
    lines = [f"line {n} é \udcff" for n in range(400)] + [""]
    with monkeypatch.context() as patch:  # write blocks as the catalog did before zstd (more than enough to inflate in threads)
        patch.setattr(line_blocks, "MAGIC", line_blocks.ZLIB_MAGIC)
        patch.setattr(line_blocks, "_compress", lambda data: zlib.compress(data, 1))
        patch.setattr(line_blocks, "BLOCK_CHARS", 500)
        older = encode_lines(lines)
    assert older.startswith(line_blocks.ZLIB_MAGIC) and is_blocked(older) and len(blocks(older)) > 8
    assert decode_text(older) == ("\n".join(lines), len(lines))
    assert decode_range(older, 390, 20) == lines[390:]
    assert encode_lines(lines).startswith(line_blocks.MAGIC) and line_blocks.MAGIC != line_blocks.ZLIB_MAGIC

