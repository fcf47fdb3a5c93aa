"""Hub models through fastembed: loaded from the local cache, or downloaded once."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from linkly_ls.core.embedding.settings import DEFAULT_BATCH_SIZE

if TYPE_CHECKING:
    import numpy as np


class FastembedEmbedder:
    """One loaded fastembed model (a hub model). `embed_*` are safe to call from several threads."""

    def __init__(self, model_id: str, model: Any, dim: int) -> None:
        self.model_id = model_id
        self.dim = dim
        self._model = model

    def embed_passages(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE) -> np.ndarray:
        """Vectors in the order of `texts`; batches hold passages of similar length (less padding)."""
        import numpy as np  # loaded with the vectors, not with every open index

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        embedded = list(self._model.passage_embed([texts[i] for i in order], batch_size=batch_size))
        vectors[order] = np.asarray(embedded, dtype=np.float32)
        return _normalised(vectors)

    def embed_query(self, text: str) -> np.ndarray:
        import numpy as np  # loaded with the vectors, not with every open index

        vectors = list(self._model.query_embed([text]))
        return _normalised(np.asarray(vectors, dtype=np.float32))[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np  # loaded with the vectors, not with every open index

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _normalised(np.asarray(list(self._model.query_embed(list(texts))), dtype=np.float32))


def _normalised(vectors: np.ndarray) -> np.ndarray:
    import numpy as np  # loaded with the vectors, not with every open index

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.clip(norms, 1e-12, None)


def load_hub_model(name: str, cache_dir: Path, local_only: bool, threads: int | None = None) -> FastembedEmbedder:
    """A fastembed model by name from `cache_dir`; downloads it unless `local_only`. fastembed's own log
    lines (a model not cached yet, a download tried without network) are silenced: they went to every
    command's stderr, beside its one-line errors and its JSON; what failed is said in `mode_reason`."""
    from fastembed import TextEmbedding
    from loguru import logger

    logger.disable("fastembed")

    model = TextEmbedding(model_name=name, cache_dir=str(cache_dir), local_files_only=local_only, threads=threads)
    return FastembedEmbedder(name, model, int(model.embedding_size))


def unknown_model_problem(name: str) -> str | None:
    """Why `name` cannot be loaded before anything is fetched: fastembed is missing, or knows no model of
    that name (matched as fastembed matches, ignoring case), with the nearest names it knows; None when
    it is one of fastembed's text models. A typo would otherwise be tried against the hub in the
    background, and search would use the bundled model without a word."""
    try:
        from fastembed import TextEmbedding
    except ImportError:
        return f"model {name} needs the fastembed package, which is not installed"
    known = [str(entry["model"]) for entry in TextEmbedding.list_supported_models()]
    if any(name.lower() == model.lower() for model in known):
        return None
    by_lower = {model.lower(): model for model in known}
    same_tail = [lower for lower in by_lower if lower.rsplit("/", 1)[-1] == name.lower()]
    nearest = list(dict.fromkeys(same_tail + difflib.get_close_matches(name.lower(), list(by_lower), n=3, cutoff=0.5)))[:3]
    hint = f" (did you mean {', '.join(by_lower[lower] for lower in nearest)}?)" if nearest else ""
    return f"`[embedding] model = \"{name}\"` is not a model fastembed knows{hint}"
