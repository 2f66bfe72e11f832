"""Helpers that turn judge replies into JSON-safe per-sample logs and result metadata."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lmms_eval_tasks.judges.base import Judge, JudgeReply


def replies_log(replies: Sequence[JudgeReply]) -> dict[str, Any]:
    """One item's replies for per-sample logs: text and error per repeat, cache flags, unjudged count."""
    return {
        "judge_replies": [reply.text for reply in replies],
        "judge_errors": [reply.error for reply in replies],
        "judge_cached": [reply.cached for reply in replies],
        "judge_unjudged_repeats": sum(1 for reply in replies if reply.text is None),
    }


def repeat_spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """Mean, sample standard deviation (n-1; 0 for one repeat), min and max of a metric across repeats."""
    values = [float(value) for value in values]
    if not values:
        return {"n": 0, "mean": None, "std": None, "min": None, "max": None}
    mean = sum(values) / len(values)
    variance = sum((value - mean) ** 2 for value in values) / (len(values) - 1) if len(values) > 1 else 0.0
    return {
        "n": len(values),
        "mean": mean,
        "std": math.sqrt(variance),
        "min": min(values),
        "max": max(values),
    }


def judge_metadata(judge: Judge) -> dict[str, Any]:
    """What results should record about the judge: its settings and this run's usage and cost."""
    return {"judge": judge.describe(), "judge_usage": judge.usage()}
