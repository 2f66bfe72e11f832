"""McNemar's test variants for two runs' per-question correctness (``b01`` = A wrong, B right; formulas in
docs/uncertainty.md); no discordant pair gives statistic 0 and p = 1."""

from __future__ import annotations

import math
from collections.abc import Iterable

from lmms_eval_tasks.uncertainty.result import McNemar

VARIANTS = ("auto", "corrected", "exact", "uncorrected", "paper")
EXACT_BELOW = 25  # compare.py's threshold for the auto variant
_EXACT_INTEGER_UP_TO = 20_000  # exact integer tail sums up to here, scipy's binomial cdf beyond
_METHODS = {
    "corrected": "asymptotic chi-square with continuity correction",
    "exact": "exact binomial (two-sided)",
    "uncorrected": "asymptotic chi-square without continuity correction",
    "paper": "asymptotic, one-sided toward the better run, without continuity correction",
}


def _binomial_lower_tail(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2): exact integer sum (as compare.py), scipy for very large n."""
    if n > _EXACT_INTEGER_UP_TO:
        from scipy.stats import binom

        return float(binom.cdf(k, n, 0.5))
    term, total = 1, 1  # C(n, 0)
    for j in range(k):
        term = term * (n - j) // (j + 1)
        total += term
    return total / 2**n


def mcnemar(b01: int, b10: int, *, variant: str = "auto") -> McNemar:
    """McNemar's test of the discordant counts ``b01`` (A wrong, B right) and ``b10`` (see the module doc)."""
    for name, value in (("b01", b01), ("b10", b10)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown McNemar variant {variant!r}; expected one of {list(VARIANTS)}")
    n = b01 + b10
    if variant == "auto":
        variant = "exact" if n < EXACT_BELOW else "corrected"
    better = "b" if b01 > b10 else "a" if b10 > b01 else None

    def result(statistic: float, p_value: float) -> McNemar:
        return McNemar(float(statistic), float(p_value), _METHODS[variant], variant, b01, b10, better)

    if variant == "exact":
        smaller = min(b01, b10)
        return result(smaller, min(1.0, 2.0 * _binomial_lower_tail(smaller, n)))
    if n == 0:
        return result(0.0, 1.0)
    if variant == "corrected":
        statistic = (abs(b01 - b10) - 1) ** 2 / n
        return result(statistic, math.erfc(math.sqrt(statistic / 2.0)))
    statistic = (b01 - b10) ** 2 / n
    two_sided = math.erfc(math.sqrt(statistic / 2.0))
    return result(statistic, two_sided if variant == "uncorrected" else two_sided / 2.0)


def discordant_counts(correct_a: Iterable[bool | None], correct_b: Iterable[bool | None]) -> tuple[int, int]:
    """``(b01, b10)`` from two parallel sequences of per-question correctness (None entries left out)."""
    pairs = [(bool(a), bool(b)) for a, b in zip(correct_a, correct_b, strict=True) if None not in (a, b)]
    return pairs.count((False, True)), pairs.count((True, False))
