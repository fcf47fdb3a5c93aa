"""Distil a static embedding table from the bundled MiniLM model, with the model itself.

The method of model2vec (Minish Lab), without its torch dependency: every
vocabulary token is run through the transformer alone, as `[CLS] token [SEP]`,
and mean-pooled the way the model pools a passage; the token vectors are
reduced by PCA (centred, not whitened) to `dims` dimensions, then weighted by
smooth inverse frequency (SIF: a / (a + p(token))), where p follows Zipf's law
over the vocabulary's order (WordPiece vocabularies list words by frequency
after their character block). A passage's static vector is then the mean of
its tokens' rows (`static.py`): no transformer at all, tens of microseconds a
passage.

The table depends only on the model file and the parameters below, so it is
built once on the machine (about a minute of CPU for 30,522 tokens) and kept in
`<data_dir>/models/bundled-minilm/`; nothing is downloaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: dimensions kept by the PCA; 256 is model2vec's default
STATIC_DIMS = 256
#: SIF coefficient `a`: the smaller, the more frequent tokens are damped
SIF_COEFFICIENT = 1e-4
#: token sequences per model call while distilling (each is three tokens long)
DISTILL_BATCH = 1024
#: bump when the method changes, so an older table is rebuilt
TABLE_VERSION = 1


def table_name(dims: int = STATIC_DIMS) -> str:
    return f"static-v{TABLE_VERSION}-{dims}.npy"


def token_vectors(folder: Path, threads: int | None = None, only: list[int] | None = None) -> np.ndarray:
    """One float32 vector per vocabulary id: the model's pooled output for `[CLS] id [SEP]`.

    Special and `[unused…]` tokens get zero rows: they never carry meaning in a passage.
    `only`: compute just these ids (the other rows stay zero).
    """
    import numpy as np
    import onnxruntime as ort

    from linkly_ls.core.embedding.onnx import load_tokenizer, session_options

    tokenizer = load_tokenizer(folder)
    session = ort.InferenceSession(str(folder / "model.onnx"), session_options(threads), providers=["CPUExecutionProvider"])
    inputs = {node.name for node in session.get_inputs()}
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
        feed = {"input_ids": sequences}
        if "attention_mask" in inputs:
            feed["attention_mask"] = np.ones_like(sequences)
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(sequences)
        pooled = session.run(None, feed)[0].mean(axis=1)
        if table.shape[1] == 0:
            table = np.zeros((size, pooled.shape[1]), dtype=np.float32)
        table[ids] = pooled
    return table


def reduce_dimensions(table: np.ndarray, dims: int) -> np.ndarray:
    """PCA to `dims` components over the non-zero rows (zero rows stay zero)."""
    import numpy as np

    used = np.abs(table).sum(axis=1) > 0
    rows = table[used].astype(np.float64)
    mean = rows.mean(axis=0)
    centred = rows - mean
    _, _, components = np.linalg.svd(centred, full_matrices=False)
    dims = min(dims, components.shape[0])
    reduced = np.zeros((table.shape[0], dims), dtype=np.float32)
    reduced[used] = (centred @ components[:dims].T).astype(np.float32)
    return reduced


def sif_weights(size: int, coefficient: float = SIF_COEFFICIENT) -> np.ndarray:
    """a / (a + p) with p(id) by Zipf's law over the vocabulary order."""
    import numpy as np

    inverse_rank = 1.0 / np.arange(2, size + 2, dtype=np.float64)
    probability = inverse_rank / inverse_rank.sum()
    return (coefficient / (coefficient + probability)).astype(np.float32)


def build_table(folder: Path, dims: int = STATIC_DIMS, threads: int | None = None) -> np.ndarray:
    """The static table (float16, vocabulary x dims) of the model in `folder`."""
    import numpy as np

    table = reduce_dimensions(token_vectors(folder, threads), dims)
    table *= sif_weights(table.shape[0])[:, None]
    return table.astype(np.float16)


def load_or_build_table(folder: Path, dims: int = STATIC_DIMS, threads: int | None = None) -> np.ndarray:
    """The table kept in `folder`, built there first when missing (written atomically)."""
    import numpy as np

    path = folder / table_name(dims)
    if path.is_file():
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError):  # a truncated file from a crash: build it again
            pass
    table = build_table(folder, dims, threads)
    temporary = path.with_suffix(".tmp.npy")
    np.save(temporary, table, allow_pickle=False)
    temporary.replace(path)
    return table
