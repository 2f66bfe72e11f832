"""ConTextual standard errors: the official normal (Wald) interval of every acceptance rate (the paper's
analysis prints it for the overall rate; the pack gives each scenario rate the same, analytic, per item)
with one judge repeat, else the bootstrap by item averaged over repeats as the scorer does; ROUGE-L by
bootstrap."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.contextual import scoring
from lmms_eval_tasks.uncertainty import UNITS, Uncertainty, nanmean

_CELL = {name: i for i, name in enumerate(scoring.CATEGORIES)}
_VERDICT = {"Yes": True, "No": False, None: None, True: True, False: False}


def _outcomes(records: list[dict[str, Any]], options: dict[str, Any]) -> tuple[list, list, list[str]]:
    """Per item: verdicts per repeat, ROUGE-L (0-1 or None), category; from the hooks' annotations when
    present, else from ``scoring.evaluate`` (supplied verdicts, or the judge's cache)."""
    items = scoring.parse_items(records)
    categories = [item.category for item in items]
    if records and all(isinstance(r.get("judge_verdicts"), list) and "rouge_l" in r for r in records):
        # the hooks annotate "Yes"/"No"/None (Evaluation.per_item): bool("No") would count as accepted
        verdicts = [[_VERDICT[v] for v in r["judge_verdicts"]] for r in records]
        return verdicts, [r["rouge_l"] for r in records], categories
    evaluation = scoring.evaluate(records, **options)
    rouge = evaluation.rouge or [None] * len(items)
    return evaluation.verdicts, rouge, categories


def uncertainty_rows(records: list[dict[str, Any]], **options: Any) -> Rows:
    """One row per item (unit: item), cell = its category; values per repeat (accepted, judged, ROUGE-L,
    ROUGE-L defined) with ROUGE-L in the first repeat's slot only."""
    if options.pop("submission", False):
        raise ValueError("a submission task has no verdicts: no standard errors")
    options.pop("expected_rows", None)
    protocol = options.get("protocol", "default")
    verdicts, rouge, categories = _outcomes(records, options)
    repeats = max(len(row) for row in verdicts)
    values = np.zeros((len(records), repeats, 4))
    for i, row in enumerate(verdicts):
        for r, verdict in enumerate(row):
            if verdict is not None:
                values[i, r, 0:2] = (float(bool(verdict)), 1.0)
        if rouge[i] is not None:
            values[i, 0, 2:4] = (float(rouge[i]), 1.0)
    codes = np.asarray([_CELL[c] for c in categories], dtype=np.int64)
    pools = {
        "natural": scoring.NATURAL_SCENARIOS,
        "digital": scoring.DIGITAL_SCENARIOS,
        **{name: (name,) for name in scoring.SCENARIOS},
    }
    masks = {
        name: np.asarray([scoring.CATEGORY_SCENARIO[c] in members for c in scoring.CATEGORIES], dtype=float)
        for name, members in pools.items()
    }
    st, est = _CELL["stvqa"], _CELL["estvqa"]

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:  # totals [R, cells, repeats, 4]
        accepted, judged = totals[..., 0], totals[..., 1]
        with np.errstate(all="ignore"):
            out = {"acceptance_rate": nanmean(100 * accepted.sum(1) / judged.sum(1), axis=1)}
            for name, mask in masks.items():
                rate = 100 * np.einsum("rcp,c->rp", accepted, mask) / np.einsum("rcp,c->rp", judged, mask)
                out[f"acceptance_rate_{name}"] = nanmean(rate, axis=1)
            if protocol == "official":
                rate = 100 * (accepted[:, st] + accepted[:, est]) / (2 * judged[:, st])
                out["acceptance_rate_misc_natural_scenes"] = nanmean(rate, axis=1)
            out["rouge_l"] = 100 * totals[:, :, 0, 2].sum(1) / totals[:, :, 0, 3].sum(1)
        return out

    closed: dict[str, Uncertainty] = {}
    if repeats == 1:  # every rate's interval as the scorer computes it (rate_counts, normal_interval)
        counts = scoring.rate_counts(categories, [row[0] if row else None for row in verdicts], protocol)
        for name, (accepted, judged) in counts.items():
            if judged <= 0:
                continue
            low, high = scoring.normal_interval(accepted, judged)
            if low is None:  # a rate above 100 (official Misc. denominator): no proportion, no interval
                closed[name] = Uncertainty(
                    100.0 * accepted / judged, None, None, None, "normal", UNITS["contextual"], int(judged),
                    reason=f"{accepted} accepted of a denominator of {judged}: a rate above 100% has no "
                    "normal interval (the official analysis prints NaN)",
                )  # fmt: skip
                continue
            share = max(0.0, accepted / judged)
            stderr = 100.0 * math.sqrt(share * (1 - share) / judged)
            closed[name] = Uncertainty(
                100.0 * accepted / judged, stderr, low, high, "normal", UNITS["contextual"], int(judged),
                reason="the official normal (Wald) interval, clipped to [0, 100]",
            )  # fmt: skip
    ids = [str(r.get("image_url", i)) + "|" + str(r.get("instruction", "")) for i, r in enumerate(records)]
    return Rows(ids, values, statistic, UNITS["contextual"], codes, len(scoring.CATEGORIES),
                identity=ids, closed_form=closed)  # fmt: skip
