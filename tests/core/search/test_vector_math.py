"""Arithmetic on stored vectors: the 8-bit form and cosines by each row's best view."""

from __future__ import annotations

import numpy as np

from linkly_ls.core.search.vector_math import cosines, quantize, unit_rows

from tests.core.search.test_vectors import DIM, unit


def test_quantize_spends_each_rows_whole_range_and_gives_back_what_it_stored():
    rows = unit(50, seed=3)
    rows[4] = 0.0
    stored = quantize(rows)
    assert stored.dtype == np.int8
    assert (np.abs(stored[np.arange(50) != 4]).max(axis=1) == 127).all()
    assert not stored[4].any(), "a zero row stays zero"
    widened = stored.astype(np.float32) / 127.0
    assert np.array_equal(quantize(widened), stored) and np.array_equal(quantize(widened * 3.7), stored)
    assert quantize(rows[0]).shape == (DIM,)
    cosines = np.einsum("ij,ij->i", widened, rows)[np.arange(50) != 4] / np.linalg.norm(widened[np.arange(50) != 4], axis=1)
    assert cosines.min() > 0.999


def test_cosines_normalise_the_rows_and_take_each_rows_best_view():
    rows = unit(6, seed=4) * np.arange(1, 7, dtype=np.float32)[:, None]
    views = unit(3, seed=9)
    expected = (unit_rows(rows.copy()) @ views.T).max(axis=1)
    assert np.allclose(cosines(rows.copy(), views), expected, atol=1e-6)
    assert np.allclose(cosines(rows.copy(), views[0]), unit_rows(rows.copy()) @ views[0], atol=1e-6)
    assert np.allclose(np.linalg.norm(unit_rows(rows), axis=1), 1.0, atol=1e-6)
