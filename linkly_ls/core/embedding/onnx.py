"""The bundled MiniLM run with onnxruntime and tokenizers directly, tuned for throughput and memory.

fastembed would give the same vectors (mean pooling of the last hidden state
over the attention mask, then L2 normalisation, truncation at the tokenizer's
`model_max_length`), but for a backlog of thousands of passages four of its
defaults cost time or memory on a CPU:

- Batches of a fixed number of passages, padded to the longest one: passages
  of 20 and 256 tokens in one batch waste most of the work. Here passages are
  tokenized first, sorted by token count, and cut into batches of at most
  `batch_tokens` tokens (padded tokens included), so padding is ~1% and the
  activation memory of a batch is bounded whatever the passage lengths.
- Full graph optimisation: constant folding turns the int8 weights into
  float tensors at load (~165 MB resident) without making this model faster.
- Spinning intra-op threads: on a busy machine each spinning thread burns a
  core while waiting (+50% CPU per passage measured with two threads).
- The memory-pattern planner, which sizes buffers for one input shape and
  grows again for every new one.

Background embedding (a thread that `core.background.lower_current_thread()`
lowered) runs on a session of its own: one core fewer than the machine has
unless `[embedding] threads` says otherwise, created by that thread so that
onnxruntime's pool threads inherit its low priority. Queries and foreground
embedding (`linkly index --wait`) share the other session, at normal
priority: a query never waits for a low-priority thread. `embed_passages`
takes a `pause` callback, called before each model call, through which
background embedding yields to the requests being answered.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from linkly_ls.core.background import at_normal_priority, background_threads, current_thread_is_lowered
from linkly_ls.core.embedding.settings import DEFAULT_BATCH_TOKENS

log = logging.getLogger("linkly_ls.embedding")
#: most passages in one model call, however short they are
MAX_BATCH_PASSAGES = 64
#: how often passages waiting for the final graph call their `pause` (which may stop them)
FINAL_GRAPH_POLL_S = 0.1


def session_options(threads: int | None):
    """onnxruntime options for the bundled model; `threads` None: every core."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or os.cpu_count() or 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.enable_mem_pattern = False
    options.enable_cpu_mem_arena = True
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


def load_tokenizer(folder: Path):
    """The model's tokenizer: truncation at `model_max_length`, no padding (batches pad themselves)."""
    from tokenizers import Tokenizer

    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=int(config.get("model_max_length", 256)))
    tokenizer.no_padding()
    return tokenizer


def token_batches(lengths: Sequence[int], batch_tokens: int, max_passages: int = MAX_BATCH_PASSAGES) -> Iterator[list[int]]:
    """Indices of passages grouped shortest first, each group padded to at most `batch_tokens` tokens.

    A passage longer than the budget gets a group of its own.
    """
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batch: list[int] = []
    for index in order:
        if batch and ((len(batch) + 1) * lengths[index] > batch_tokens or len(batch) >= max_passages):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


