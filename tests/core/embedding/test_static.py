"""The first-pass embedder: token rows built from the bundled model, averaged per passage."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.embedding.distill import context_sums, contextual_table, save_table, sif_weights, token_vectors
from linkly_ls.core.embedding.onnx import load_tokenizer
from linkly_ls.core.embedding.provider import assemble_bundled_folder, load_bundled
from linkly_ls.core.embedding.settings import packaged_model_file
from linkly_ls.core.embedding.static import (
    SOURCE_MODEL_ID,
    STATIC_MODEL_ID,
    TABLE_FILE,
    TABLE_SHA256,
    StaticEmbedder,
    joint_query_vector,
    package_tokenizer,
)

PASSAGES = [
    "The river flooded the valley after a week of heavy rain, and the old stone bridge was washed away.",
    "Interest rates rose again, and shares on the stock exchange fell for the third day running.",
    "The compiler reports a type error when a function returns a string where a number is expected.",
    "Bees carry pollen from flower to flower, and many crops depend on them for their fruit.",
]
#: a paraphrase of each passage, in the same order
PARAPHRASES = [
    "storm water overflowing a stream and destroying a crossing",
    "markets dropping as the central bank made borrowing dearer",
    "a program fails to build because a value has the wrong type",
    "insects pollinating plants that farmers grow",
]


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


def test_context_sums_are_the_output_states_mean_pooling_averages(folder):
    """Summed over a passage's own tokens, the states give the model's vector of that passage."""
    tokenizer = load_tokenizer(folder)
    model = load_bundled(folder.parent, threads=1)
    sums, counts = context_sums(folder, PASSAGES[:1], threads=1)
    ids = tokenizer.encode(PASSAGES[0]).ids
    assert counts.sum() == len(ids) and counts[tokenizer.token_to_id("[CLS]")] == 1
    pooled = sums.sum(axis=0)
    assert float(pooled @ model.embed_query(PASSAGES[0]) / np.linalg.norm(pooled)) > 0.999
    twice, twice_counts = context_sums(folder, [PASSAGES[0], "the river"], threads=1)
    river = tokenizer.token_to_id("river")
    assert twice_counts[river] == 2 and not np.allclose(twice[river], 2 * sums[river]), "a token's state depends on its context"


def test_the_contextual_table_leans_on_the_tokens_own_row_when_contexts_are_few():
    context_free = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    sums = np.array([[5.0, 5.0], [0.0, 0.0], [0.0, 30.0], [20.0, 0.0]])
    counts = np.array([5, 0, 10, 2])
    table = contextual_table(context_free, sums, counts, prior=2.0)
    weights = sif_weights(counts)
    assert not table[0].any(), "a special token (no row of its own) stays zero"
    assert np.allclose(table[1], context_free[1] * weights[1]), "a token never seen keeps its own row"
    assert np.allclose(table[2], np.array([0.0, 32.0 / 12]) * weights[2])
    assert np.allclose(table[3], np.array([22.0 / 4, 2.0 / 4]) * weights[3])


def test_sif_weights_damp_the_frequent_tokens():
    weights = sif_weights(np.array([0, 10, 1000, 100000]))
    assert weights[3] < weights[2] < weights[1] < weights[0] <= 1.0


def test_a_saved_table_gives_the_vectors_of_the_float_table(tmp_path):
    tokenizer = package_tokenizer()
    table = np.random.default_rng(2).normal(size=(tokenizer.get_vocab_size(), 16)).astype(np.float32)
    save_table(tmp_path / "table.npz", table, {"corpora": ["test"]})
    with np.load(tmp_path / "table.npz") as saved:
        assert saved["rows"].dtype == np.int8
        embedder = StaticEmbedder(saved["rows"], saved["scales"], package_tokenizer())
    exact = StaticEmbedder(table, np.ones(len(table), dtype=np.float32), package_tokenizer())
    assert embedder.dim == 16 and embedder.model_id == STATIC_MODEL_ID
    assert np.all(np.sum(embedder.embed_passages(PASSAGES) * exact.embed_passages(PASSAGES), axis=1) > 0.999)


def test_a_passage_is_the_normalised_mean_of_its_token_rows():
    tokenizer = package_tokenizer()
    rows = np.random.default_rng(2).normal(size=(tokenizer.get_vocab_size(), 8)).astype(np.float16)
    scales = np.random.default_rng(3).uniform(0.5, 2.0, size=len(rows)).astype(np.float32)
    embedder = StaticEmbedder(rows, scales, package_tokenizer())
    vectors = embedder.embed_passages(["Rivers and bridges", "", "bridges"])
    ids = tokenizer.encode("Rivers and bridges", add_special_tokens=False).ids
    expected = (rows[ids].astype(np.float32) * scales[ids, None]).mean(axis=0)
    assert np.allclose(vectors[0], expected / np.linalg.norm(expected), atol=1e-5)
    assert not vectors[1].any(), "an empty passage has no direction"
    assert np.allclose(vectors[2], embedder.embed_query("bridges"))
    assert np.isclose(np.linalg.norm(vectors[2]), 1.0)


def test_a_joint_query_vector_weighs_both_readings_alike_whatever_their_lengths():
    static, model = np.array([3.0, 0.0, 0.0], dtype=np.float32), np.array([0.0, 0.5, 0.0], dtype=np.float32)
    joint = joint_query_vector(static, model)
    assert joint.dtype == np.float32 and np.isclose(np.linalg.norm(joint), 1.0)
    assert np.allclose(joint, [2**-0.5, 2**-0.5, 0.0])
    assert np.allclose(joint_query_vector(static, static * 7), [1.0, 0.0, 0.0])


def test_a_table_that_does_not_fit_the_vocabulary_is_refused():
    with pytest.raises(ValueError, match="rows"):
        StaticEmbedder(np.zeros((10, 4), dtype=np.int8), np.ones(10, dtype=np.float32), package_tokenizer())


def test_the_shipped_table_is_the_one_its_model_id_names():
    """A rebuilt table must come with a new STATIC_MODEL_ID: stored first-pass vectors of the old one
    would otherwise be compared with queries embedded by the new one."""
    embedder = StaticEmbedder.from_package()
    assert embedder.table_sha256() == TABLE_SHA256, "a new table: set TABLE_SHA256 and a new STATIC_MODEL_ID"
    with zipfile.ZipFile(packaged_model_file(TABLE_FILE).open("rb")) as stored:
        assert {member.compress_type for member in stored.infolist()} == {zipfile.ZIP_STORED}, "read without inflating"
    assert embedder.dim == 384 and len(embedder.embed_query("a first-pass vector").nonzero()[0]) > 300


def test_the_shipped_table_needs_no_model_and_stands_in_for_it(folder):
    embedder = StaticEmbedder.from_package()
    about = StaticEmbedder.about()
    assert embedder.dim == 384 and about["passages"] > 10_000 and about["corpora"]
    model = load_bundled(folder.parent, threads=1)
    assert model.model_id == SOURCE_MODEL_ID, "the table was distilled from the bundled model"
    static, full = embedder.embed_passages(PASSAGES), model.embed_passages(PASSAGES)
    agreement = np.sum(static * full, axis=1)
    assert agreement.min() > 0.5, f"cosine to the model's own vectors: {agreement}"
    similarity = embedder.embed_queries(PARAPHRASES) @ static.T
    assert list(similarity.argmax(axis=1)) == [0, 1, 2, 3], "each paraphrase is nearest its own passage"
