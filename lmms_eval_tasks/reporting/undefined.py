"""Why a metric has no value, shown next to ``n/a`` (docs/reports.md): the scorer's reason
(``details.undefined``), else the uncertainty engine's, else a generic one. It knows no benchmark."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

NOT_AVAILABLE = "n/a"


def is_undefined(value: Any) -> bool:
    """True for None and non-finite floats (what ``n/a`` stands for)."""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a finite number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def uncertainty_of(report: Mapping[str, Any], metric: str) -> Mapping[str, Any] | None:
    """The uncertainty record of ``metric`` (``details.uncertainty``, or a top-level ``uncertainty``)."""
    for holder in (report.get("details") or {}, report):
        blocks = holder.get("uncertainty") if isinstance(holder, Mapping) else None
        block = blocks.get(metric) if isinstance(blocks, Mapping) else None
        if isinstance(block, Mapping):
            return block
    return None


def undefined_reason(benchmark: str, metric: str, report: Mapping[str, Any] | None) -> str:
    """Why ``metric`` of ``benchmark`` has no value in ``report`` (a pack report dict; None when unknown)."""
    report = report or {}
    metrics = report.get("metrics") or {}
    recorded = (report.get("details") or {}).get("undefined")  # the scorer's own reasons
    if isinstance(recorded, Mapping) and isinstance(recorded.get(metric), str) and recorded[metric]:
        return recorded[metric]
    if metrics and metric not in metrics and not metric.endswith("_stderr"):
        if (report.get("details") or {}).get("submission_files"):
            return "a leaderboard submission of an unjudged split: predictions only, not scored here"
        return "this task does not compute it"
    # the uncertainty engine's reason for an undefined value, or for the value a standard error belongs to
    block = uncertainty_of(report, metric.removesuffix("_stderr")) or {}
    reason = block.get("reason")
    if reason and isinstance(reason, str) and (metric.endswith("_stderr") or block.get("estimate") is None):
        return reason
    if metric.endswith("_stderr"):
        return "no standard error recorded for this metric (the value it belongs to may be undefined)"
    questions = finite_number(metrics.get("questions"))
    if questions == 0:
        return "no question was scored"
    return "the scorer gave no value for this run and recorded no reason"


def not_available(reason: str) -> str:
    """``n/a (reason)`` for an undefined value (reason omitted when empty)."""
    return f"{NOT_AVAILABLE} ({reason})" if reason else NOT_AVAILABLE
