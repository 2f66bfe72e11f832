"""Closed-form standard errors and intervals (normal, cluster-robust ratio, Wilson; docs/uncertainty.md)
where exact and cheaper than resampling; undefined inputs give None with a reason."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from statistics import NormalDist

import numpy as np

from lmms_eval_tasks.uncertainty.bootstrap import cluster_totals, factorize
from lmms_eval_tasks.uncertainty.result import Uncertainty, check_confidence


def z_value(confidence: float = 0.95) -> float:
    """The standard-normal quantile of a two-sided ``confidence`` interval (1.959964 for 0.95)."""
    check_confidence(confidence)
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def normal_interval(
    estimate: float | None, stderr: float | None, *, confidence: float = 0.95
) -> tuple[float | None, float | None]:
    """``estimate -/+ z * stderr``; (None, None) when either is missing or not finite."""
    z = z_value(confidence)
    if estimate is None or stderr is None or not (math.isfinite(estimate) and math.isfinite(stderr)):
        return None, None
    return estimate - z * stderr, estimate + z * stderr


def _undefined(
    method: str, unit: str, n_units: int, confidence: float, reason: str, estimate: float | None = None
) -> Uncertainty:
    return Uncertainty(
        estimate, None, None, None, method, unit, n_units, confidence=confidence, reason=reason
    )


def mean_uncertainty(
    values: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray | None = None,
    *,
    confidence: float = 0.95,
    unit: str | None = None,
) -> Uncertainty:
    """The mean of ``values`` with its SE: independent items, or cluster-robust by ``clusters``."""
    values = np.asarray(values, dtype=np.float64).reshape(-1)
    if clusters is not None:
        return ratio_uncertainty(values, np.ones_like(values), clusters, confidence=confidence, unit=unit)
    check_confidence(confidence)
    unit = unit or "item"
    n = values.size
    if n == 0:
        return _undefined("normal", unit, 0, confidence, "no items")
    if not np.all(np.isfinite(values)):
        bad = int(np.count_nonzero(~np.isfinite(values)))
        return _undefined("normal", unit, n, confidence, f"{bad} of {n} values are NaN or infinite")
    estimate = float(values.mean())
    if n < 2:
        return _undefined("normal", unit, n, confidence, "a single item: no standard error", estimate)
    stderr = float(values.std(ddof=1) / math.sqrt(n))
    low, high = normal_interval(estimate, stderr, confidence=confidence)
    return Uncertainty(estimate, stderr, low, high, "normal", unit, n, confidence=confidence)


def ratio_uncertainty(
    numerator: Sequence[float] | np.ndarray,
    denominator: Sequence[float] | np.ndarray,
    clusters: Sequence[Hashable] | np.ndarray,
    *,
    confidence: float = 0.95,
    unit: str | None = None,
) -> Uncertainty:
    """``sum(numerator) / sum(denominator)`` with its cluster-robust standard error (see the module doc)."""
    check_confidence(confidence)
    unit = unit or "cluster"
    numerator = np.asarray(numerator, dtype=np.float64).reshape(-1)
    denominator = np.asarray(denominator, dtype=np.float64).reshape(-1)
    codes, labels = factorize(clusters)
    if not numerator.size == denominator.size == codes.size:
        raise ValueError(
            f"numerator, denominator and clusters differ in length ({numerator.size}, {denominator.size}, "
            f"{codes.size})"
        )
    k = len(labels)
    if k == 0:
        return _undefined("analytic", unit, 0, confidence, "no items")
    both = np.column_stack([numerator, denominator])
    if not np.all(np.isfinite(both)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(both), axis=1)))
        return _undefined("analytic", unit, k, confidence, f"{bad} of {codes.size} items have NaN values")
    totals = cluster_totals(codes, k, both)
    y, m = totals[:, 0], totals[:, 1]
    if m.sum() == 0:
        return _undefined("analytic", unit, k, confidence, "the denominator sums to zero")
    estimate = float(y.sum() / m.sum())
    if k < 2:
        return _undefined("analytic", unit, k, confidence, f"a single {unit}: no standard error", estimate)
    residual = y - estimate * m
    stderr = float(math.sqrt(k / (k - 1) * float(residual @ residual)) / m.sum())
    low, high = normal_interval(estimate, stderr, confidence=confidence)
    return Uncertainty(estimate, stderr, low, high, "analytic", unit, k, confidence=confidence)


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95, unit: str = "item") -> Uncertainty:
    """The proportion ``successes / n``, its standard error ``sqrt(p (1 - p) / n)`` and Wilson interval."""
    check_confidence(confidence)
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if successes > n:
        raise ValueError(f"successes ({successes}) exceed n ({n})")
    if n == 0:
        return _undefined("wilson", unit, 0, confidence, "no items")
    z = z_value(confidence)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    stderr = math.sqrt(p * (1 - p) / n)
    low = 0.0 if successes == 0 else max(0.0, centre - half)  # the exact bound (not a rounded 3e-17)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return Uncertainty(p, stderr, low, high, "wilson", unit, int(n), confidence=confidence)


def nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean over ``axis`` ignoring NaN; NaN where every value is NaN (numpy's ``nanmean`` without its
    "Mean of empty slice" warning: an empty category in a resample is expected, not a fault)."""
    present = ~np.isnan(values)
    count = present.sum(axis=axis)
    total = np.where(present, values, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
