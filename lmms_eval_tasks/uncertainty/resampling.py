"""A scorer's per-unit decomposition of its headline numbers (what the bootstrap resamples), so a number and
its interval come from one definition, with the vectorised helpers the statistics share."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lmms_eval_tasks.uncertainty.bootstrap import data_totals


@dataclass
class Resampling:
    """Rows ``values [n, ...]`` with ``cells`` codes and units, ``statistic``: totals ``[R, (n_cells,) ...]``
    -> ``{metric: [R]}``; ``identity`` names each row's record (``compare``), ``closed_form``: analytic."""

    units: Sequence[Any]
    values: Any
    statistic: Callable[[np.ndarray], dict[str, np.ndarray]]
    unit: str
    cells: Any = None
    n_cells: int | None = None
    identity: Sequence[str] | None = None
    closed_form: dict[str, Any] = field(default_factory=dict)
    note: str | None = None

    def totals(self) -> np.ndarray:
        """The totals of every row ``[1, (n_cells,) ...]``, summed row by row in record order."""
        return data_totals(self.values, self.cells, self.n_cells)

    def estimate(self) -> dict[str, float]:
        """``{metric: value}``: the statistic on the data itself (NaN where it is undefined)."""
        with np.errstate(all="ignore"):
            return point_values(self.statistic(self.totals()))


def point_values(result: dict[str, Any]) -> dict[str, float]:
    """``{metric: value}`` of a statistic's result on the data itself (its one row)."""
    return {name: float(np.asarray(value, dtype=np.float64).reshape(-1)[0]) for name, value in result.items()}


def cell_codes(keys: Sequence[Any], order: Sequence[Any] | None = None) -> tuple[np.ndarray, list[Any]]:
    """(per-row codes, the cell keys): cells in ``order`` when given, else sorted, so two runs of the same
    records get the same layout whatever the predictions."""
    cells = list(order) if order is not None else sorted(set(keys), key=str)
    position = {key: i for i, key in enumerate(cells)}
    return np.asarray([position[key] for key in keys], dtype=np.int64), cells


def percent(hits: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """100 * hits / counts, NaN where counts is 0 (no item of that kind)."""
    with np.errstate(all="ignore"):
        return np.where(counts > 0, 100.0 * hits / np.where(counts > 0, counts, 1.0), np.nan)


def ordered_sum(values: np.ndarray) -> np.ndarray:
    """Sum over the last axis, left to right (as Python's ``sum``): the same rounding on every path."""
    values = np.asarray(values, dtype=np.float64)
    total = np.zeros(values.shape[:-1])
    for j in range(values.shape[-1]):
        total = total + values[..., j]
    return total


def present_mean(values: np.ndarray) -> np.ndarray:
    """Mean over the last axis of the defined (non-NaN) values; NaN when none is defined."""
    defined = np.isfinite(values)
    count = defined.sum(axis=-1)
    total = ordered_sum(np.where(defined, values, 0.0))
    with np.errstate(all="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def present_harmonic(values: np.ndarray) -> np.ndarray:
    """Harmonic mean ``n / sum(1 / v)`` of the defined values: 0 when one is 0, NaN when none is defined."""
    defined = np.isfinite(values)
    count = defined.sum(axis=-1)
    zero = (defined & (values == 0)).any(axis=-1)
    with np.errstate(all="ignore"):
        inverse = ordered_sum(
            np.where(defined & (values != 0), 1.0 / np.where(values != 0, values, 1.0), 0.0)
        )
        harmonic = count / inverse
    return np.where(count == 0, np.nan, np.where(zero, 0.0, harmonic))


def group_matrix(cells: Sequence[Any], group_of: Any, groups: Sequence[Any]) -> np.ndarray:
    """``M[cell, group]`` = 1 when the cell belongs to the group: totals @ M sums cells into groups."""
    matrix = np.zeros((len(cells), len(groups)))
    index = {group: j for j, group in enumerate(groups)}
    for i, cell in enumerate(cells):
        matrix[i, index[group_of(cell)]] = 1.0
    return matrix
