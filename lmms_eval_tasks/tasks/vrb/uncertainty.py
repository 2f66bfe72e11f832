"""VRB standard errors: the cluster bootstrap by image of the overall and clean accuracy, the relative
drop, the five sub-metrics (mean over the complete corruptions) and the single-model VRE, all functions of
each resample's whole accuracy curves (per-level sums of the records' VQA accuracies)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.vrb.scoring import CLEAN, SUB_METRICS, _AnswerCache, resolve_weights, sub_metrics
from lmms_eval_tasks.uncertainty import UNITS


def record_accuracies(records: list[dict[str, Any]], protocol: str = "paper") -> np.ndarray:
    """Each record's VQA accuracy under ``protocol`` (records already validated by ``score_records``)."""
    cache = _AnswerCache(protocol)
    out = np.empty(len(records))
    for i, record in enumerate(records):
        qid, answers = record["question_id"], record["answers"]
        known = cache.answer_counts(qid, answers) or cache.add_question(qid, answers)
        out[i] = cache.accuracy(
            known[0], known[1], len(answers), record["multiple_choice_answer"], record["prediction"] or ""
        )
    return out


def uncertainty_rows(
    records: list[dict[str, Any]],
    protocol: str = "paper",
    weights: Any = None,
    preferences: Any = None,
    details: bool = True,
) -> Rows:
    """One row per record, unit: its image (``image_id``; records without one fall back to the question,
    noted), cell: its corruption level; values (accuracy, 1)."""
    accuracy = record_accuracies(records, protocol)
    levels = [
        (CLEAN, 0) if r["severity"] == 0 else (str(r["corruption"]), int(r["severity"])) for r in records
    ]
    corruptions = sorted({name for name, severity in levels if severity > 0})
    order = [(CLEAN, 0)] + [(name, s) for name in corruptions for s in range(1, 6)]
    position = {level: i for i, level in enumerate(order)}
    codes = np.asarray([position[level] for level in levels], dtype=np.int64)
    present = set(levels)
    complete = (
        [c for c in corruptions if all((c, s) in present for s in range(1, 6))]
        if (CLEAN, 0) in present
        else []
    )
    complete_index = [corruptions.index(c) for c in complete]
    weight_vector = resolve_weights(weights, preferences)
    with_image = all(record.get("image_id") is not None for record in records)
    units = [r["image_id"] if with_image else r["question_id"] for r in records]
    note = (
        None if with_image else "records carry no image_id: resampled by question (ignores the shared image)"
    )
    values = np.column_stack([accuracy, np.ones_like(accuracy)])

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        sums, counts = totals[..., 0], totals[..., 1]
        with np.errstate(all="ignore"):
            level_accuracy = sums / counts  # [R, levels]
        out = {"accuracy": sums.sum(axis=1) / counts.sum(axis=1), "accuracy_clean": level_accuracy[:, 0]}
        if not complete:
            return out
        rows = totals.shape[0]
        by = level_accuracy[:, 1:].reshape(rows, len(corruptions), 5)[:, complete_index]
        curves = np.concatenate([np.repeat(level_accuracy[:, None, :1], len(complete), axis=1), by], axis=2)
        raw = sub_metrics(curves)
        for key in SUB_METRICS:
            out[key] = raw[key].mean(axis=1)
        clean, mean = level_accuracy[:, 0], raw["accuracy_average"].mean(axis=1)
        out["accuracy_average"] = mean
        out["relative_accuracy_drop"] = np.where(
            clean > 0, (clean - mean) / np.where(clean > 0, clean, 1), np.nan
        )
        if len(complete) >= 2:
            stacked = np.stack([raw[key] for key in SUB_METRICS], axis=-1)  # [R, C, 5]
            finite = np.isfinite(stacked)
            low = np.where(finite, stacked, np.inf).min(axis=1, keepdims=True)
            high = np.where(finite, stacked, -np.inf).max(axis=1, keepdims=True)
            spread = high - low
            scaled = np.where(spread > 0, (stacked - low) / np.where(spread > 0, spread, 1.0), 0.0)
            scaled = np.where(finite, scaled, np.nan)
            out["vre"] = scaled.mean(axis=1) @ weight_vector
        return out

    # the corruption profile and seed name the image a record saw: runs corrupted differently never pair
    identity = [
        f"{r['question_id']}@{level[0]}:{level[1]}|{r.get('profile')}|{r.get('seed')}"
        for r, level in zip(records, levels, strict=True)
    ]
    unit = UNITS["vrb"] if with_image else "question"
    return Rows(units, values, statistic, unit, codes, len(order), identity=identity, note=note)
