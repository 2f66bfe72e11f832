"""VQDv1 standard errors: the cluster bootstrap by query of micro/macro F1 and the mean F1 of each
box-count bucket, from the scorer's own per-query F1 (both protocols' definitions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.revisiting.uncertainty import cell_codes, percent, present_mean
from lmms_eval_tasks.tasks.vqdv1.scoring import BUCKETS, score_queries
from lmms_eval_tasks.uncertainty import UNITS


def uncertainty_rows(records: list[dict[str, Any]], **options: Any) -> Rows:
    """One row per query (unit: query), values (F1, 1); cell = box-count bucket (official: box count)."""
    protocol = options.get("protocol", "default")
    scores = score_queries(records, **options)
    values = np.asarray([[score.f1, 1.0] for score in scores], dtype=np.float64).reshape(-1, 2)
    ids = [score.question_id for score in scores]
    if protocol != "official":
        codes, cells = cell_codes([score.bucket for score in scores], BUCKETS)

        def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
            bucket_f1 = percent(totals[..., 0], totals[..., 1])
            out = {
                "micro_f1": percent(totals[..., 0].sum(axis=1), totals[..., 1].sum(axis=1)),
                "macro_f1": present_mean(bucket_f1),
            }
            for j, name in enumerate(cells):
                out[f"f1_{name}"] = bucket_f1[:, j]
            return out

        return Rows(ids, values, statistic, UNITS["vqdv1"], codes, len(cells), identity=ids)
    codes, counts = cell_codes([score.n_gt for score in scores], sorted({score.n_gt for score in scores}))
    small = np.asarray([count < 5 for count in counts])

    def official(totals: np.ndarray) -> dict[str, np.ndarray]:
        per_count = percent(totals[..., 0], totals[..., 1]) / 100.0  # [R, counts], NaN when absent
        present = np.isfinite(per_count)
        last = np.where(present.any(axis=1), present.shape[1] - 1 - np.argmax(present[:, ::-1], axis=1), 0)
        largest = per_count[np.arange(per_count.shape[0]), last]
        total = np.where(present & small, per_count, 0.0).sum(axis=1) + largest
        out = {
            "micro_f1": percent(totals[..., 0].sum(axis=1), totals[..., 1].sum(axis=1)),
            "macro_f1": np.where(present.any(axis=1), 100.0 * total / 6, np.nan),
        }
        for count in range(5):
            if count in counts:
                out[f"f1_{count}"] = 100.0 * per_count[:, counts.index(count)]
        return out

    return Rows(ids, values, official, UNITS["vqdv1"], codes, len(counts), identity=ids)
