"""Embedding settings (`[embedding]`), the provider's status, and what every embedder offers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Protocol

from linkly_ls.core.config import ConfigError, refuse_unknown_keys

if TYPE_CHECKING:
    import numpy as np

BUNDLED = "bundled"
DISABLED = "none"
BUNDLED_MODEL_ID = "linkly/all-MiniLM-L6-v2-int8"
BUNDLED_DIM = 384
#: models trained on English text only: a query written in another script gets no meaning from them (the
#: bundled model's card; its first-pass table is distilled from it)
ENGLISH_ONLY_MODELS = frozenset({BUNDLED_MODEL_ID})
#: default token budget of one model call; peak RSS of the embedding grows with it
DEFAULT_BATCH_TOKENS = 1024
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


def packaged_model_file(name: str):
    """A file of the bundled model that ships inside linkly (`linkly_ls/models/minilm/`): tokenizer, first-pass table."""
    return resources.files("linkly_ls.models") / "minilm" / name
DEFAULT_BATCH_SIZE = 16


@dataclass(frozen=True)
class EmbeddingSettings:
    model: str = BUNDLED
    #: most passages per model call (fastembed models: exactly this many)
    batch_size: int = DEFAULT_BATCH_SIZE
    #: onnxruntime threads (None: all cores)
    threads: int | None = None
    #: bundled model: tokens (padding included) per model call, which bounds its activation memory
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    #: a fast first vector for every chunk (a static table shipped with linkly) before the model's own,
    #: kept until the model has refined every document (README, "The first vector pass")
    first_pass: bool = True

    @classmethod
    def from_section(cls, section: dict[str, Any]) -> EmbeddingSettings:
        refuse_unknown_keys(section, ("model", "batch_size", "threads", "batch_tokens", "first_pass"), "[embedding]")
        model = str(section.get("model", BUNDLED)).strip() or BUNDLED
        if model.lower() in {"bundled", "default", "minilm"}:
            model = BUNDLED
        elif model.lower() in {"none", "off", "disabled", "false"}:
            model = DISABLED
        threads = section.get("threads")
        try:
            return cls(
                model=model,
                batch_size=max(1, int(section.get("batch_size", DEFAULT_BATCH_SIZE))),
                threads=int(threads) if threads else None,
                batch_tokens=max(16, int(section.get("batch_tokens", DEFAULT_BATCH_TOKENS))),
                first_pass=_flag(section.get("first_pass", True)),
            )
        except (TypeError, ValueError) as error:
            raise ConfigError(f"[embedding] batch_size, batch_tokens and threads must be numbers, first_pass true or false: {error}") from error


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if str(value).strip().lower() in {"true", "yes", "on", "1"}:
        return True
    if str(value).strip().lower() in {"false", "no", "off", "0"}:
        return False
    raise ValueError(f"first_pass must be true or false, not {value!r}")


@dataclass(frozen=True)
class EmbedderStatus:
    """What the provider can do right now, for search's `mode_reason` and `list_libraries`."""

    ready: bool
    model: str | None
    reason: str


class TextEmbedder(Protocol):
    """What `EmbeddingProvider.current()` returns: the bundled ONNX model or a fastembed model."""

    model_id: str
    dim: int

    def embed_passages(self, texts: Sequence[str], batch_size: int = ...) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries' vectors (rows in order) in one model call: a query's sentence views."""
        ...