class OnnxEmbedder:
    """A MiniLM-style sentence embedder (mean pooling, normalised). `embed_*` are thread-safe.

    `threads` None: every core for queries and foreground embedding, one fewer in the background.
    """

    #: `embed_passages` takes `pause`
    pauses_between_batches = True

    def __init__(
        self,
        model_id: str,
        folder: Path,
        dim: int,
        threads: int | None = None,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        interim_graph: Path | None = None,
        write_final_graph: Callable[[], None] | None = None,
    ) -> None:
        """`interim_graph`: a graph that reads queries until `folder/model.onnx` is written by
        `write_final_graph`, which `start_final_graph` (or the first passages to embed) runs on a
        thread of its own; passages wait for it, so every passage's vector comes from the final
        graph. Without it, `folder/model.onnx` serves from the start."""
        self.model_id = model_id
        self.dim = dim
        self.batch_tokens = max(1, batch_tokens)
        self.threads = threads
        self._model_file = folder / "model.onnx"
        self.options = session_options(threads)
        self._foreground_session = self._foreground(interim_graph or self._model_file)
        #: which graph reads queries now ("interim" or "final"): a query's vector is cached under it
        self.graph = "interim" if interim_graph else "final"
        self._interim_graph = interim_graph
        self._write_final_graph = write_final_graph
        self._final_graph = threading.Event()
        if interim_graph is None:
            self._final_graph.set()
        self._background_session = None  # an onnxruntime.InferenceSession, made by the first lowered thread
        self._session_lock = threading.Lock()
        self._inputs = {node.name for node in self._foreground_session.get_inputs()}
        self._tokenizer = load_tokenizer(folder)
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0
        #: one passage batch at a time: two concurrent batches would double the activation memory.
        #: Queries (one short passage) do not take it, so search never waits for a batch.
        self._batch_lock = threading.Lock()

    def embed_passages(
        self, texts: Sequence[str], batch_size: int = MAX_BATCH_PASSAGES, pause: Callable[[], None] | None = None
    ) -> np.ndarray:
        """Vectors of `texts`, in their order; `batch_size` caps the passages of one model call.

        `pause` is called before each model call (it may wait, or raise to stop).
        """
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return vectors
        if not self._final_graph.is_set():
            self.start_final_graph()
            while not self._final_graph.wait(FINAL_GRAPH_POLL_S):
                if pause is not None:
                    pause()
        session = self._session_for_this_thread()
        encodings = self._tokenizer.encode_batch(list(texts))
        lengths = [len(encoding.ids) for encoding in encodings]
        for batch in token_batches(lengths, self.batch_tokens, max(1, batch_size)):
            if pause is not None:
                pause()
            with self._batch_lock:
                vectors[batch] = self._run([encodings[i] for i in batch], session)
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        return self._run([self._tokenizer.encode(text)], self._foreground_session)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """One model call for a few short queries (a query's sentences: about half the cost of one call each)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._run(self._tokenizer.encode_batch(list(texts)), self._foreground_session)

    def wait_for_final_graph(self, timeout: float | None = None) -> bool:
        """Start writing the final graph if it is not written yet, and wait for it to serve."""
        self.start_final_graph()
        return self._final_graph.wait(timeout)

    def start_final_graph(self) -> None:
        """Start writing the final graph, if it is not written yet, without waiting for it."""
        with self._session_lock:
            if self._final_graph.is_set() or self._write_final_graph is None:
                return
            write, self._write_final_graph = self._write_final_graph, None
        try:
            threading.Thread(target=self._use_final_graph, args=(write,), name="linkly-model-rewrite", daemon=True).start()
        except RuntimeError as error:  # no thread to be had: the interim graph serves, nothing waits
            log.warning("the bundled model runs its float graph (%s)", error)
            self._final_graph.set()

    def _foreground(self, model_file: Path):
        """The session that reads queries and foreground passages, its pool threads at normal priority
        whichever thread makes it (the lowered background thread may, when it starts the rewrite)."""
        import onnxruntime as ort

        return at_normal_priority(
            lambda: ort.InferenceSession(str(model_file), self.options, providers=["CPUExecutionProvider"])
        )

    def _use_final_graph(self, write: Callable[[], None]) -> None:
        """Write the final graph and run every call on it from then on; calls already running finish on
        the graph they started with. If it cannot be written or loaded, the interim graph serves on."""
        try:
            write()
            session = self._foreground(self._model_file)
        except Exception as error:  # noqa: BLE001 - a full disk, a vanished folder: the interim graph works
            log.warning("the bundled model runs its float graph (%s)", error)
            self._model_file = self._interim_graph or self._model_file
        else:
            with self._session_lock:
                self._foreground_session = session
                self._background_session = None
                self.graph = "final"
        finally:
            self._final_graph.set()

    def _session_for_this_thread(self):
        """A lowered thread's session (made by the first such thread), or the foreground one."""
        if not current_thread_is_lowered():
            return self._foreground_session
        with self._session_lock:
            if self._background_session is None:
                import onnxruntime as ort

                options = session_options(self.threads or background_threads())
                self._background_session = ort.InferenceSession(
                    str(self._model_file), options, providers=["CPUExecutionProvider"]
                )
            return self._background_session

    def _run(self, encodings: list, session) -> np.ndarray:
        width = max(len(encoding.ids) for encoding in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feed = {"input_ids": ids}
        if "attention_mask" in self._inputs:
            feed["attention_mask"] = mask
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
