"""Chunking: sections, pages and blank lines cut chunks; an embedded passage cuts a long line at sentence ends."""

from __future__ import annotations

from linkly_ls.core.document import Heading, build_outline
from linkly_ls.core.search.chunking import (
    EMBEDDING_MAX_WORDS,
    EMBEDDING_TARGET_WORDS,
    MAX_WORDS,
    chunk_document,
    count_words,
    embedding_passages,
    split_long_line,
)


def sentence(number: int, words: int = 12) -> str:
    return " ".join(f"w{number}x{index}" for index in range(words - 1)) + " end."


def test_paragraphs_are_grouped_up_to_the_target_and_cut_at_blank_lines():
    paragraph = [sentence(n) for n in range(5)]  # 60 words a paragraph, one sentence a line
    lines = paragraph + [""] + paragraph + [""] + paragraph + [""] + paragraph
    chunks = chunk_document(lines, [], [])
    assert [(chunk.start_line, chunk.end_line) for chunk in chunks] == [(1, 18), (19, 23)]
    assert all(count_words(chunk.text) <= MAX_WORDS for chunk in chunks)


def test_headings_and_pages_start_chunks():
    lines = ["Intro", "some text", "", "Usage", "more text", "page two"]
    outline = build_outline([Heading(level=1, title="Intro", line=1), Heading(level=1, title="Usage", line=4)], len(lines))
    chunks = chunk_document(lines, outline, [1, 6])
    assert [(chunk.start_line, chunk.end_line, chunk.headings) for chunk in chunks] == [
        (1, 3, "Intro"),
        (4, 5, "Usage"),
        (6, 6, "Usage"),
    ]


def test_a_long_line_is_cut_at_sentence_ends_into_chunks_on_that_line():
    article = " ".join(sentence(n) for n in range(60))  # 720 words on one line
    lines = ["THE TITLE", "", article]
    assert [(c.start_line, c.end_line) for c in chunk_document(lines, [], [])] == [(1, 2), (3, 3)]  # keyword chunks
    chunks = embedding_passages(lines, [], [])
    assert len(chunks) >= 720 // EMBEDDING_TARGET_WORDS
    assert chunks[0].start_line == 1 and chunks[0].text.startswith("THE TITLE\n")
    assert all(chunk.end_line == 3 for chunk in chunks)
    assert all(chunk.start_line == 3 for chunk in chunks[1:])
    assert all(count_words(chunk.text) <= EMBEDDING_MAX_WORDS for chunk in chunks)
    assert all(chunk.text.endswith("end.") for chunk in chunks)  # never in the middle of a sentence
    words = " ".join(chunk.text for chunk in chunks).split()
    assert words == ["THE", "TITLE"] + article.split()
    assert [chunk.number for chunk in chunks] == list(range(len(chunks)))


def test_a_long_line_without_punctuation_is_cut_between_words():
    line = " ".join(f"word{index}" for index in range(1000))
    pieces = split_long_line(line)
    assert all(count_words(piece) <= MAX_WORDS for piece in pieces)
    assert " ".join(pieces).split() == line.split()
    assert len(pieces) == 7


def test_a_short_tail_joins_the_piece_before_it():
    line = " ".join(sentence(n, 25) for n in range(6)) + " short tail."  # 150 words, then 2
    pieces = split_long_line(line + " " + line)
    assert all(count_words(piece) <= MAX_WORDS for piece in pieces)
    assert pieces[-1].endswith("short tail.") and count_words(pieces[-1]) > 2


def test_chinese_sentences_count_and_cut():
    line = "。".join("这是一个很长的中文句子用来测试" * 3 for _ in range(40)) + "。"
    assert count_words(line) > MAX_WORDS
    pieces = split_long_line(line)
    assert len(pieces) > 1 and "".join(pieces) == line
    assert all(piece.endswith("。") for piece in pieces)


def test_embedded_passages_are_smaller_than_keyword_chunks():
    """An abstract of 180 words is one keyword chunk and two embedded passages of the model's training length."""
    abstract = " ".join(sentence(n, 15) for n in range(12))  # 180 words on one line
    lines = ["A TITLE", "", abstract]
    assert len(chunk_document(lines, [], [])) == 1
    passages = embedding_passages(lines, [], [])
    assert len(passages) == 2
    assert all(count_words(passage.text) <= EMBEDDING_MAX_WORDS for passage in passages)
    assert " ".join(passage.text for passage in passages).split() == ["A", "TITLE"] + abstract.split()
    paragraphs = [sentence(n, 30) for n in range(6)]  # 180 words in six lines: cut before the maximum
    grouped = embedding_passages(["A TITLE", ""] + paragraphs, [], [])
    assert len(grouped) == 2 and all(count_words(passage.text) <= EMBEDDING_MAX_WORDS for passage in grouped)


def test_sentence_ends_are_where_punctuation_closing_quotes_and_space_end():
    """The pattern matches the punctuation itself (faster than a look-behind at every character); the cuts
    are the look-behind definition's: after `.!?;`, closing quotes and brackets, and the space after them,
    or right after CJK punctuation."""
    import re

    from linkly_ls.core.search.chunking import _SENTENCE_END, _spans

    look_behind = re.compile(r"(?<=[.!?;])[\"')\]]*\s+|(?<=[。！？；])")
    texts = [
        'He said "stop." Then left.  Twice!   Why? Because; ok',
        "a. . b?; c (see [1].) d.) e.\"' f",
        "好。 好的！好吗？是；不 end. 中文。",
        "3.14 is pi; e.g. this, i.e. that...  done",
        ".leading! ? ;",
        "no punctuation here at all",
        "",
    ]
    for text in texts:
        assert [m.end() for m in _SENTENCE_END.finditer(text)] == sorted({m.end() for m in look_behind.finditer(text)} - {0}), text
        assert "".join(_spans(text, _SENTENCE_END)) == text
