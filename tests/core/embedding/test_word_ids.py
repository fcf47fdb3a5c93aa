"""Word-cached WordPiece ids: exactly the tokenizer's, for any text."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkly_ls.core.embedding.static import package_tokenizer
from linkly_ls.core.embedding.word_ids import CACHED_WORD_CHARS, WordIds

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"

ODD_TEXTS = [
    "",
    "   \n\t ",
    "the\x0ccat sat\x0bon the\x1cmat\x1d\x1e\x1fnow\x85then",  # deleted by the normaliser, split by Python
    "naïve café, Ünïcödé résumé e\u0301t\u00e9",  # accents folded within a word
    "中文分词测试，好的 mixed中文words",  # each Chinese character its own word
    "x" * 150 + " short",  # longer than WordPiece's 100 characters: one [UNK]
    "\u200b\u200bword zero\u200bwidth \x00nul",  # format and control characters deleted within words
    "ﬁne ﬂow — “quoted” (parenthesised) e-mail@example.org 3.14159 don't",
    "line one\u2028line two\u2029para\u00a0nbsp\u3000ideographic",
]


def fixture_texts() -> list[str]:
    texts = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in {".md", ".txt", ".html"} and path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            texts.extend(text[start : start + 900] for start in range(0, len(text), 900))
    return texts


def tokenizer():
    loaded = package_tokenizer()
    loaded.no_truncation()
    return loaded


def reference(texts: list[str], max_tokens: int) -> list[list[int]]:
    return [encoding.ids[:max_tokens] for encoding in tokenizer().encode_batch(texts, add_special_tokens=False)]


@pytest.mark.parametrize("max_tokens", [512, 7])
def test_word_cached_ids_are_the_tokenizers_on_real_and_odd_text(max_tokens):
    texts = fixture_texts() + ODD_TEXTS
    assert len(texts) > 100
    word_ids = WordIds(tokenizer())
    expected = reference(texts, max_tokens)
    assert [ids.tolist() for ids in word_ids.ids(texts, max_tokens)] == expected
    assert [ids.tolist() for ids in word_ids.ids(texts, max_tokens)] == expected, "again, every word now from the cache"


def test_a_full_cache_starts_again_without_losing_a_word_and_long_words_are_not_kept():
    texts = fixture_texts() + ODD_TEXTS
    word_ids = WordIds(tokenizer(), cache_ids=800)
    for start in range(0, len(texts), 16):
        batch = texts[start : start + 16]
        assert [ids.tolist() for ids in word_ids.ids(batch, 512)] == reference(batch, 512)
        batch_ids = sum(len(ids) for ids in reference(batch, 100_000))
        assert word_ids._cached_ids <= max(800, batch_ids)
        assert word_ids._cached_ids == sum(len(ids) for ids in word_ids._cache.values()) // 2
    assert word_ids._cache and all(len(word) <= CACHED_WORD_CHARS for word in word_ids._cache)
    word_ids.forget()
    assert not word_ids._cache and word_ids._cached_ids == 0
