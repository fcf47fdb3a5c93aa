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
        """The `[embedding]` table, each value checked for its TOML type (`first_pass = "yes"` in quotes, as
        `ocr = "no"`, is an error: a string is no switch)."""
        refuse_unknown_keys(section, ("model", "batch_size", "threads", "batch_tokens", "first_pass"), "[embedding]")
        model = section.get("model", BUNDLED)
        if not isinstance(model, str):
            raise ConfigError(f'[embedding] model must be a name in quotes ("bundled", "none" or a fastembed model), got {model!r}')
        model = model.strip() or BUNDLED
        if model.lower() in {"bundled", "default", "minilm"}:
            model = BUNDLED
        elif model.lower() in {"none", "off", "disabled", "false"}:
            model = DISABLED
        first_pass = section.get("first_pass", True)
        if not isinstance(first_pass, bool):
            raise ConfigError(f"[embedding] first_pass must be true or false (a TOML boolean), got {first_pass!r}")
        threads = _whole_number(section, "threads", None, 1)
        return cls(
            model=model,
            batch_size=_whole_number(section, "batch_size", DEFAULT_BATCH_SIZE, 1),
            threads=threads,
            batch_tokens=_whole_number(section, "batch_tokens", DEFAULT_BATCH_TOKENS, 16),
            first_pass=first_pass,
        )


def _whole_number(section: dict[str, Any], key: str, default: int | None, least: int) -> Any:
    value = section.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"[embedding] {key} must be a whole number of at least {least}, got {value!r}")
    return value


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
