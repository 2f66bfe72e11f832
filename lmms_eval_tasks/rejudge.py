"""Judge sensitivity: saved records judged by two cached judges through the benchmark's scorer (previous
annotations removed): agreement, Cohen's kappa, flips, each headline metric's paired interval of B - A."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks import environment

BASE_URL_ENV = "LMMS_EVAL_TASKS_JUDGE_BASE_URL"


@dataclass(frozen=True)
class JudgeSetting:
    """One judge: the scorer options that choose it (``judge``, ``judge_model``, ...) and its endpoint."""

    options: Mapping[str, Any]
    base_url: str | None = None
    checked: Any = None  # the scorer's options object of ``options`` (``Benchmark.check_options``), if built

    @property
    def name(self) -> str:
        return str(self.options.get("judge_model") or self.options.get("judge") or "default judge")


def rejudge_module(benchmark: str) -> Any:
    """The benchmark package's ``rejudge.py``; ValueError (one line) for a benchmark without a judge."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    module = get_benchmark(benchmark).own_module("rejudge")
    if module is None:
        raise ValueError(f"{benchmark} has no judge to change (its package has no rejudge.py)")
    return module


def judged(benchmark: str, records: Sequence[dict[str, Any]], setting: JudgeSetting) -> tuple[Any, list]:
    """((metrics, details), per-item outcomes) of validated ``records`` scored with ``setting``'s judge (its
    options checked here unless ``setting.checked`` holds them)."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    module = rejudge_module(benchmark)
    entry = get_benchmark(benchmark)
    options = setting.checked or entry.check_options(**setting.options)
    fresh = [{k: v for k, v in copy.deepcopy(r).items() if k not in module.ANNOTATIONS} for r in records]
    with environment.overridden(BASE_URL_ENV, setting.base_url):  # the scorers read it from there
        metrics, details = entry.score_with(fresh, options)
    return (metrics, details), [module.outcome(record) for record in fresh]


def failed_calls(details: Mapping[str, Any]) -> tuple[int, str | None]:
    """(judge calls that got no reply, the last one's reason) from a scorer's ``details["judging"]``: a failed
    call says nothing about the item and must not pass silently."""
    judging = details.get("judging") if isinstance(details, Mapping) else None
    batches = [judging] if isinstance(judging, Mapping) and "counts" in judging else []
    if isinstance(judging, Mapping) and not batches:
        batches = [batch for batch in judging.values() if isinstance(batch, Mapping) and "counts" in batch]
    failed, reason = 0, None
    for batch in batches:
        failed += int((batch.get("counts") or {}).get("unjudged") or 0)
        for entry in batch.get("unjudged") or []:
            if isinstance(entry, Mapping) and entry.get("error"):
                reason = str(entry["error"])
    return failed, reason


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    """Cohen's kappa of two binary raters: (p_o - p_e) / (1 - p_e); None when p_e = 1 (both constant)."""
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    share_a, share_b = sum(a) / n, sum(b) / n
    expected = share_a * share_b + (1 - share_a) * (1 - share_b)
    return None if expected == 1 else (observed - expected) / (1 - expected)


def kappa_undefined(a: Sequence[bool], b: Sequence[bool]) -> str | None:
    """Why ``cohen_kappa(a, b)`` is None, in a line (the result file says it next to the null); else None."""
    if not a:
        return "undefined: no item was judged by both judges"
    if len(set(a)) == 1 and set(a) == set(b):
        verdict = "accept" if a[0] else "reject"
        return (
            f"undefined: both judges {verdict} every one of the {len(a)} items, so chance agreement is 1 and "
            "kappa = (p_o - p_e) / (1 - p_e) is 0/0; agreement says how far they agree"
        )
    return None


def rejudge(
    benchmark: str,
    records: Sequence[dict[str, Any]],
    judge_a: JudgeSetting,
    judge_b: JudgeSetting,
    *,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Judge ``records`` with A (the run's judge) and B (the new one) and compare (JSON-ready dict). The
    records are validated and both settings' options checked by the caller (``lmms-eval-tasks rejudge``)."""
    from lmms_eval_tasks.framework.intervals import RESAMPLING, paired_resamplings

    module = rejudge_module(benchmark)
    if judge_a.name == judge_b.name:
        raise ValueError(
            f"judge A and judge B are both {judge_a.name}: the judge cache keys replies by model name (not "
            "endpoint), so B would reuse A's replies; compare two different models"
        )
    (metrics_a, details_a), outcomes_a = judged(benchmark, records, judge_a)
    (metrics_b, details_b), outcomes_b = judged(benchmark, records, judge_b)
    both = [(i, x, y) for i, (x, y) in enumerate(zip(outcomes_a, outcomes_b, strict=True))]
    compared = [(i, x, y) for i, x, y in both if x is not None and y is not None]
    flips = [
        {"index": i, "item": module.item_label(records[i]), judge_a.name: x, judge_b.name: y}
        for i, x, y in compared
        if x != y
    ]
    differences: dict[str, Any] = {}
    rows_a, rows_b = details_a.get(RESAMPLING), details_b.get(RESAMPLING)
    if rows_a is not None and rows_b is not None:
        result = paired_resamplings(rows_a, rows_b, resamples, seed)
        for metric in module.COMPARED_METRICS:
            if metric in result:
                d = result[metric]
                differences[metric] = {
                    judge_a.name: d.estimate_a, judge_b.name: d.estimate_b, "difference": d.estimate,
                    "low": d.low, "high": d.high, "p_value": d.p_value, "unit": rows_a.unit,
                }  # fmt: skip
    n = len(compared)
    unjudged_a = {i for i, x, _ in both if x is None}
    unjudged_b = {i for i, _, y in both if y is None}
    caveat = None
    if unjudged_a != unjudged_b:
        caveat = (
            f"{judge_a.name} left {len(unjudged_a)} items unjudged, {judge_b.name} {len(unjudged_b)} "
            f"({len(unjudged_a ^ unjudged_b)} judged by one judge only): each metric leaves its own judge's "
            "unjudged items out, so the metric difference includes leaving different items out; agreement "
            "and flips count only the items both judged"
        )
    failures = {judge_a.name: failed_calls(details_a), judge_b.name: failed_calls(details_b)}
    failed = {name: count for name, (count, _) in failures.items()}
    incomplete = None
    if any(failed.values()):
        reasons = [why for count, why in failures.values() if count and why]
        reason = reasons[-1] if reasons else "unknown"
        counts = ", ".join(f"{name} {count}" for name, count in failed.items())
        incomplete = (
            f"INCOMPLETE: judge calls failed ({counts}; last error: {reason}); their items are left out of "
            "that judge's agreement, flips and metrics. Fix the cause and rerun the same command: the judge "
            "cache keeps every reply, so only the missing items are asked"
        )
    verdicts_a, verdicts_b = [x for _, x, _ in compared], [y for _, _, y in compared]
    return {
        "benchmark": benchmark,
        "complete": incomplete is None,
        "failed_judge_calls": failed,
        "incomplete": incomplete,
        "judge_a": {"name": judge_a.name, "options": dict(judge_a.options)},
        "judge_b": {"name": judge_b.name, "options": dict(judge_b.options)},
        "items": len(records),
        "judged_by_both": n,
        "unjudged_by_either": len(both) - n,
        "agreement": None if n == 0 else sum(x == y for _, x, y in compared) / n,
        "cohen_kappa": cohen_kappa(verdicts_a, verdicts_b),
        "cohen_kappa_undefined": kappa_undefined(verdicts_a, verdicts_b),
        "flips": flips,
        "metrics": {judge_a.name: _headline(metrics_a, module), judge_b.name: _headline(metrics_b, module)},
        "difference": differences,
        "difference_rule": "judge B minus judge A; 95% paired bootstrap interval over the scorer's units",
        "difference_caveat": caveat,
        # each judge's self-test (docs/judges.md): its false-accept / false-reject rates, probes and replies
        "judge_self_test": {judge_a.name: _self_test(details_a), judge_b.name: _self_test(details_b)},
    }


def _self_test(details: Mapping[str, Any]) -> dict[str, Any] | None:
    judging = details.get("judging")
    return judging.get("self_test") if isinstance(judging, Mapping) else None


def _headline(metrics: Mapping[str, Any], module: Any) -> dict[str, Any]:
    return {metric: metrics.get(metric) for metric in module.COMPARED_METRICS}
