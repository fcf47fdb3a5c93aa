"""Search quality at the points of `vector_coverage.py --collection`: keywords only, first pass, refined.

A labelled collection (a folder of `../shared/ir`) is written as a library of
`.txt` files, keyword-indexed with `linkly index` (timed), and scored with
nDCG@10 through the `search` tool (the harness of `bench/ir_eval.py`):

- keyword: right after keyword indexing, `mode` keyword;
- first pass: when every chunk has a first-pass vector, `mode` hybrid, with the
  refining process stopped (SIGSTOP) while the queries run, so the figure is the
  state at that moment (documents the model already refined count as refined),
  the bundled model loaded first in the scoring process (the refining process
  loads it beside the first pass; first-pass search then joins its query vector);
- refined: once every chunk has the model's vector, `mode` hybrid.

Each point's time is printed as seconds from the start of keyword indexing and
as a multiple of the keyword-indexing time: the issue's measure of "hybrid
within 2 x keyword time".
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkly_ls.core.search import evaluation


@dataclass
class QualityPoint:
    label: str
    seconds: float
    ndcg10: float
    modes_seen: set[str]


@dataclass
class CollectionProbe:
    """A labelled collection written as a library, and the quality points measured on it."""

    folder: Path
    library: Path
    collection: evaluation.Collection = field(init=False)
    names: dict[str, str] = field(init=False)
    keyword_seconds: float = 0.0
    #: how long the refining process was stopped for `score_paused` (not part of its time to coverage)
    paused_seconds: float = 0.0
    points: list[QualityPoint] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.collection = evaluation.load_collection(self.folder)
        self.names = evaluation.write_library(self.collection, self.library)

    def keyword_index(self, linkly: Path, env: dict[str, str]) -> None:
        started = time.monotonic()
        subprocess.run([str(linkly), "index", str(self.library), "--library", "corpus"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.keyword_seconds = time.monotonic() - started
        print(f"keyword index of {self.collection.name} ({len(self.collection.docs)} documents): "
              f"{self.keyword_seconds:.1f} s", flush=True)

    def score(self, label: str, mode: str, seconds: float, data_dir: Path, config: Path, load_model: bool = False) -> None:
        """Every query through `search` in `mode` on a fresh engine over `data_dir`; `load_model`: with
        the bundled model loaded first, as the serving process has it once its refining run loaded it."""
        os.environ["LINKLY_DATA_DIR"], os.environ["LINKLY_CONFIG"] = str(data_dir), str(config)
        from linkly_ls.core.config import load_config
        from linkly_ls.core.engine import Engine

        engine = Engine(load_config())
        if load_model:
            engine.vectors.provider.current()
        try:
            scores = evaluation.evaluate(engine, self.collection, self.names, mode, recall=False)
        finally:
            engine.close()
        self.points.append(QualityPoint(label, seconds, scores.ndcg10, scores.modes_seen))
        print(f"  quality, {label}: nDCG@10 {scores.ndcg10:.4f} at {seconds:.1f} s "
              f"(ranked as {','.join(sorted(scores.modes_seen))})", flush=True)

    def score_paused(self, label: str, pid: int, seconds: float, data_dir: Path, config: Path) -> None:
        """`score` in hybrid mode with process `pid` (the refining `linkly index --wait`) stopped meanwhile."""
        stopped = time.monotonic()
        os.kill(pid, signal.SIGSTOP)
        try:
            self.score(label, "hybrid", seconds, data_dir, config, load_model=True)
        finally:
            os.kill(pid, signal.SIGCONT)
            self.paused_seconds += time.monotonic() - stopped

    def report(self) -> list[str]:
        keyword = next((point.ndcg10 for point in self.points if point.label == "keyword"), None)
        lines = [
            f"search quality, {self.collection.name} ({len(self.collection.queries)} queries), "
            f"keyword indexing {self.keyword_seconds:.1f} s:",
            f"  {'point':<12} {'at (s)':>8} {'x keyword time':>15} {'nDCG@10':>8} {'x keyword-only':>15}",
        ]
        for point in self.points:
            ratio = f"{point.ndcg10 / keyword:.3f}" if keyword else "-"
            lines.append(
                f"  {point.label:<12} {point.seconds:8.1f} {point.seconds / max(self.keyword_seconds, 1e-9):15.1f} "
                f"{point.ndcg10:8.4f} {ratio:>15}"
            )
        return lines
