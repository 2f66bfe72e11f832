"""Why a metric has no value: the reason shown next to ``n/a`` in the demo summary and the report.

A metric is undefined when its formula has nothing to work on (no parsed prediction for an RMSE, a clean
accuracy of 0 under a relative drop, no question of a type). Scores store such values as ``null`` in the
pack's report JSON (NaN in the host's results); ``undefined_reason`` names the cause from the report's own
numbers, so readers see ``n/a (no simple prediction parsed as a number: 8 of 8 unparsed)`` rather than
``nan``. A reason recorded by the scorer (``details.undefined[metric]``) wins; the benchmark rules here
come next, then the uncertainty engine's (``details.uncertainty[metric].reason``), then generic ones.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

NOT_AVAILABLE = "n/a"


def is_undefined(value: Any) -> bool:
    """True for None and non-finite floats (what ``n/a`` stands for)."""
    return value is None or (isinstance(value, float) and not math.isfinite(value))


def _number(metrics: Mapping[str, Any], key: str) -> float | None:
    value = metrics.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _from_scorer(report: Mapping[str, Any], metric: str) -> str | None:
    """A reason the scorer wrote into the report for ``metric`` (``details.undefined``)."""
    undefined = (report.get("details") or {}).get("undefined")
    if isinstance(undefined, Mapping) and isinstance(undefined.get(metric), str):
        return undefined[metric]
    return None


def _from_uncertainty(report: Mapping[str, Any], metric: str) -> str | None:
    """The uncertainty engine's reason for ``metric`` (or for the value a ``<metric>_stderr`` belongs to)."""
    base = metric.removesuffix("_stderr")
    block = uncertainty_of(report, base)
    if isinstance(block, Mapping) and isinstance(block.get("reason"), str):
        if base != metric or block.get("estimate") is None:
            return block["reason"]
    return None


def uncertainty_of(report: Mapping[str, Any], metric: str) -> Mapping[str, Any] | None:
    """The uncertainty record of ``metric`` (``details.uncertainty``, or a top-level ``uncertainty``)."""
    for holder in (report.get("details") or {}, report):
        block = (holder.get("uncertainty") or {}).get(metric) if isinstance(holder, Mapping) else None
        if isinstance(block, Mapping):
            return block
    return None


def _vrb_reason(metric: str, metrics: Mapping[str, Any], report: Mapping[str, Any]) -> str | None:
    clean = _number(metrics, "accuracy_clean")
    if metric in {"accuracy_clean", "relative_accuracy_drop", "first_drop", "vre"} and clean is None:
        return "no clean level (severity 0) scored in this run"
    details = report.get("details") or {}
    if (
        metric != "relative_accuracy_drop"
        and "complete_corruptions" in details
        and not details["complete_corruptions"]
    ):
        return "needs a complete corruption (clean + severities 1-5); none is complete in this run"
    if metric == "relative_accuracy_drop" and clean == 0:
        return "clean accuracy is 0, so a drop relative to it is undefined: 0/0"
    if metric == "first_drop" and clean == 1:
        return "clean error is 0, so the first drop relative to it is undefined"
    if metric == "range_of_error":
        return "a corruption's lowest error over its levels is 0, so the range relative to it is undefined"
    notes = [note for note in details.get("robustness_notes") or [] if note.startswith(f"{metric}:")]
    return "; ".join(notes) or None


def _split_reason(metric: str, metrics: Mapping[str, Any]) -> str | None:
    """TallyQA ``<split>_rmse``: no prediction of the split parsed as a number."""
    match = re.fullmatch(r"(simple|complex)_rmse", metric)
    if not match:
        return None
    split = match.group(1)
    questions = _number(metrics, f"{split}_questions")
    unparsed = _number(metrics, f"{split}_unparsed")
    if questions == 0:
        return f"no {split} question in this run"
    if questions is not None and unparsed is not None:
        return f"no {split} prediction parsed as a number: {unparsed:g} of {questions:g} unparsed"
    return f"no {split} prediction parsed as a number"


def undefined_reason(benchmark: str, metric: str, report: Mapping[str, Any] | None) -> str:
    """Why ``metric`` of ``benchmark`` has no value in ``report`` (a pack report dict; None when unknown)."""
    report = report or {}
    metrics = report.get("metrics") or {}
    recorded = _from_scorer(report, metric)
    if recorded:
        return recorded
    if metrics and metric not in metrics and not metric.endswith("_stderr"):
        if (report.get("details") or {}).get("submission_files"):
            return "a leaderboard submission of an unjudged split: predictions only, not scored here"
        return "this task does not compute it"
    reason = (
        (_vrb_reason(metric, metrics, report) if benchmark == "vrb" else None)
        or _split_reason(metric, metrics)
        or _from_uncertainty(report, metric)
    )
    if reason:
        return reason
    if re.fullmatch(r"f1_\d+", metric):
        return f"no question with {metric[3:]} target box(es) in this run"
    if metric.startswith("accuracy_") or metric.startswith("acceptance_rate_"):
        return "no question of this kind in this run"
    if metric in {"macro_f1", "macro_accuracy"} or metric.endswith("_macro_accuracy"):
        return "no class with questions in this run"
    if metric.endswith("_stderr"):
        return "no standard error recorded for this metric (the value it belongs to may be undefined)"
    questions = _number(metrics, "questions")
    if questions == 0:
        return "no question was scored"
    return "the scorer gave no value for this run and recorded no reason"


def not_available(reason: str) -> str:
    """``n/a (reason)`` for an undefined value (reason omitted when empty)."""
    return f"{NOT_AVAILABLE} ({reason})" if reason else NOT_AVAILABLE
