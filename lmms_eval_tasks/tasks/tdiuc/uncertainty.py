"""TDIUC standard errors: the cluster bootstrap by question of every headline metric (micro/macro accuracy,
harmonic and normalised MPT, per-type accuracies), from the scorer's own per-question judgements."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.revisiting.uncertainty import (
    cell_codes,
    group_matrix,
    percent,
    present_harmonic,
    present_mean,
)
from lmms_eval_tasks.tasks.tdiuc.scoring import QUESTION_TYPES, judge_records, normalize
from lmms_eval_tasks.uncertainty import UNITS


def uncertainty_rows(records: list[dict[str, Any]], *, protocol: str = "default") -> Rows:
    """One row per question (unit: question), cell = (question type, normalised label)."""
    judged = judge_records(records, protocol)
    keys = [(question_type, normalize(label, protocol)) for _, question_type, label, _ in judged]
    codes, cells = cell_codes(keys)
    types = [name for name in QUESTION_TYPES if any(cell[0] == name for cell in cells)]
    to_type = group_matrix(cells, lambda cell: cell[0], types)
    values = np.asarray([[float(correct), 1.0] for *_, correct in judged]).reshape(-1, 2)

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        hits, counts = totals[..., 0], totals[..., 1]  # [R, cells]
        accuracy = percent(hits @ to_type, counts @ to_type)  # [R, types]
        cell_accuracy = percent(hits, counts)
        normalized = np.stack(
            [present_mean(np.where(to_type[:, j] > 0, cell_accuracy, np.nan)) for j in range(len(types))],
            axis=-1,
        )
        out = {"micro_accuracy": percent(hits.sum(axis=1), counts.sum(axis=1))}
        if protocol == "official":
            out["macro_accuracy"] = np.nansum(accuracy, axis=1) / len(QUESTION_TYPES)
        else:
            out["macro_accuracy"] = present_mean(accuracy)
        out["harmonic_mpt"] = present_harmonic(accuracy)
        out["normalized_arithmetic_mpt"] = present_mean(normalized)
        out["normalized_harmonic_mpt"] = present_harmonic(normalized)
        for j, name in enumerate(types):
            out[f"accuracy_{name}"] = accuracy[:, j]
        return out

    return Rows(
        units=[question_id for question_id, *_ in judged],
        values=values,
        statistic=statistic,
        unit=UNITS["tdiuc"],
        cells=codes,
        n_cells=len(cells),
        identity=[question_id for question_id, *_ in judged],
    )
