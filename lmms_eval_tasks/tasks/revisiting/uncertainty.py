"""Vectorised building blocks of the Revisiting datasets' bootstrap statistics (TDIUC, TallyQA, DVQA,
VQDv1): per-category accuracies from per-cell totals, NaN for a category a resample leaves empty, and the
means the scorers take over the categories present (``revisiting.scoring.mean``/``harmonic_mean``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def cell_codes(keys: Sequence[Any], order: Sequence[Any] | None = None) -> tuple[np.ndarray, list[Any]]:
    """(per-row codes, the cell keys): cells in ``order`` when given, else sorted, so two runs of the same
    records get the same layout whatever the predictions."""
    cells = list(order) if order is not None else sorted(set(keys), key=str)
    position = {key: i for i, key in enumerate(cells)}
    return np.asarray([position[key] for key in keys], dtype=np.int64), cells


def group_matrix(cells: Sequence[Any], group_of: Any, groups: Sequence[Any]) -> np.ndarray:
    """``M[cell, group]`` = 1 when the cell belongs to the group: totals @ M sums cells into groups."""
    matrix = np.zeros((len(cells), len(groups)))
    index = {group: j for j, group in enumerate(groups)}
    for i, cell in enumerate(cells):
        matrix[i, index[group_of(cell)]] = 1.0
    return matrix


def percent(hits: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """100 * hits / counts, NaN where counts is 0 (no item of that kind in the resample)."""
    with np.errstate(all="ignore"):
        return np.where(counts > 0, 100.0 * hits / np.where(counts > 0, counts, 1.0), np.nan)


def present_mean(values: np.ndarray) -> np.ndarray:
    """Mean over the last axis of the defined (non-NaN) values; NaN when none is defined."""
    defined = np.isfinite(values)
    count = defined.sum(axis=-1)
    total = np.where(defined, values, 0.0).sum(axis=-1)
    with np.errstate(all="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def present_harmonic(values: np.ndarray) -> np.ndarray:
    """Harmonic mean of the defined values (0 when one is 0, NaN when none), as ``scoring.harmonic_mean``."""
    defined = np.isfinite(values)
    count = defined.sum(axis=-1)
    zero = (defined & (values == 0)).any(axis=-1)
    with np.errstate(all="ignore"):
        inverse = np.where(defined & (values != 0), 1.0 / np.where(values != 0, values, 1.0), 0.0).sum(
            axis=-1
        )
        harmonic = count / inverse
    return np.where(count == 0, np.nan, np.where(zero, 0.0, harmonic))
