"""Seeded, vectorised cluster bootstrap: one count matrix for all resamples, statistics by matrix products
(sums, counts and loop paths agree on a seed; docs/uncertainty.md)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from lmms_eval_tasks.uncertainty.result import Difference, Uncertainty, check_confidence, finite_or_none

StatisticResult = np.ndarray | Mapping[str, np.ndarray]
_BLOCK_ELEMENTS = 1 << 22  # draws per block: bounds memory at ~32 MB per block, whatever R and K


def factorize(labels: Sequence[Hashable] | np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """Integer codes ``0..K-1`` per row and the K distinct labels, sorted, so no resample depends on the
    order the records arrive in (one process or several)."""
    if isinstance(labels, np.ndarray) and labels.dtype.kind in "biufUSM" and labels.ndim == 1:
        if labels.size == 0:
            return np.zeros(0, dtype=np.int64), []
        uniques, inverse = np.unique(labels, return_inverse=True)
        return inverse.reshape(-1).astype(np.int64), uniques.tolist()
    labels = list(labels)
    distinct = sorted(set(labels), key=_label_order)
    index = {label: code for code, label in enumerate(distinct)}
    codes = np.fromiter((index[label] for label in labels), dtype=np.int64, count=len(labels))
    return codes, distinct


def _label_order(label: Hashable) -> tuple[int, Any, str]:
    """A total order over any labels, stable across processes: numbers, then strings (as ``np.unique``),
    then anything else by type name and repr."""
    if isinstance(label, int | float) and not isinstance(label, bool):
        return (0, float(label), "")
    if isinstance(label, str):
        return (1, 0.0, label)
    return (2, 0.0, f"{type(label).__name__}:{label!r}")


def cluster_totals(
    codes: np.ndarray, n_units: int, values: np.ndarray, cells: np.ndarray | None = None, n_cells: int = 0
) -> np.ndarray:
    """Per-unit sums of row ``values [n, ...]``: ``[K, ...]``, or ``[K, n_cells, ...]`` with ``cells``."""
    values = np.asarray(values, dtype=np.float64)
    trailing = values.shape[1:]
    flat = values.reshape(values.shape[0], int(np.prod(trailing)))
    keys = codes if cells is None else codes * n_cells + cells
    size = n_units if cells is None else n_units * n_cells
    columns = [np.bincount(keys, weights=flat[:, j], minlength=size) for j in range(flat.shape[1])]
    table = np.stack(columns, axis=-1) if columns else np.zeros((size, 0))
    shape = (n_units,) if cells is None else (n_units, n_cells)
    return table.reshape(*shape, *trailing)


def data_totals(values: Any, cells: Any = None, n_cells: int | None = None) -> np.ndarray:
    """Column totals of ``values [n, ...]`` over all rows in order (per cell with ``cells``), as ``[1, ...]``:
    the point every estimate is computed at."""
    values = np.asarray(values, dtype=np.float64)
    codes = np.zeros(values.shape[0], dtype=np.int64)
    if cells is None:
        return cluster_totals(codes, 1, values)
    cell_codes = np.asarray(cells, dtype=np.int64).reshape(-1)
    count = int(n_cells) if n_cells is not None else (int(cell_codes.max()) + 1 if cell_codes.size else 0)
    return cluster_totals(codes, 1, values, cell_codes, count)


def _index_blocks(n_units: int, n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The resampled unit indices ``[rows, K]``, block by block (together: ``integers(0, K, (R, K))``)."""
    rng = np.random.Generator(np.random.PCG64(seed))
    rows = max(1, _BLOCK_ELEMENTS // max(n_units, 1))
    for start in range(0, n_resamples, rows):
        yield rng.integers(0, n_units, size=(min(rows, n_resamples - start), n_units))


def _counts(indices: np.ndarray, n_units: int) -> np.ndarray:
    rows = indices.shape[0]
    offsets = (np.arange(rows, dtype=np.int64) * n_units)[:, None]
    flat = np.bincount((indices + offsets).reshape(-1), minlength=rows * n_units)
    return flat.reshape(rows, n_units).astype(np.float64)


def bootstrap_indices(n_units: int, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """All resamples' unit indices ``[R, K]`` (the draws every path of this module uses)."""
    blocks = list(_index_blocks(n_units, n_resamples, seed))
    return np.concatenate(blocks) if blocks else np.zeros((0, n_units), dtype=np.int64)


def bootstrap_counts(n_units: int, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """The count matrix ``C[R, K]``: how often each unit is drawn in each resample (rows sum to K)."""
    return _counts(bootstrap_indices(n_units, n_resamples, seed), n_units)


def _check_common(n_resamples: int, seed: int, confidence: float) -> None:
    check_confidence(confidence)
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 2:
        raise ValueError(f"n_resamples must be an integer >= 2, got {n_resamples!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def _as_columns(result: StatisticResult, rows: int) -> tuple[list[str] | None, np.ndarray]:
    """A statistic's output as (metric names or None for a single one, values ``[rows, M]``)."""
    if isinstance(result, Mapping):
        names = list(result)
        columns = [np.broadcast_to(np.asarray(result[name], dtype=np.float64), (rows,)) for name in names]
        return names, np.stack(columns, axis=1) if columns else np.zeros((rows, 0))
    array = np.asarray(result, dtype=np.float64)
    return None, np.broadcast_to(array.reshape(-1), (rows,))[:, None]


def _summaries(
    estimates: np.ndarray, replicates: np.ndarray | None, confidence: float
) -> list[tuple[float | None, float | None, float | None, float | None, int, str | None]]:
    """Per metric: (estimate, stderr, low, high, undefined resamples, reason)."""
    alpha = 1.0 - confidence
    out = []
    for j, estimate in enumerate(estimates):
        value = finite_or_none(estimate)
        if value is None:
            out.append((None, None, None, None, 0, "the statistic is undefined (NaN) on the data"))
            continue
        if replicates is None:
            out.append((value, None, None, None, 0, "a single unit: no sampling variability to estimate"))
            continue
        column = replicates[:, j]
        finite = column[np.isfinite(column)]
        undefined = column.size - finite.size
        if finite.size < 2:
            reason = f"the statistic is undefined in {undefined} of {column.size} resamples"
            out.append((value, None, None, None, undefined, reason))
            continue
        low, high = np.quantile(finite, [alpha / 2.0, 1.0 - alpha / 2.0])
        reason = f"{undefined} of {column.size} resamples undefined (left out)" if undefined else None
        out.append((value, float(finite.std(ddof=1)), float(low), float(high), undefined, reason))
    return out


def _package(
    names: list[str] | None,
    estimates: np.ndarray,
    replicates: np.ndarray | None,
    *,
    reason: str | None = None,
    pair: tuple[np.ndarray | None, np.ndarray | None] | None = None,
    **common: Any,
) -> Any:
    """An ``Uncertainty`` per metric (one alone when ``names`` is None), or with ``pair`` (each run's
    estimates) a paired ``Difference`` with its p-value; ``common``: the remaining fields of each."""
    common["seed"] = int(common["seed"])
    if reason is not None:
        known = common["n_units"] > 0
        rows = [(finite_or_none(e) if known else None, None, None, None, 0, reason) for e in estimates]
    else:
        rows = _summaries(estimates, replicates, common["confidence"])
    results: list[Uncertainty | Difference] = []
    for j, (est, se, lo, hi, bad, why) in enumerate(rows):
        named = {"reason": why, "undefined_resamples": bad, **common}
        if pair is None:
            results.append(Uncertainty(est, se, lo, hi, "bootstrap", **named))
        else:
            p_value = None if se is None or replicates is None else _p_value(replicates[:, j])
            a, b = (None if side is None else finite_or_none(side[j]) for side in pair)
            results.append(Difference(est, se, lo, hi, p_value, a, b, "paired bootstrap", **named))
    return results[0] if names is None else dict(zip(names, results, strict=True))


def _call(statistic: Callable[[np.ndarray], StatisticResult], argument: np.ndarray) -> StatisticResult:
    """``statistic(argument)`` with floating-point warnings off (0/0 is NaN: reported as undefined)."""
    with np.errstate(all="ignore"):
        if argument.size:
            return statistic(argument)
        with warnings.catch_warnings():  # "mean of empty slice" and the like, on empty inputs only
            warnings.simplefilter("ignore", RuntimeWarning)
            return statistic(argument)


def _prepare_values(
    codes: np.ndarray,
    n_units: int,
    values: Any,
    cells: Any,
    n_cells: int | None,
) -> tuple[np.ndarray, str | None]:
    """The per-unit table, and a reason when the values hold NaN."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 0 or values.shape[0] != codes.size:
        raise ValueError(f"values have {values.shape[:1]} rows, clusters {codes.size}")
    cell_codes = None
    if cells is not None:
        cell_codes = np.asarray(cells, dtype=np.int64).reshape(-1)
        if cell_codes.size != codes.size:
            raise ValueError(f"cells have {cell_codes.size} rows, clusters {codes.size}")
        n_cells = int(cell_codes.max()) + 1 if n_cells is None and cell_codes.size else int(n_cells or 0)
        if cell_codes.size and (cell_codes.min() < 0 or cell_codes.max() >= n_cells):
            raise ValueError(f"cells must be integer codes in 0..{n_cells - 1}")
    reason = None
    bad = ~np.isfinite(values.reshape(values.shape[0], int(np.prod(values.shape[1:])))).all(axis=1)
    if bad.any():
        reason = f"{int(bad.sum())} of {values.shape[0]} rows have NaN or infinite values"
    return cluster_totals(codes, n_units, values, cell_codes, n_cells or 0), reason


def cluster_bootstrap(
    statistic: Callable[[np.ndarray], StatisticResult],
    clusters: Sequence[Hashable] | np.ndarray,
    values: Any = None,
    *,
    cells: Any = None,
    n_cells: int | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    unit: str = "cluster",
) -> Uncertainty | dict[str, Uncertainty]:
    """Cluster bootstrap of ``statistic`` over the units ``clusters`` (docs/uncertainty.md): of the totals of
    ``values`` (per ``cells``), else of the count matrix; a dict of arrays gives one ``Uncertainty`` each."""
    _check_common(n_resamples, seed, confidence)
    codes, labels = factorize(clusters)
    k = len(labels)
    common = {"unit": unit, "n_units": k, "n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    reason = None
    if values is not None:
        table, reason = _prepare_values(codes, k, values, cells, n_cells)
        flat = table.reshape(k, int(np.prod(table.shape[1:])))

        def evaluate(counts: np.ndarray) -> StatisticResult:
            return _call(statistic, (counts @ flat).reshape(counts.shape[0], *table.shape[1:]))

        def point() -> StatisticResult:  # the rows summed in order: ``Resampling.estimate``'s numbers
            return _call(statistic, data_totals(values, cells, table.shape[1] if cells is not None else None))
    else:

        def evaluate(counts: np.ndarray) -> StatisticResult:
            return _call(statistic, counts)

        def point() -> StatisticResult:
            return evaluate(np.ones((1, k)))

    try:
        names, estimates = _as_columns(point(), 1)
    except Exception as error:  # noqa: BLE001 - an empty input may break a statistic: report, never raise
        if k:
            raise
        return _package(None, np.array([np.nan]), None, **common, reason=f"no units ({error})")
    if k == 0:
        return _package(names, estimates[0], None, **common, reason="no units")
    if reason is not None:
        return _package(names, np.full(estimates.shape[1], np.nan), None, **common, reason=reason)
    if k == 1:
        return _package(names, estimates[0], None, **common)
    blocks = [
        _as_columns(evaluate(_counts(block, k)), block.shape[0])[1]
        for block in _index_blocks(k, n_resamples, seed)
    ]
    return _package(names, estimates[0], np.concatenate(blocks), **common)


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    unit: str | None = None,
) -> Uncertainty:
    """Cluster bootstrap of the mean of ``values`` (each row its own unit when ``clusters`` is None)."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if clusters is None:
        clusters, unit = np.arange(values.size), unit or "item"
    rows = np.column_stack([values, np.ones_like(values)])
    result = cluster_bootstrap(
        lambda totals: totals[:, 0] / totals[:, 1],
        clusters,
        rows,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
        unit=unit or "cluster",
    )
    assert isinstance(result, Uncertainty)
    return result


def loop_bootstrap(
    statistic: Callable[[np.ndarray], float | Mapping[str, float]],
    clusters: Sequence[Hashable] | np.ndarray,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    unit: str = "cluster",
) -> Uncertainty | dict[str, Uncertainty]:
    """``statistic(rows)`` of each resample's row indices, one call per resample: the same draws as
    ``cluster_bootstrap``, the reference for the vectorised paths."""
    _check_common(n_resamples, seed, confidence)
    codes, labels = factorize(clusters)
    k = len(labels)
    common = {"unit": unit, "n_units": k, "n_resamples": n_resamples, "seed": seed, "confidence": confidence}
    order = np.argsort(codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=k))])
    members = [order[bounds[i] : bounds[i + 1]] for i in range(k)]

    def evaluate(rows: np.ndarray) -> StatisticResult:
        result = _call(statistic, rows)
        if isinstance(result, Mapping):
            return {name: np.asarray([value], dtype=np.float64) for name, value in result.items()}
        return np.asarray([result], dtype=np.float64)

    try:
        names, estimates = _as_columns(evaluate(np.arange(codes.size)), 1)
    except Exception as error:  # noqa: BLE001 - an empty input may break a statistic: report, never raise
        if k:
            raise
        return _package(None, np.array([np.nan]), None, **common, reason=f"no units ({error})")
    if k < 2:
        return _package(names, estimates[0], None, **common, reason="no units" if k == 0 else None)
    replicates = []
    for block in _index_blocks(k, n_resamples, seed):
        for drawn in block:
            rows = np.concatenate([members[i] for i in drawn])
            replicates.append(_as_columns(evaluate(rows), 1)[1][0])
    return _package(names, estimates[0], np.vstack(replicates), **common)


def _p_value(differences: np.ndarray) -> float | None:
    finite = differences[np.isfinite(differences)]
    if finite.size == 0:
        return None
    below = int(np.count_nonzero(finite <= 0))
    above = int(np.count_nonzero(finite >= 0))
    return min(1.0, 2.0 * (1 + min(below, above)) / (finite.size + 1))


def paired_bootstrap(
    statistic: Callable[[np.ndarray], StatisticResult],
    clusters_a: Sequence[Hashable] | np.ndarray,
    clusters_b: Sequence[Hashable] | np.ndarray,
    values_a: Any,
    values_b: Any,
    *,
    cells_a: Any = None,
    cells_b: Any = None,
    n_cells: int | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    unit: str = "cluster",
) -> Difference | dict[str, Difference]:
    """Paired bootstrap of ``statistic(run B) - statistic(run A)`` (a sums-path statistic), both runs
    resampled by the same units, paired by label (the same set in both runs, in any row order)."""
    _check_common(n_resamples, seed, confidence)
    codes_a, labels_a = factorize(clusters_a)
    codes_b_own, labels_b = factorize(clusters_b)
    position = {label: i for i, label in enumerate(labels_a)}
    k = len(labels_a)
    only_b = [label for label in labels_b if label not in position]
    only_a = len(set(labels_a) - set(labels_b))
    cells_count = n_cells
    if cells_count is None and (cells_a is not None or cells_b is not None):
        cells_count = 1 + max(
            int(np.max(cells)) if cells is not None and np.size(cells) else -1 for cells in (cells_a, cells_b)
        )
    common = {"unit": unit, "n_units": k, "n_resamples": n_resamples, "seed": seed, "confidence": confidence}

    def undefined(reason: str, names: list[str] | None = None, a=None, b=None) -> Any:
        """Differences without a value (each run's estimate when known), saying why."""
        width = 1 if names is None else len(names)
        return _package(names, np.full(width, np.nan), None, reason=reason, pair=(a, b), **common)

    if only_a or only_b:
        return undefined(
            f"the runs do not cover the same {unit}s: {only_a} only in run A, {len(only_b)} only in run B"
        )
    codes_b = np.asarray([position[label] for label in labels_b], dtype=np.int64)[codes_b_own]
    table_a, reason_a = _prepare_values(codes_a, k, values_a, cells_a, cells_count)
    table_b, reason_b = _prepare_values(codes_b, k, values_b, cells_b, cells_count)
    if table_a.shape != table_b.shape:
        raise ValueError(f"the runs' value tables differ in shape: {table_a.shape} vs {table_b.shape}")
    shape = table_a.shape[1:]
    flat_a, flat_b = table_a.reshape(k, int(np.prod(shape))), table_b.reshape(k, int(np.prod(shape)))

    def both(totals_a: np.ndarray, totals_b: np.ndarray) -> tuple[list[str] | None, np.ndarray, np.ndarray]:
        """The statistic of each run's totals: (metric names, run A's values, run B's)."""
        names, a = _as_columns(_call(statistic, totals_a), totals_a.shape[0])
        return names, a, _as_columns(_call(statistic, totals_b), totals_b.shape[0])[1]

    def evaluate(counts: np.ndarray) -> tuple[list[str] | None, np.ndarray, np.ndarray]:
        rows = counts.shape[0]
        return both((counts @ flat_a).reshape(rows, *shape), (counts @ flat_b).reshape(rows, *shape))

    layout = shape[0] if cells_count is not None else None
    try:  # each run's rows summed in order
        names, estimate_a, estimate_b = both(
            data_totals(values_a, cells_a, layout), data_totals(values_b, cells_b, layout)
        )
    except Exception as error:  # noqa: BLE001 - an empty input may break a statistic: report, never raise
        if k:
            raise
        return undefined(f"no units ({error})")
    if k == 0 or reason_a or reason_b:
        reason = (
            "no units"
            if k == 0
            else "; ".join(f"run {run}: {why}" for run, why in (("A", reason_a), ("B", reason_b)) if why)
        )
        return undefined(reason, names)
    estimate_a, estimate_b = estimate_a[0], estimate_b[0]
    if k == 1:
        return undefined("a single unit: no sampling variability to estimate", names, estimate_a, estimate_b)
    blocks = [evaluate(_counts(block, k)) for block in _index_blocks(k, n_resamples, seed)]
    differences = np.concatenate([b - a for _, a, b in blocks])
    return _package(names, estimate_b - estimate_a, differences, pair=(estimate_a, estimate_b), **common)
