"""TallyQA standard errors: the cluster bootstrap by question of micro/macro accuracy and RMSE per split
and overall micro accuracy, from the scorer's own per-question judgements (RMSE from summed squared
errors of the parsed answers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.revisiting.uncertainty import cell_codes, percent, present_mean
from lmms_eval_tasks.tasks.tallyqa.scoring import BUCKETS, CLIP_MAX, SPLITS, bucket, judge_records
from lmms_eval_tasks.uncertainty import UNITS

CELLS = [(split, name) for split, _ in SPLITS for name in BUCKETS]


def uncertainty_rows(records: list[dict[str, Any]], *, protocol: str = "default") -> Rows:
    """One row per question (unit: question), cell = (split, count bucket); values (correct, 1, parsed,
    squared error of the clipped parsed count)."""
    judged = judge_records(records, protocol)
    codes, _ = cell_codes([(item["split"], bucket(item["answer"])) for item in judged], CELLS)
    values = []
    for item in judged:
        parsed = item["parsed"]
        if parsed is None:
            error = 0.0
        else:
            predicted = min(parsed, CLIP_MAX) if protocol == "official" else min(max(parsed, 0), CLIP_MAX)
            error = (float(predicted) - float(item["answer"])) ** 2
        values.append([float(item["correct"]), 1.0, float(parsed is not None), error])
    values_array = np.asarray(values, dtype=np.float64).reshape(-1, 4)
    present_splits = {item["split"] for item in judged}

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        rows = totals.shape[0]
        by_split = totals.reshape(rows, len(SPLITS), len(BUCKETS), 4)
        out: dict[str, np.ndarray] = {}
        for s, (split, _) in enumerate(SPLITS):
            if split not in present_splits:
                continue
            cells = by_split[:, s]
            out[f"{split}_micro_accuracy"] = percent(cells[..., 0].sum(axis=1), cells[..., 1].sum(axis=1))
            out[f"{split}_macro_accuracy"] = present_mean(percent(cells[..., 0], cells[..., 1]))
            parsed, squared = cells[..., 2].sum(axis=1), cells[..., 3].sum(axis=1)
            with np.errstate(all="ignore"):
                mse = np.where(parsed > 0, squared / np.where(parsed > 0, parsed, 1.0), np.nan)
            out[f"{split}_mse" if protocol == "official" else f"{split}_rmse"] = (
                mse if protocol == "official" else np.sqrt(mse)
            )
        out["micro_accuracy"] = percent(totals[..., 0].sum(axis=1), totals[..., 1].sum(axis=1))
        return out

    ids = [item["question_id"] for item in judged]
    return Rows(ids, values_array, statistic, UNITS["tallyqa"], codes, len(CELLS), identity=ids)
