"""The first-pass embedder: a passage is the mean of its tokens' rows in a table built from MiniLM.

`distill.py` says how the table is built (each token's row is the model's
average output for it over real text); it ships with linkly as 8-bit rows.
Embedding a passage is a WordPiece tokenization and a mean over at most
`max_tokens` rows: well under a millisecond, a hundred times cheaper than the
transformer, so every chunk of a library has a vector within seconds of keyword
indexing, and the bundled model refines them in the background. The vectors
live in a vector index of their own (model `STATIC_MODEL_ID`); ranking uses a
chunk's refined vector when it has one and its first-pass vector otherwise.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from linkly_ls.core.embedding.settings import BUNDLED_MODEL_ID, packaged_model_file
from linkly_ls.core.embedding.word_ids import WordIds

if TYPE_CHECKING:
    import numpy as np

#: first-pass vectors are stored under this model id; a new table takes a new id (with TABLE_SHA256:
#: vectors of an older table would otherwise be compared with queries embedded by the new one)
STATIC_MODEL_ID = "linkly/all-MiniLM-L6-v2-contextual-384-1"
#: the table inside the package (linkly_ls/models/minilm/), and the sha256 of the rows and scales that id names
#: (`table_sha256`): of the numbers, not the file, which is stored uncompressed (8-bit rows barely compress,
#: 11.8 MB against 10.2, and reading it takes 10-35 ms instead of 85)
TABLE_FILE = "static-table.npz"
TABLE_SHA256 = "fefbb0ac9ee44fe24d7debaaa9f1a0dadb619ae8445e44e09a4142b466ebafd3"
#: the model whose outputs the table's rows average: a query embedded by it lies in the rows' space
SOURCE_MODEL_ID = BUNDLED_MODEL_ID
#: tokens of a passage averaged; static vectors do not need the transformer's 256-token cut
STATIC_MAX_TOKENS = 512


def package_tokenizer():
    """The bundled model's WordPiece tokenizer from linkly's own files (no model package needed), unpadded."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(packaged_model_file("tokenizer.json").read_text(encoding="utf-8"))
    tokenizer.no_padding()
    return tokenizer


class StaticEmbedder:
    """Mean of token rows, L2-normalised. Thread-safe (the tokenizer and the table are read-only).

    `rows` (vocabulary x dimensions, any numeric type) are multiplied by `scales` (one per row)."""

    model_id = STATIC_MODEL_ID

    def __init__(self, rows: np.ndarray, scales: np.ndarray, tokenizer, max_tokens: int = STATIC_MAX_TOKENS) -> None:
        import numpy as np

        if len(rows) != len(scales) or len(rows) < tokenizer.get_vocab_size():
            raise ValueError(f"the table has {len(rows)} rows and {len(scales)} scales for {tokenizer.get_vocab_size()} tokens")
        self._rows = rows
        self._scales = np.asarray(scales, dtype=np.float32)
        self.dim = int(rows.shape[1])
        self._max_tokens = max_tokens
        self._tokenizer = tokenizer
        self._tokenizer.no_truncation()
        self._word_ids = WordIds(tokenizer)
        self._word_ids_lock = threading.Lock()

    @classmethod
    def from_package(cls) -> StaticEmbedder:
        """The embedder of the table and tokenizer that ship with linkly."""
        import numpy as np

        with packaged_model_file(TABLE_FILE).open("rb") as handle, np.load(handle, allow_pickle=False) as table:
            return cls(table["rows"], table["scales"], package_tokenizer())

    def table_sha256(self) -> str:
        """The sha256 of the table's rows and then its scales, as stored."""
        import hashlib

        digest = hashlib.sha256(self._rows.tobytes())
        digest.update(self._scales.tobytes())
        return digest.hexdigest()

    @staticmethod
    def about() -> dict:
        """What the shipped table says of how it was built (`bench/static_table.py` writes it)."""
        import numpy as np

        with packaged_model_file(TABLE_FILE).open("rb") as handle, np.load(handle, allow_pickle=False) as table:
            return json.loads(str(table["about"]))

    def embed_passages(self, texts: Sequence[str], batch_size: int = 0) -> np.ndarray:
        """Vectors of `texts`, in their order (`batch_size` is accepted for the embedder protocol).
        Each distinct word is tokenized once (`word_ids.py`)."""
        with self._word_ids_lock:
            ids = self._word_ids.ids(texts, self._max_tokens)
        return self._mean_rows(ids)

    def forget_words(self) -> None:
        """Let go of the word cache `embed_passages` filled (at the end of a first pass)."""
        with self._word_ids_lock:
            self._word_ids.forget()

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of queries, tokenized directly: a search does not wait for a first pass's words."""
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return self._mean_rows([encoding.ids[: self._max_tokens] for encoding in encodings])

    def _mean_rows(self, ids_of_texts: Sequence[Sequence[int] | np.ndarray]) -> np.ndarray:
        import numpy as np

        vectors = np.zeros((len(ids_of_texts), self.dim), dtype=np.float32)
        for row, ids in enumerate(ids_of_texts):
            if len(ids):  # a row per passage: one `add.reduceat` over the batch's rows was 25 times slower
                indices = np.asarray(ids)
                vectors[row] = self._scales[indices] @ self._rows[indices]
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.clip(norms, 1e-12, None)


def joint_query_vector(static_vector: np.ndarray, model_vector: np.ndarray) -> np.ndarray:
    """A query for first-pass vectors read both ways: the mean of its table vector and its model vector.

    The table places a query as it places passages (token rows, frequency weights) but reads each
    word alone; the model reads the words in context but in its own weighting. Measured over six
    collections, the unit mean of the two ranked first-pass documents better than either alone
    (README, *The first vector pass*).
    """
    import numpy as np

    joint = static_vector / max(float(np.linalg.norm(static_vector)), 1e-12)
    joint = joint + model_vector / max(float(np.linalg.norm(model_vector)), 1e-12)
    return (joint / max(float(np.linalg.norm(joint)), 1e-12)).astype(np.float32)
