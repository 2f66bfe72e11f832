"""DVQA standard errors: the cluster bootstrap by question of micro/macro accuracy and the accuracy of
each question family, from the scorer's own per-question judgements."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.dvqa.scoring import TEMPLATES, judge_records
from lmms_eval_tasks.tasks.revisiting.uncertainty import cell_codes, percent, present_mean
from lmms_eval_tasks.uncertainty import UNITS


def uncertainty_rows(records: list[dict[str, Any]], *, protocol: str = "default") -> Rows:
    """One row per question (unit: question), cell = its template family."""
    judged = judge_records(records, protocol)
    codes, cells = cell_codes([template for _, template, _ in judged], TEMPLATES)
    values = np.asarray([[float(correct), 1.0] for *_, correct in judged]).reshape(-1, 2)

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        hits, counts = totals[..., 0], totals[..., 1]
        accuracy = percent(hits, counts)
        out = {
            "micro_accuracy": percent(hits.sum(axis=1), counts.sum(axis=1)),
            "macro_accuracy": present_mean(accuracy),
        }
        for j, name in enumerate(cells):
            if np.any(codes == j):
                out[f"accuracy_{name}"] = accuracy[:, j]
        return out

    ids = [question_id for question_id, *_ in judged]
    return Rows(ids, values, statistic, UNITS["dvqa"], codes, len(cells), identity=ids)
