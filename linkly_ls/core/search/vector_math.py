"""Arithmetic on stored vectors: cosines against a query, unit rows, and the 8-bit form the index keeps.

numpy is imported inside each function, as in vectors.py: it loads with the vectors, not with
every process that opens an index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def cosines(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Rows (normalised here, in place) times the query; a 2-D query is several views of it
    (query_views.py), and each row takes its best view. `einsum`, not `@`: for one vector, BLAS's
    threads cost ten times the arithmetic (2.7 ms of CPU for 1,700 chunks against 0.14 ms), more on a
    busy machine."""
    import numpy as np

    unit_rows(matrix)
    query = np.asarray(query, dtype=np.float32)
    if query.ndim == 2:
        return np.einsum("ij,kj->ik", matrix, query).max(axis=1)
    return np.einsum("ij,j->i", matrix, query)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    """The rows of `matrix` scaled to unit length, in place."""
    import numpy as np

    matrix /= np.clip(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12, None)
    return matrix


def quantize(vectors: np.ndarray) -> np.ndarray:
    """Rows as 8-bit integers, each scaled so that its largest component is +-127.

    Cosine similarity ignores a row's scale, so each row can use its whole 8-bit range. usearch's
    own conversion multiplies every row by 127, and the bundled model's unit vectors, whose largest
    component is about 0.16, would then use +-20 of it: steps six times coarser. Quantizing a row
    read back from the index, at any scale, gives back exactly the integers stored."""
    import numpy as np

    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    peaks = np.abs(rows).max(axis=1, keepdims=True)
    scaled = rows * (127.0 / np.where(peaks > 0, peaks, 1.0))
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8).reshape(np.shape(vectors))
