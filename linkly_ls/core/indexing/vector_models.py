"""Vectors of models the configuration no longer uses are removed by the writer.

A model's vectors fill a usearch file and a row per chunk of the catalog: about
a gigabyte at a million chunks. They were kept for good once `[embedding] model`
named another model, or once a new version of linkly shipped another first-pass
table. The writer removes them when its vector pass starts, as it holds the
writer lock. Kept: the configured model, the bundled one (the fallback when the
configured one cannot load) and, when the first pass is on, the first pass's
table. With `model = "none"` no vector pass runs, so nothing is removed: turning
vectors off for a while does not throw away hours of embedding.
"""

from __future__ import annotations

import logging
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from linkly_ls.core.search.vectors import model_folder_prefix
from linkly_ls.core.store.catalog import Catalog
from linkly_ls.core.store.vector_rows import VectorRows, stored_models

log = logging.getLogger("linkly_ls.vectors")


@dataclass(frozen=True)
class RemovedModel:
    model_id: str
    #: chunks its vectors covered
    chunks: int


def forget_unused_models(catalog: Catalog, directory: Path, in_use: list[str]) -> list[RemovedModel]:
    """Delete the rows and index folders of every model not in `in_use`; what was removed."""
    removed = [RemovedModel(model, chunks) for model, chunks in sorted(stored_models(catalog).items()) if model not in in_use]
    for model in removed:
        VectorRows(catalog, model.model_id).delete_all()
        log.info("removed the vectors of %s (%d chunks): the configuration no longer uses it", model.model_id, model.chunks)
    kept = [re.compile(re.escape(model_folder_prefix(model)) + r"-\d+") for model in in_use]
    if directory.is_dir():
        for folder in directory.iterdir():
            if folder.is_dir() and not any(pattern.fullmatch(folder.name) for pattern in kept):
                shutil.rmtree(folder, ignore_errors=True)
    return removed
