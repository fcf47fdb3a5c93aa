"""Build the first-pass table from the bundled MiniLM model and real text (offline, `bench/static_table.py`).

MiniLM's vector of a passage is the mean of the model's output states of its
tokens. A static table can only give each token one row, so the row that best
stands in for a token's output state is its average over many real contexts:
its *contextual mean*. A passage's first-pass vector is then the mean of its
tokens' rows (`static.py`), an estimate of the mean the model would take.

A token seen in few contexts has a noisy mean, and many tokens are never seen:
both lean on the model's output for the token alone, `[CLS] token [SEP]` pooled
as a passage is (the model2vec method; a stand-in for the token's own state),
which counts as `PRIOR_CONTEXTS` contexts of its own.
Rows are weighted by smooth inverse frequency, a / (a + p(token)) (Arora et
al., 2017), p measured on the same text, so that the words every passage has
do not pull all vectors together.

The result ships with linkly (`linkly_ls/models/minilm/static-table.npz`,
8-bit rows with a scale each): no model runs and nothing is built on a user's
machine before the first pass can start.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: SIF coefficient `a`: the smaller, the more frequent tokens are damped
SIF_COEFFICIENT = 1e-4
#: how many contexts the token's own row counts as when its contextual mean is taken
PRIOR_CONTEXTS = 5.0
#: token sequences per model call while running tokens alone (each is three tokens long)
DISTILL_BATCH = 1024
#: passages per model call while collecting contextual states
CONTEXT_BATCH = 16


def _session(folder: Path, threads: int | None):
    import onnxruntime as ort

    from linkly_ls.core.embedding.onnx import session_options

    session = ort.InferenceSession(str(folder / "model.onnx"), session_options(threads), providers=["CPUExecutionProvider"])
    return session, {node.name for node in session.get_inputs()}


def _feed(ids: np.ndarray, mask: np.ndarray, inputs: set[str]) -> dict[str, np.ndarray]:
    import numpy as np

    feed = {"input_ids": ids}
    if "attention_mask" in inputs:
        feed["attention_mask"] = mask
    if "token_type_ids" in inputs:
        feed["token_type_ids"] = np.zeros_like(ids)
    return feed


def token_vectors(folder: Path, threads: int | None = None, only: list[int] | None = None) -> np.ndarray:
    """One float32 vector per vocabulary id: the model's pooled output for `[CLS] id [SEP]`.

    Special and `[unused…]` tokens get zero rows: they never carry meaning in a passage.
    `only`: compute just these ids (the other rows stay zero).
    """
    import numpy as np

    from linkly_ls.core.embedding.onnx import load_tokenizer

    tokenizer = load_tokenizer(folder)
    session, inputs = _session(folder, threads)
    vocabulary = tokenizer.get_vocab()
    size = max(vocabulary.values()) + 1
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    skipped = {index for token, index in vocabulary.items() if token.startswith("[") and token.endswith("]")}
    candidates = range(size) if only is None else only
    wanted = np.asarray([index for index in candidates if index not in skipped], dtype=np.int64)
    table = np.zeros((size, 0), dtype=np.float32)
    for start in range(0, len(wanted), DISTILL_BATCH):
        ids = wanted[start : start + DISTILL_BATCH]
        sequences = np.stack([np.full(len(ids), cls), ids, np.full(len(ids), sep)], axis=1).astype(np.int64)
        pooled = session.run(None, _feed(sequences, np.ones_like(sequences), inputs))[0].mean(axis=1)
        if table.shape[1] == 0:
            table = np.zeros((size, pooled.shape[1]), dtype=np.float32)
        table[ids] = pooled
    return table


def context_sums(folder: Path, passages: Sequence[str], threads: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(sum of the model's output states of each vocabulary id over `passages`, how many times each occurs).

    The passages are read as the model reads them for their vectors (the tokenizer's
    truncation included), so the states are the ones mean pooling averages.
    """
    import numpy as np

    from linkly_ls.core.embedding.onnx import load_tokenizer

    tokenizer = load_tokenizer(folder)
    session, inputs = _session(folder, threads)
    encodings = [encoding.ids for encoding in tokenizer.encode_batch(list(passages))]
    size = tokenizer.get_vocab_size()
    sums: np.ndarray | None = None
    counts = np.zeros(size, dtype=np.int64)
    order = sorted(range(len(encodings)), key=lambda index: len(encodings[index]))
    for start in range(0, len(order), CONTEXT_BATCH):
        batch = [encodings[index] for index in order[start : start + CONTEXT_BATCH]]
        width = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        states = session.run(None, _feed(ids, mask, inputs))[0]
        if sums is None:
            sums = np.zeros((size, states.shape[2]), dtype=np.float64)
        kept = mask.astype(bool)
        np.add.at(sums, ids[kept], states[kept])
        np.add.at(counts, ids[kept], 1)
    if sums is None:
        raise ValueError("no passages to read contexts from")
    return sums, counts


def sif_weights(counts: np.ndarray, coefficient: float = SIF_COEFFICIENT) -> np.ndarray:
    """a / (a + p), p(id) the id's share of the tokens counted (add-one smoothed)."""
    import numpy as np

    probability = (counts.astype(np.float64) + 1.0) / (counts.sum() + len(counts))
    return (coefficient / (coefficient + probability)).astype(np.float32)


def contextual_table(
    context_free: np.ndarray, sums: np.ndarray, counts: np.ndarray, prior: float = PRIOR_CONTEXTS
) -> np.ndarray:
    """Each id's contextual mean, its own row counted as `prior` contexts, weighted by SIF (float32).

    Special tokens keep zero rows (their context-free row is zero and the tokenizer's
    passages for the first pass carry none)."""
    import numpy as np

    seen = counts.astype(np.float64)[:, None]
    means = (sums + prior * context_free) / (seen + prior)
    special = ~np.abs(context_free).any(axis=1)
    means[special] = 0.0
    return (means * sif_weights(counts)[:, None]).astype(np.float32)


def save_table(path: Path, table: np.ndarray, about: dict) -> None:
    """The table as 8-bit rows with a float32 scale each (a row's largest magnitude maps to 127), uncompressed
    (`static.TABLE_SHA256`)."""
    import numpy as np

    scales = np.abs(table).max(axis=1) / 127.0
    scales[scales == 0] = 1.0
    rows = np.round(table / scales[:, None]).astype(np.int8)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as handle:
        np.savez(handle, rows=rows, scales=scales.astype(np.float32), about=np.array(json.dumps(about)))
    temporary.replace(path)
