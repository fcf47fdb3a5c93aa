"""Build the search-latency indexes (about 5k, 50k and 500k chunks) in a bench cache folder.

Sources: the IR collections' documents as Markdown files (the format of
`ir_eval.py`) and the shared corpus (without `odd/`), copied once into the
cache. A level is a library folder of hard links to those sources: the IR files
once, then the corpus again and again under new folder names (`corpus-01/`,
`corpus-02/`, ...) until the level has its chunks. Hard links keep each copy's
size and mtime, so the copies are real files that `linkly index` would see.

Every distinct source file is extracted once (`prepare_file` in worker processes,
as the indexer does); each copy's prepared result, with the copy's path, is then
stored through the indexer's own path (`DocumentStore.store`, `Indexer.flush`), which
is what indexing the copy would do, since extraction depends only on a file's
bytes and name. A final `Engine.index()` checks this: every file must be
reported unchanged.

Vectors come from the bundled model through the embedding path of `VectorSync`
(`EmbeddingRounds.embed_round`: passages from the catalog, `VectorIndex.add`), with one change:
each distinct passage text is embedded once and kept in `passages.sqlite3` in the
cache, keyed by a hash of model id and text, so copies reuse it.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from linkly_ls.core.search.evaluation import load_collection, write_library  # noqa: E402

from linkly_ls.core.config import Config  # noqa: E402
from linkly_ls.core.embedding.settings import TextEmbedder  # noqa: E402
from linkly_ls.core.engine import Engine  # noqa: E402
from linkly_ls.core.document import ExtractedDocument  # noqa: E402
from linkly_ls.core.extract import EXTRACTOR_VERSIONS  # noqa: E402
from linkly_ls.core.extract.base import ExtractLimits  # noqa: E402
from linkly_ls.core.indexing.indexer import PreparedFile, prepare_file  # noqa: E402
from linkly_ls.core.indexing.workers import WorkerPool  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
IR_COLLECTIONS = ("cranfield", "medline", "adi")
CORPUS_SKIP = {"odd", "README.md", "MANIFEST.tsv", ".restore-mtimes.py"}
LIBRARY = "bench"
STORE_BATCH = 500
EMBED_ROUND_DOCS = 256


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write_sources(cache: Path, shared: Path) -> Path:
    """The IR documents as Markdown and a copy of the corpus, under `cache/sources` (written once)."""
    sources = cache / "sources"
    done = sources / ".complete"
    if done.exists():
        return sources
    for name in IR_COLLECTIONS:
        write_library(load_collection(shared / "ir" / name), sources / "ir" / name)
    target = sources / "corpus"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(shared / "corpus", target, ignore=lambda folder, names: [n for n in names if n in CORPUS_SKIP])
    for path in target.rglob("*"):
        path.chmod(path.stat().st_mode | 0o200)
    done.write_text("")
    return sources


def prepare_sources(cache: Path, sources: Path) -> dict[str, PreparedFile]:
    """relative path -> prepared result of every source file, extracted once and kept in the cache."""
    stored = cache / "prepared.pickle"
    files = sorted(str(path.relative_to(sources)) for path in sources.rglob("*") if path.is_file() and path.name != ".complete")
    stamp = _preparation_stamp()
    if stored.exists():
        kept = pickle.loads(stored.read_bytes())
        if isinstance(kept, dict) and kept.get("stamp") == stamp and sorted(kept["files"]) == files:
            return kept["files"]
    log(f"extracting {len(files)} source files once ...")
    limits = ExtractLimits()
    prepared = {}
    started = time.monotonic()
    with WorkerPool(prepare_file, timeout_s=limits.extract_timeout_s, memory_mb=limits.extract_memory_mb) as pool:
        for outcome in pool.run((name, (str(sources / name), None, limits)) for name in files):
            result = outcome.value or PreparedFile(path=str(sources / outcome.key), size=0, mtime_ns=0, content_hash="")
            if outcome.value is None:
                result.error = outcome.error or "unknown error"
            prepared[outcome.key] = result
    log(f"  extracted in {time.monotonic() - started:.0f} s")
    stored.write_bytes(pickle.dumps({"stamp": stamp, "files": prepared}))
    return prepared


def _preparation_stamp() -> str:
    """What a kept extraction depends on: the extractors' versions and the fields of what they return (a
    result pickled by an older version lacks the fields added since)."""
    names = [field.name for kind in (PreparedFile, ExtractedDocument) for field in fields(kind)]
    return json.dumps([EXTRACTOR_VERSIONS, names], sort_keys=True)


def corpus_sample(prepared: dict[str, PreparedFile], sample_chunks: int | None) -> list[str]:
    """The corpus files that get copied: all of them, or (sorted by path) about `sample_chunks` chunks' worth."""
    names = sorted(name for name in prepared if name.startswith("corpus/"))
    if sample_chunks is None:
        return names
    return _fill(names, {name: len(prepared[name].chunks) for name in names}, sample_chunks)


def _fill(names: list[str], chunks: dict[str, int], target: int, total: int = 0) -> list[str]:
    """Names in order, skipping those that would overshoot `target` by more than 2%, until it is reached."""
    picked: list[str] = []
    for name in names:
        if total >= target * 0.98:
            break
        if total + chunks[name] <= target * 1.02:
            picked.append(name)
            total += chunks[name]
    return picked


