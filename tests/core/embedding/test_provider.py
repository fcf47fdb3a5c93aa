"""The embedder: the bundled model loads offline; configured hub models never block search."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from linkly_ls.core.config import ConfigError
from linkly_ls.core.embedding.provider import EmbeddingProvider, assemble_bundled_folder, bundled_model_file
from linkly_ls.core.embedding.settings import BUNDLED, BUNDLED_DIM, BUNDLED_MODEL_ID, DISABLED, EmbeddingSettings
from linkly_ls.core.embedding.onnx import DEFAULT_BATCH_TOKENS, OnnxEmbedder, session_options, token_batches


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
    assert (folder / "model.source.json").is_file() and not (folder / "model.onnx").is_symlink()
    made = (folder / "model.onnx").stat().st_mtime_ns
    assert assemble_bundled_folder(tmp_path / "bundled") == folder  # idempotent: not made again
    assert (folder / "model.onnx").stat().st_mtime_ns == made


def test_the_package_graph_is_linked_when_it_cannot_be_rewritten(tmp_path, monkeypatch, caplog):
    """A graph the rewrite does not know (another package version) runs as the package ships it."""
    import onnx
    from onnx import TensorProto, helper

    from linkly_ls.core.embedding import provider

    weights = helper.make_tensor("w", TensorProto.FLOAT, [2, 2], [1.0, 0.0, 0.0, 1.0])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "float-only",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])], [weights],
    )
    unknown = tmp_path / "float-only.onnx"
    onnx.save(helper.make_model(graph), str(unknown))
    monkeypatch.setattr(provider, "bundled_model_file", lambda: unknown)
    folder = assemble_bundled_folder(tmp_path / "bundled")
    model = folder / "model.onnx"
    assert model.is_symlink() and model.resolve() == unknown.resolve()
    assert "runs its float graph (the model has no int8 weight products to rewrite)" in caplog.text
    assert not list(folder.glob("*.tmp"))


def test_settings_from_the_config_section():
    assert EmbeddingSettings.from_section({}).model == BUNDLED
    assert EmbeddingSettings.from_section({"model": "none"}).model == DISABLED
    assert EmbeddingSettings.from_section({"model": "BAAI/bge-small-en-v1.5", "batch_size": 8}).batch_size == 8
    with pytest.raises(ConfigError, match=r"\[embedding\]: unknown key\(s\) modle \(did you mean model\?\)"):
        EmbeddingSettings.from_section({"modle": "none"})


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


def test_bundled_vectors_equal_fastembeds_for_the_same_model(tmp_path):
    """The direct onnxruntime path must give fastembed's vectors (pooling, truncation, normalisation).

    Both run the package's float graph: fastembed optimises graphs and the optimised integer
    rewrite sums in another order (vectors 0.008 apart at most), which is not what this compares.
    """
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    folder = assemble_bundled_folder(tmp_path / "bundled")
    (folder / "model.onnx").unlink()
    (folder / "model.onnx").symlink_to(bundled_model_file())
    bundled = OnnxEmbedder("m", folder, BUNDLED_DIM)
    model_id = "test/bundled-through-fastembed"
    TextEmbedding.add_custom_model(
        model=model_id, pooling=PoolingType.MEAN, normalization=True,
        sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"), dim=BUNDLED_DIM, model_file="model.onnx",
    )
    reference = TextEmbedding(model_name=model_id, specific_model_path=str(folder), local_files_only=True, threads=1)
    texts = ["a", "Short note.", "word " * 40, "A much longer passage about rivers and bridges. " * 60, "Tabs\tand\nlines"]
    expected = np.asarray(list(reference.passage_embed(texts, batch_size=2)), dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.abs(bundled.embed_passages(texts) - expected).max() < 1e-4
    query = np.asarray(list(reference.query_embed(["rivers and bridges"])), dtype=np.float32)[0]
    assert np.abs(bundled.embed_query("rivers and bridges") - query / np.linalg.norm(query)).max() < 1e-4


@pytest.mark.slow
def test_vectors_do_not_depend_on_how_passages_are_batched(bundled):
    texts = [f"Passage {n}: " + "tokens " * (n * 7 % 90) for n in range(30)]
    together = bundled.embed_passages(texts)
    one_by_one = np.vstack([bundled.embed_passages([text]) for text in texts])
    assert np.abs(together - one_by_one).max() < 1e-4


def test_token_batches_stay_within_the_budget_and_cover_every_passage():
    lengths = [5, 300, 40, 40, 12, 128, 7, 256, 3, 90]
    batches = list(token_batches(lengths, batch_tokens=256, max_passages=3))
    assert sorted(i for batch in batches for i in batch) == list(range(len(lengths)))
    for batch in batches:
        width = max(lengths[i] for i in batch)
        assert len(batch) <= 3 and (len(batch) * width <= 256 or len(batch) == 1)
        assert [lengths[i] for i in batch] == sorted(lengths[i] for i in batch)


def test_memory_and_thread_settings_reach_the_onnx_session(tmp_path):
    import onnxruntime as ort

    provider = EmbeddingProvider(EmbeddingSettings(threads=1, batch_tokens=512), tmp_path)
    embedder = provider.current()
    assert embedder is not None and embedder.batch_tokens == 512
    options = embedder.options
    assert options.intra_op_num_threads == 1
    assert options.graph_optimization_level == ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert not options.enable_mem_pattern
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert session_options(None).intra_op_num_threads == (os.cpu_count() or 1)


def test_batch_tokens_and_threads_from_the_config_section():
    settings = EmbeddingSettings.from_section({"batch_tokens": 2048, "threads": 2})
    assert settings.batch_tokens == 2048 and settings.threads == 2
    assert EmbeddingSettings.from_section({}).batch_tokens == DEFAULT_BATCH_TOKENS
    with pytest.raises(ConfigError):
        EmbeddingSettings.from_section({"batch_tokens": "lots"})
    for wrong in ({"model": 5}, {"threads": -3}, {"batch_size": 0}, {"threads": True}):
        with pytest.raises(ConfigError, match=r"\[embedding\] (model|threads|batch_size)"):
            EmbeddingSettings.from_section(wrong)


def test_at_a_first_start_queries_are_read_at_once_and_passages_wait_for_the_rewrite(
    tmp_path, model_folder_ready, monkeypatch
):
    """A data dir's first start: the package's graph reads queries while the integer graph is written
    in the background; passages wait for it, so their vectors are those of a data dir that had it."""
    from linkly_ls.core.embedding import provider

    release = threading.Event()
    place = provider._place_model
    monkeypatch.setattr(provider, "_place_model", lambda *args: release.wait(60) and place(*args))
    fresh = provider.load_bundled(tmp_path, threads=1)
    ready = provider.load_bundled(model_folder_ready.parent, threads=1)
    folder = tmp_path / "bundled-minilm"
    assert fresh.graph == "interim" and ready.graph == "final"
    query = fresh.embed_query("rivers and bridges")
    assert fresh.graph == "interim" and not (folder / "model.onnx").exists()  # answered before the rewrite
    assert float(query @ ready.embed_query("rivers and bridges")) > 0.99
    release.set()
    texts = ["A passage about rivers.", "Another one, on bridges and the roads that cross them."]
    assert np.array_equal(fresh.embed_passages(texts), ready.embed_passages(texts))
    assert fresh.graph == "final" and (folder / "model.source.json").is_file() and not list(folder.glob("*.tmp"))
    assert np.array_equal(fresh.embed_query("rivers and bridges"), ready.embed_query("rivers and bridges"))
    assert provider.load_bundled(tmp_path, threads=1).graph == "final"  # written once


def test_a_rewrite_that_fails_for_now_is_tried_again_at_the_next_load(tmp_path, monkeypatch, caplog):
    """A full disk or the time limit leaves the folder as it was: the package's graph is not linked
    in the rewrite's place for good."""
    from linkly_ls.core.embedding import integer_graph, provider

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(integer_graph, "write_integer_model", full_disk)
    embedder = provider.load_bundled(tmp_path, threads=1)
    assert embedder.wait_for_final_graph(60) and embedder.graph == "interim" and "No space left" in caplog.text
    folder = tmp_path / "bundled-minilm"
    assert not (folder / "model.onnx").exists() and not list(folder.glob("*.tmp"))
    monkeypatch.undo()
    again = provider.load_bundled(tmp_path, threads=1)
    assert again.wait_for_final_graph(120) and again.graph == "final" and not (folder / "model.onnx").is_symlink()


