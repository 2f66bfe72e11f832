"""Result records of the uncertainty engine: an estimate with its standard error and interval, a paired
difference, a McNemar test. Frozen, with ``as_dict()`` giving JSON-safe values (None, never NaN)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any


def check_confidence(confidence: float) -> None:
    """ValueError unless ``0 < confidence < 1``."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 < confidence < 1:
        raise ValueError(f"confidence must be a number strictly between 0 and 1, got {confidence!r}")


def finite_or_none(value: Any) -> float | None:
    """``float(value)`` when it is a finite number, else None (NaN, infinities and None become None)."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


class _JsonSafe:
    def as_dict(self) -> dict[str, Any]:
        """The fields as a JSON-safe dict (non-finite numbers become None)."""
        return {k: finite_or_none(v) if isinstance(v, float) else v for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Uncertainty(_JsonSafe):
    """A point estimate with its standard error and a two-sided ``confidence`` interval by ``method``
    (docs/uncertainty.md); numbers that cannot be computed are None, and ``reason`` says why."""

    estimate: float | None
    stderr: float | None
    low: float | None
    high: float | None
    method: str
    unit: str
    n_units: int
    n_resamples: int | None = None
    seed: int | None = None
    confidence: float = 0.95
    reason: str | None = None
    undefined_resamples: int = 0


@dataclass(frozen=True)
class Difference(_JsonSafe):
    """A paired difference ``estimate_b - estimate_a`` with its bootstrap interval and two-sided p-value
    (twice the smaller side's share of resampled differences, ties on both, ``(1 + k) / (R + 1)``, <= 1)."""

    estimate: float | None
    stderr: float | None
    low: float | None
    high: float | None
    p_value: float | None
    estimate_a: float | None
    estimate_b: float | None
    method: str
    unit: str
    n_units: int
    n_resamples: int | None = None
    seed: int | None = None
    confidence: float = 0.95
    reason: str | None = None
    undefined_resamples: int = 0


@dataclass(frozen=True)
class McNemar(_JsonSafe):
    """McNemar's test on the discordant counts (``b01``: A wrong, B right; ``b10``: A right, B wrong);
    ``better``: the run with more discordant wins ("a" or "b"), None on a tie."""

    statistic: float
    p_value: float
    method: str
    variant: str
    b01: int
    b10: int
    better: str | None
