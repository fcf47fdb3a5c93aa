"""The first-pass embedder: a passage is the mean of its tokens' rows in a table distilled from MiniLM.

`distill.py` builds the table from the bundled model. Embedding a passage is a
WordPiece tokenization and a mean over at most `max_tokens` rows: tens of
microseconds, a thousand times cheaper than the transformer, so every chunk of
a library has a vector within seconds of keyword indexing, and the bundled
model refines them in the background. The vectors live in a vector index of
their own (model `STATIC_MODEL_ID`); ranking uses a chunk's refined vector
when it has one and its first-pass vector otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

#: first-pass vectors are stored under this model id (the table's dimensions are appended)
STATIC_MODEL_PREFIX = "linkly/all-MiniLM-L6-v2-static"
#: tokens of a passage averaged; static vectors do not need the transformer's 256-token cut
STATIC_MAX_TOKENS = 512


def static_model_id(dims: int) -> str:
    return f"{STATIC_MODEL_PREFIX}-{dims}"


class StaticEmbedder:
    """Mean of token rows, L2-normalised. Thread-safe (the tokenizer and the table are read-only)."""

    def __init__(self, table: np.ndarray, tokenizer, max_tokens: int = STATIC_MAX_TOKENS) -> None:
        import numpy as np

        self._table = np.asarray(table, dtype=np.float32)
        self.dim = int(self._table.shape[1])
        self.model_id = static_model_id(self.dim)
        self._tokenizer = tokenizer
        self._tokenizer.enable_truncation(max_length=max_tokens)

    @classmethod
    def from_folder(cls, folder: Path, threads: int | None = None) -> StaticEmbedder:
        """The embedder of the bundled model's folder; distils the table there on first use."""
        from linkly_ls.core.embedding.distill import load_or_build_table
        from linkly_ls.core.embedding.onnx import load_tokenizer

        return cls(load_or_build_table(folder, threads=threads), load_tokenizer(folder))

    def embed_passages(self, texts: Sequence[str], batch_size: int = 0) -> np.ndarray:
        """Vectors of `texts`, in their order (`batch_size` is accepted for the embedder protocol)."""
        import numpy as np

        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return vectors
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for row, encoding in enumerate(encodings):
            if encoding.ids:  # a row per passage: one `add.reduceat` over the batch's rows was 25 times slower
                vectors[row] = self._table[np.asarray(encoding.ids, dtype=np.int64)].mean(axis=0)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.clip(norms, 1e-12, None)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_passages([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_passages(texts)
