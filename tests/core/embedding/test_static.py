"""The first-pass embedder: token rows distilled from the bundled model, averaged per passage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.embedding.distill import reduce_dimensions, sif_weights, token_vectors
from linkly_ls.core.embedding.onnx import load_tokenizer
from linkly_ls.core.embedding.provider import assemble_bundled_folder, load_bundled
from linkly_ls.core.embedding.static import StaticEmbedder, static_model_id


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    folder = assemble_bundled_folder(tmp_path_factory.mktemp("models") / "bundled-minilm")
    if folder is None:
        pytest.skip("the bundled model package is not installed")
    return folder


def test_a_token_row_is_what_the_model_gives_that_token_as_a_passage(folder):
    tokenizer = load_tokenizer(folder)
    ids = [tokenizer.token_to_id(word) for word in ("river", "bridge", "[CLS]")]
    table = token_vectors(folder, threads=1, only=ids)
    model = load_bundled(folder.parent, threads=1)
    assert not table[ids[2]].any(), "special tokens get no row"
    for word, token in zip(("river", "bridge"), ids[:2]):
        row = table[token] / np.linalg.norm(table[token])
        assert float(row @ model.embed_query(word)) > 0.999
    assert not np.delete(table, ids, axis=0).any()


def test_pca_keeps_zero_rows_and_the_requested_dimensions():
    rows = np.random.default_rng(1).normal(size=(50, 12)).astype(np.float32)
    rows[[3, 7]] = 0
    reduced = reduce_dimensions(rows, 4)
    assert reduced.shape == (50, 4)
    assert not reduced[[3, 7]].any() and np.abs(reduced).sum(axis=1)[0] > 0
    assert np.allclose(reduced[np.abs(reduced).sum(axis=1) > 0].mean(axis=0), 0, atol=1e-4)


def test_sif_weights_damp_the_frequent_first_tokens():
    weights = sif_weights(1000)
    assert weights[0] < weights[10] < weights[999] <= 1.0


def test_a_passage_is_the_normalised_mean_of_its_token_rows(folder):
    tokenizer = load_tokenizer(folder)
    table = np.random.default_rng(2).normal(size=(tokenizer.get_vocab_size(), 8)).astype(np.float16)
    embedder = StaticEmbedder(table, load_tokenizer(folder))
    assert embedder.dim == 8 and embedder.model_id == static_model_id(8)
    vectors = embedder.embed_passages(["Rivers and bridges", "", "bridges"])
    ids = tokenizer.encode("Rivers and bridges", add_special_tokens=False).ids
    expected = table[ids].astype(np.float32).mean(axis=0)
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-5)
    assert not vectors[1].any(), "an empty passage has no direction"
    assert np.allclose(vectors[2], embedder.embed_query("bridges"))
    assert np.isclose(np.linalg.norm(vectors[2]), 1.0)
