"""The embedder: the bundled model loads offline; configured hub models never block search."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.embedding import (
    BUNDLED,
    BUNDLED_MODEL_ID,
    DISABLED,
    EmbeddingProvider,
    EmbeddingSettings,
    assemble_bundled_folder,
)


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setenv("HF_HUB_ENABLE_HF_TRANSFER", "0")
        provider = EmbeddingProvider(EmbeddingSettings(), tmp_path_factory.mktemp("models"))
        embedder = provider.current()
    assert embedder is not None, provider.status().reason
    return embedder


def test_bundled_model_loads_offline_and_gives_normalised_384_dim_vectors(bundled):
    assert bundled.model_id == BUNDLED_MODEL_ID and bundled.dim == 384
    vectors = bundled.embed_passages(["The cat sat on the mat.", "Stock markets fell sharply on Monday."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    query = bundled.embed_query("a kitten resting on a rug")
    assert query.shape == (384,)


def test_similar_meanings_are_closer_than_unrelated_text(bundled):
    passages = bundled.embed_passages(
        [
            "To bake bread, mix flour, water, yeast and salt, let the dough rise, then put it in a hot oven.",
            "The compiler rejects a program that uses a value after it was moved to another variable.",
            "Heavy rain and strong winds are expected across the coast tomorrow.",
        ]
    )
    query = bundled.embed_query("how do I make a loaf at home")
    scores = passages @ query
    assert scores.argmax() == 0
    assert scores[0] > 0.4 and scores[0] - max(scores[1], scores[2]) > 0.2


def test_long_passages_are_truncated_not_rejected(bundled):
    vector = bundled.embed_passages(["word " * 5000])
    assert vector.shape == (1, 384) and np.isfinite(vector).all()


def test_bundled_folder_is_assembled_from_package_files(tmp_path):
    folder = assemble_bundled_folder(tmp_path / "bundled")
    assert folder is not None
    names = {path.name for path in folder.iterdir()}
    assert {"model.onnx", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"} <= names
    assert (folder / "model.onnx").stat().st_size == 22_928_619
    assert assemble_bundled_folder(tmp_path / "bundled") == folder  # idempotent


def test_settings_from_the_config_section():
    assert EmbeddingSettings.from_section({}).model == BUNDLED
    assert EmbeddingSettings.from_section({"model": "none"}).model == DISABLED
    assert EmbeddingSettings.from_section({"model": "BAAI/bge-small-en-v1.5", "batch_size": 8}).batch_size == 8


def test_disabled_model_gives_no_embedder_and_says_why(tmp_path: Path):
    provider = EmbeddingProvider(EmbeddingSettings(model=DISABLED), tmp_path)
    assert provider.current() is None
    status = provider.status()
    assert not status.ready and "disabled" in status.reason


def test_a_hub_model_that_cannot_be_fetched_falls_back_to_the_bundled_one(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network here: the download must fail, not hang
    provider = EmbeddingProvider(EmbeddingSettings(model="BAAI/bge-small-en-v1.5"), tmp_path)
    embedder = provider.current()
    assert embedder is not None and embedder.model_id == BUNDLED_MODEL_ID
    provider.wait_for_download(timeout=60)
    assert not provider.downloading()
    status = provider.status()
    assert status.ready and status.model == BUNDLED_MODEL_ID
    assert "BAAI/bge-small-en-v1.5" in status.reason and "bundled" in status.reason