def test_a_process_that_only_reads_queries_gets_the_rewrite_too(tmp_path):
    """The rewrite starts at load, so a searching process does not stay on the slower package graph."""
    from linkly_ls.core.embedding.provider import load_bundled

    embedder = load_bundled(tmp_path, threads=1)
    embedder.embed_query("only a query")
    deadline = time.monotonic() + 120
    while embedder.graph != "final" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert embedder.graph == "final" and (tmp_path / "bundled-minilm" / "model.source.json").is_file()


def test_a_rewrite_that_fails_leaves_the_package_graph_serving_passages_too(tmp_path, monkeypatch, caplog):
    from linkly_ls.core.background import lower_current_thread
    from linkly_ls.core.embedding import provider

    def full_disk(target, model_file):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(provider, "_place_model", full_disk)
    embedder = provider.load_bundled(tmp_path, threads=1)
    vectors = embedder.embed_passages(["Still embedded."])
    assert vectors.shape == (1, BUNDLED_DIM) and embedder.graph == "interim"
    assert "runs its float graph" in caplog.text and "No space left" in caplog.text
    result: dict = {}

    def background() -> None:  # the lowered background thread makes a session of its own
        lower_current_thread()
        result["vectors"] = embedder.embed_passages(["Embedded in the background."])

    thread = threading.Thread(target=background)
    thread.start()
    thread.join(120)
    assert result["vectors"].shape == (1, BUNDLED_DIM)


