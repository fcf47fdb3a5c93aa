"""The decoded-text cache: line views, bounds by bytes, versions; the catalog's use of it."""

import random
import zlib

import pytest

from linkly_ls.core.store import line_cache
from linkly_ls.core.store.catalog import Catalog, DocumentRecord
from linkly_ls.core.store.line_cache import CHECKPOINT_CHARS, DocumentText, LineCache


@pytest.mark.parametrize("extra", ["", "é", "€", "\U0001f600", "\udcff"])
def test_lines_and_line_numbers_for_every_character_width(extra):
    lines = [f"a{extra}b", "", f"{extra}{extra}", "end"]
    text = "\n".join(lines)
    document = DocumentText(text, (1.0, "h"))
    offsets = [0, 2, len(lines[0]), len(lines[0]) + 1, len(text) - 1]
    assert document.line_numbers(offsets) == [1, 1, 1, 2, 4]
    assert [document.line(n) for n in range(1, 5)] == lines
    assert document.line_range(2, 10) == lines[1:]
    assert document.line_bounds(len(lines[0]) + 1) == (len(lines[0]) + 1, len(lines[0]) + 1)
    assert document.spaced == " ".join(lines) and document.line_count == 4


@pytest.mark.parametrize("sample", [3, 40])
@pytest.mark.parametrize("length", [0, 1, CHECKPOINT_CHARS - 1, CHECKPOINT_CHARS, 3 * CHECKPOINT_CHARS, 3 * CHECKPOINT_CHARS + 5])
def test_line_numbers_from_checkpoints_match_counting_from_the_start(length, sample):
    rng = random.Random(length)
    text = "".join(rng.choice("ab\n€") for _ in range(length))
    document = DocumentText(text, (1.0, "h"))
    offsets = sorted(set(rng.sample(range(length + 1), min(length + 1, sample)) + [length]))
    expected = [text.count("\n", 0, offset) + 1 for offset in offsets]
    assert document.line_numbers(offsets) == expected
    every_checkpoint = list(range(0, length + 1, CHECKPOINT_CHARS))
    assert document.line_numbers(every_checkpoint) == [text.count("\n", 0, n) + 1 for n in every_checkpoint]


@pytest.mark.parametrize("seed", range(6))
def test_checkpoints_are_counted_only_as_far_as_asked_and_then_extended(seed):
    rng = random.Random(seed)
    text = "".join(rng.choice("ab\n€") for _ in range(rng.randrange(20 * CHECKPOINT_CHARS, 40 * CHECKPOINT_CHARS)))
    document = DocumentText(text, (1.0, "h"))
    near_start = sorted(rng.sample(range(6 * CHECKPOINT_CHARS), 3))
    assert document.line_numbers(near_start) == [text.count("\n", 0, offset) + 1 for offset in near_start]
    assert len(document._checkpoints) <= 13, "not the whole text: at most twice as far as the offsets asked for"
    everywhere = sorted(rng.sample(range(len(text) + 1), 5))
    assert document.line_numbers(everywhere) == [text.count("\n", 0, offset) + 1 for offset in everywhere]
    every_checkpoint = list(range(0, len(text) + 1, CHECKPOINT_CHARS))
    assert document.line_numbers(every_checkpoint) == [text.count("\n", 0, n) + 1 for n in every_checkpoint]
    assert document.line_start(document.line_count) == text.rfind("\n") + 1