def plan_level(prepared: dict[str, PreparedFile], target_chunks: int, sample_chunks: int | None = None) -> list[tuple[str, str]]:
    """(source, copy) relative paths: the IR files, then copies of the corpus (sample) until about `target_chunks`."""
    chunks = {name: len(item.chunks) for name, item in prepared.items()}
    plan = [(name, name) for name in sorted(prepared) if name.startswith("ir/")]
    total = sum(chunks[name] for name, _ in plan)
    sample = corpus_sample(prepared, sample_chunks)
    copy = 1
    while total < target_chunks * 0.98:
        picked = _fill(sample, chunks, target_chunks, total)
        if not picked:
            break
        plan.extend((name, f"corpus-{copy:02d}/{name[len('corpus/'):]}") for name in picked)
        total += sum(chunks[name] for name in picked)
        copy += 1
    return plan


class CachedEmbedder:
    """An embedder that computes each distinct passage once and keeps its vector on disk."""

    def __init__(self, embedder: TextEmbedder, database: Path) -> None:
        self.model_id = embedder.model_id
        self.dim = embedder.dim
        self._embedder = embedder
        self._db = sqlite3.connect(database)
        self._db.execute("CREATE TABLE IF NOT EXISTS passages (hash BLOB PRIMARY KEY, vector BLOB NOT NULL)")
        self.computed = 0
        self.reused = 0

    def _key(self, text: str) -> bytes:
        return hashlib.blake2b(f"{self.model_id}\n{text}".encode("utf-8", "surrogatepass"), digest_size=16).digest()

    def embed_passages(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        keys = [self._key(text) for text in texts]
        known: dict[bytes, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            batch = list(dict.fromkeys(keys[start : start + 500]))
            marks = ",".join("?" * len(batch))
            for key, blob in self._db.execute(f"SELECT hash, vector FROM passages WHERE hash IN ({marks})", batch):
                known[key] = np.frombuffer(blob, dtype=np.float32)
        missing = list(dict.fromkeys(i for i, key in enumerate(keys) if key not in known))
        unique_missing: dict[bytes, int] = {}
        for i in missing:
            unique_missing.setdefault(keys[i], i)
        if unique_missing:
            vectors = self._embedder.embed_passages([texts[i] for i in unique_missing.values()], batch_size)
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO passages VALUES (?, ?)",
                    [(key, vector.astype(np.float32).tobytes()) for key, vector in zip(unique_missing, vectors)],
                )
            known.update(zip(unique_missing, vectors))
        self.computed += len(unique_missing)
        self.reused += len(texts) - len(unique_missing)
        return np.vstack([known[key] for key in keys]).astype(np.float32)


def build_level(
    cache: Path, name: str, target_chunks: int, rebuild: bool = False, sample_chunks: int | None = None
) -> Path:
    """The data dir of a level, built unless it is already complete; returns it."""
    shared = SHARED
    level = cache / "levels" / name
    marker = level / "complete"
    sources = write_sources(cache, shared)
    prepared = prepare_sources(cache, sources)
    plan = plan_level(prepared, target_chunks, sample_chunks)
    stamp = hashlib.sha1(repr(plan).encode()).hexdigest()
    if marker.exists() and marker.read_text().split()[0] == stamp and not rebuild:
        return level / "data"
    if level.exists():
        shutil.rmtree(level)
    docs = level / "docs"
    started = time.monotonic()
    for source, target in plan:
        path = docs / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.hardlink_to(sources / source)
    engine = Engine(Config(data_dir=level / "data"))
    try:
        engine.add_library([docs], name=LIBRARY)
        _store_all(engine, docs, plan, prepared)
        log(f"  {name}: catalog and keyword index of {len(plan)} files in {time.monotonic() - started:.0f} s")
        check = engine.index([LIBRARY])[0]
        if check.indexed or check.removed:
            raise SystemExit(f"{name}: re-indexing changed the index ({check.summary()}); the shortcut is not exact")
        started = time.monotonic()
        embedded, cached = _embed_all(engine, cache / "passages.sqlite3")
        log(
            f"  {name}: vectors of {embedded} documents in {time.monotonic() - started:.0f} s "
            f"({cached.computed} passages embedded, {cached.reused} reused)"
        )
    finally:
        engine.close()
    marker.write_text(f"{stamp} {len(plan)} files\n")
    return level / "data"


def _store_all(engine: Engine, docs: Path, plan: list[tuple[str, str]], prepared: dict[str, PreparedFile]) -> None:
    indexer = engine.indexer
    for count, (source, target) in enumerate(plan, start=1):
        item = prepared[source]
        path = str(docs / target)
        if item.error or item.document is None:
            indexer.documents.record_error(path, LIBRARY, item.error or "unknown error")
        else:
            indexer.documents.store(replace(item, path=path), LIBRARY)
        if count % STORE_BATCH == 0:
            indexer.flush()
    indexer.flush()


def _embed_all(engine: Engine, database: Path) -> tuple[int, CachedEmbedder]:
    sync = engine.vectors
    embedder = sync.provider.current()
    if embedder is None:
        raise SystemExit(f"no embedding model: {sync.provider.status().reason}")
    cached = CachedEmbedder(embedder, database)
    index = sync.index_for(embedder, writer=True)
    if index is None:
        raise SystemExit("another process holds the vector writer lock of the bench index")
    done = 0
    while True:
        missing = index.missing_documents(limit=EMBED_ROUND_DOCS)
        if not missing:
            break
        taken, _ = sync.rounds.embed_round(cached, index, missing, None, done, done + len(missing))  # type: ignore[arg-type]
        done += taken
        log(f"    embedded {done} documents, {len(index)} vectors")
    index.checkpoint()
    return done, cached