def test_half_written_rewrites_older_than_a_rewrite_may_take_are_removed(tmp_path):
    from linkly_ls.core.embedding.integer_graph import REWRITE_TIMEOUT_S
    from linkly_ls.core.embedding.provider import _remove_abandoned_rewrites

    abandoned = [tmp_path / "model.onnx.123.tmp", tmp_path / "model.source.json.123.tmp"]
    running = tmp_path / "model.onnx.456.tmp"
    package_graph = tmp_path / "package" / "model.onnx"
    package_graph.parent.mkdir()
    for path in [*abandoned, running, package_graph]:
        path.write_bytes(b"partial")
    long_ago = time.time() - REWRITE_TIMEOUT_S - 60
    for path in [*abandoned, package_graph]:
        os.utime(path, (long_ago, long_ago))
    linking = tmp_path / "model.onnx.789.tmp"  # a fresh link to the package's graph, installed long ago
    linking.symlink_to(package_graph)
    _remove_abandoned_rewrites(tmp_path)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([running.name, linking.name, "package"])


def test_loading_the_model_removes_an_abandoned_rewrite_even_where_the_rewrite_is_in_place(tmp_path, model_folder_ready):
    import shutil

    from linkly_ls.core.embedding.integer_graph import REWRITE_TIMEOUT_S
    from linkly_ls.core.embedding.provider import load_bundled

    folder = tmp_path / "bundled-minilm"
    shutil.copytree(model_folder_ready, folder)
    abandoned = folder / "model.onnx.123.tmp"
    abandoned.write_bytes(b"partial")
    long_ago = time.time() - REWRITE_TIMEOUT_S - 60
    os.utime(abandoned, (long_ago, long_ago))
    assert load_bundled(tmp_path, threads=1).graph == "final" and not abandoned.exists()


@pytest.fixture(scope="module")
def model_folder_ready(tmp_path_factory) -> Path:
    folder = assemble_bundled_folder(tmp_path_factory.mktemp("ready") / "bundled-minilm")
    assert folder is not None
    return folder


def test_a_model_name_fastembed_does_not_know_is_said_at_once_with_the_names_it_resembles(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    provider = EmbeddingProvider(EmbeddingSettings(model="bge-smal-en-v1.5"), tmp_path)
    embedder = provider.current()
    assert embedder is not None and embedder.model_id == BUNDLED_MODEL_ID
    assert not provider.downloading()  # nothing is tried against the hub for a name no model has
    status = provider.status()
    assert status.ready and status.model == BUNDLED_MODEL_ID
    assert "bge-smal-en-v1.5" in status.reason and "not a model fastembed knows" in status.reason
    assert "did you mean BAAI/bge-small-en-v1.5" in status.reason and status.reason.endswith("using the bundled model")
    assert provider.stand_in_note(embedder) == status.reason


def test_a_known_model_name_is_matched_ignoring_case_and_the_bundled_model_needs_no_note(tmp_path: Path, bundled):
    from linkly_ls.core.embedding.fastembed import unknown_model_problem

    assert unknown_model_problem("baai/BGE-small-en-v1.5") is None
    assert "did you mean sentence-transformers/all-MiniLM-L6-v2" in (unknown_model_problem("all-MiniLM-L6-v2") or "")
    assert EmbeddingProvider(EmbeddingSettings(), tmp_path).stand_in_note(bundled) is None