def test_numbering_offsets_spread_over_the_text_grows_the_checkpoints_by_doubling():
    # Offsets a checkpoint or more apart each reach past the checkpoints known so far: growing the list
    # a few entries a time copied it (and summed its size) once per offset, quadratic in the text.
    grown: list[int] = []

    class Watched(DocumentText):
        def __setattr__(self, name, value):  # noqa: ANN001
            if name == "_checkpoints" and value is not None:
                grown.append(len(value))
            super().__setattr__(name, value)

    text = "line\n" * 200_000
    document = Watched(text, (1.0, "h"))
    offsets = list(range(0, len(text), CHECKPOINT_CHARS + 100))
    assert document.line_numbers(offsets) == [offset // 5 + 1 for offset in offsets]
    assert len(grown) <= (len(text) // CHECKPOINT_CHARS).bit_length() + 2


@pytest.mark.parametrize("checkpoint_chars", [1, 3, 16, CHECKPOINT_CHARS])
@pytest.mark.parametrize("seed", range(4))
def test_lines_are_found_from_the_checkpoint_before_them(monkeypatch, checkpoint_chars, seed):
    monkeypatch.setattr(line_cache, "CHECKPOINT_CHARS", checkpoint_chars)
    rng = random.Random(seed)
    lines = ["".join(rng.choice("ab€") for _ in range(rng.choice([0, 0, 1, 5, 40]))) for _ in range(rng.randrange(1, 120))]
    document = DocumentText("\n".join(lines), (1.0, "h"))
    assert document.line_count == len(lines)
    for first in range(1, len(lines) + 1):
        assert document.text[document.line_start(first) :].split("\n")[0] == lines[first - 1]
        assert document.line(first) == lines[first - 1]
        for count in (1, 2, 7, len(lines)):
            assert document.line_range(first, count) == lines[first - 1 : first - 1 + count]
    assert document.line_range(len(lines) + 1, 5) == []


def test_from_blob_takes_the_line_count_from_the_blocks():
    from linkly_ls.core.store.line_blocks import encode_lines

    for lines in ([], ["one"], ["a", "", "b", ""], [f"l{n}" for n in range(5000)]):
        document = DocumentText.from_blob(encode_lines(lines), (1.0, "h"))
        assert document.line_count == len(DocumentText("\n".join(lines), (1.0, "h")).lines()) == len(lines)


def test_empty_text_has_no_lines():
    document = DocumentText("", (1.0, "h"))
    assert document.line_count == 0 and document.lines() == [] and document.line_range(1, 5) == []


def test_cache_evicts_least_recently_used_by_bytes_and_keeps_the_newest():
    one, two, three = (DocumentText("x" * 1000, (1.0, "h")) for _ in range(3))
    cache = LineCache(max_bytes=int(one.nbytes * 2.5))
    cache.put("one", one)
    cache.put("two", two)
    assert cache.get("one", (1.0, "h")) is one  # now most recent
    cache.put("three", three)
    assert "two" not in cache and "one" in cache and "three" in cache
    tiny = LineCache(max_bytes=1)
    tiny.put("one", one)
    assert tiny.get("one", (1.0, "h")) is one


def test_cache_drops_an_entry_of_another_version():
    cache = LineCache()
    cache.put("doc", DocumentText("old", (1.0, "a")))
    assert cache.get("doc", (2.0, "a")) is None and "doc" not in cache


def _record(doc_id: str, indexed_at: float, content_hash: str, lines: list[str]) -> DocumentRecord:
    return DocumentRecord(
        doc_id=doc_id, library="lib", path=f"/docs/{doc_id}.txt", doc_type="txt", title=doc_id, size=1,
        mtime_ns=1, content_hash=content_hash, word_count=1, total_lines=len(lines), has_outline=False,
        language=None, keywords=[], outline=[], page_starts=[], warnings=[], text_missing_reason=None,
        indexed_at=indexed_at,
    )


def test_catalog_serves_a_document_reindexed_by_another_process(tmp_path):
    path = tmp_path / "catalog.sqlite3"
    reader, writer = Catalog(path), Catalog(path)
    writer.put_document(_record("aaaaaaaaaaaa", 1.0, "h1", ["old one", "old two"]), ["old one", "old two"])
    assert reader.lines("aaaaaaaaaaaa") == ["old one", "old two"]
    assert reader.line_range("aaaaaaaaaaaa", 2, 5) == ["old two"]
    writer.put_document(_record("aaaaaaaaaaaa", 2.0, "h2", ["new"]), ["new"])
    assert reader.lines("aaaaaaaaaaaa") == ["new"]
    assert reader.line_range("aaaaaaaaaaaa", 1, 5) == ["new"]
    writer.remove_document("aaaaaaaaaaaa")
    assert reader.lines("aaaaaaaaaaaa") == [] and reader.document_text("aaaaaaaaaaaa") is None
    assert reader.line_range("aaaaaaaaaaaa", 1, 5) == []


def test_catalog_reads_lines_stored_by_older_versions(tmp_path):
    catalog = Catalog(tmp_path / "catalog.sqlite3")
    lines = [f"line {n}" for n in range(1, 101)]
    catalog.put_document(_record("bbbbbbbbbbbb", 1.0, "h", lines), lines)
    legacy = zlib.compress("\n".join(lines).encode("utf-8"), 6)
    with catalog.connect() as db:
        db.execute("UPDATE documents SET lines = ?, indexed_at = 3.0 WHERE doc_id = 'bbbbbbbbbbbb'", (legacy,))
    assert catalog.line_range("bbbbbbbbbbbb", 99, 5) == ["line 99", "line 100"]
    assert catalog.lines("bbbbbbbbbbbb") == lines
    assert catalog.document_text("bbbbbbbbbbbb").line(50) == "line 50"


def test_the_composed_text_composes_only_the_lines_that_need_it_and_keeps_their_numbers():
    import unicodedata

    from linkly_ls.core.store.line_cache import DocumentText

    text = "a\nCafe\u0301 x\nb\u0301 stays\nz\n\u1100\u1161\u11a8\nend"
    document = DocumentText(text, (1.0, "h"))
    composed = document.composed()
    assert composed.text == unicodedata.normalize("NFC", text) and composed.line_count == document.line_count
    assert document.composed() is composed, "kept with the text"
    plain = DocumentText("a\nb\u0301 combining mark that composes with nothing\nRésumé", (1.0, "h"))
    assert plain.composed() is plain
