"""DARE standard errors: the cluster bootstrap by question of every headline metric. A question (single and
multi: its ``id``; single_var: its instance, all option-set variants) is asked under several prompts and
formats, so its records enter a resample whole: the mean and std over prompts and the worst case over
option sets are computed from each resample's whole per-prompt cells, as the scorer computes them."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.dare.scoring import (
    FORMATS,
    GOLD_COUNTS,
    PROMPTS,
    _f1,
    _primary_format,
    check_options,
    record_identity,
    score_record,
    scored_records,
)
from lmms_eval_tasks.uncertainty import UNITS

# cells: single prompts 0-2, single_var prompts 3-5, multi (prompt, #gold) 6-20, every record's unparsed 21
_SINGLE, _VAR, _MULTI, _UNPARSED = 0, 3, 6, 6 + 3 * len(GOLD_COUNTS)
N_CELLS = _UNPARSED + 1
# value columns: hit, counted, F1, unparsed
_COLUMNS = 4


def _prompt_mean_std(values: np.ndarray, ddof: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std over the prompts present (finite) per resample, as ``scoring._mean``/``_std``."""
    finite = np.isfinite(values)
    n = finite.sum(axis=1)
    filled = np.where(finite, values, 0.0)
    mean = np.where(n > 0, filled.sum(axis=1) / np.maximum(n, 1), np.nan)
    squares = np.where(finite, (values - mean[:, None]) ** 2, 0.0).sum(axis=1)
    std = np.where((n >= 2) & (n - ddof > 0), np.sqrt(squares / np.maximum(n - ddof, 1)), np.nan)
    return mean, std


def uncertainty_rows(records: list[dict[str, Any]], primary_format: str = "gen", std_ddof: int = 0) -> Rows:
    """Rows: single records (cell = prompt), single_var instances per prompt (all variants right), multi
    standard questions (cell = prompt x #gold; binary records combined), one unparsed row per record;
    unit: the question (``category``/``id``, single_var ``category``/``instance_id``)."""
    check_options(primary_format, std_ddof)
    verdicts = [score_record(record, index) for index, record in scored_records(records)]

    def question(verdict: Any) -> str:
        name = verdict.instance_id if verdict.setup == "single_var" else verdict.question_id
        return f"{verdict.setup}/{verdict.category}/{name}"

    def primary(setup: str, standard_only: bool = False) -> str | None:
        formats = {
            v.answer_format
            for v in verdicts
            if v.setup == setup and not (standard_only and v.variant != "standard")
        }
        return _primary_format([f for f in FORMATS if f in formats], primary_format)

    single_format, var_format, multi_format = primary("single"), primary("single_var"), primary("multi", True)
    units: list[str] = []
    cells: list[int] = []
    values: list[tuple[float, float, float, float]] = []
    instances: dict[tuple[str, int], bool] = {}
    for verdict in verdicts:
        units.append(question(verdict))
        cells.append(_UNPARSED)
        values.append((0.0, 0.0, 0.0, float(verdict.parsed.status == "unparsed")))
        if verdict.setup == "single" and verdict.answer_format == single_format:
            units.append(question(verdict))
            cells.append(_SINGLE + verdict.prompt - 1)
            values.append((float(verdict.correct), 1.0, 0.0, 0.0))
        elif verdict.setup == "single_var" and verdict.answer_format == var_format:
            key = (question(verdict), verdict.prompt)
            instances[key] = instances.get(key, True) and verdict.correct
        elif (
            verdict.setup == "multi"
            and verdict.variant == "standard"
            and verdict.answer_format == multi_format
        ):
            # a standard multi record is one whole question (binary records are the "binary" variant)
            answered = verdict.parsed.status != "unparsed" and not verdict.contradictory
            units.append(question(verdict))
            cells.append(_MULTI + (verdict.prompt - 1) * len(GOLD_COUNTS) + len(verdict.gold))
            f1 = _f1(verdict.predicted, verdict.gold) if answered else 0.0
            values.append((float(verdict.correct), 1.0, f1, 0.0))
    for (unit, prompt), correct in instances.items():
        units.append(unit)
        cells.append(_VAR + prompt - 1)
        values.append((float(correct), 1.0, 0.0, 0.0))
    present = {
        "single": single_format is not None,
        "single_var": var_format is not None,
        "multi": multi_format is not None,
    }

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:  # totals [R, cells, columns]
        hits, counted, f1 = totals[..., 0], totals[..., 1], totals[..., 2]
        with np.errstate(all="ignore"):
            out: dict[str, np.ndarray] = {}
            if present["single"]:
                by_prompt = 100 * hits[:, _SINGLE:_VAR] / counted[:, _SINGLE:_VAR]
                out["single_accuracy"], out["single_accuracy_std_over_prompts"] = _prompt_mean_std(
                    by_prompt, std_ddof
                )
            if present["single_var"]:
                out["single_var_accuracy"] = _prompt_mean_std(
                    100 * hits[:, _VAR:_MULTI] / counted[:, _VAR:_MULTI], std_ddof
                )[0]
            if present["multi"]:
                shape = (totals.shape[0], len(PROMPTS), len(GOLD_COUNTS))
                m_hits = hits[:, _MULTI:_UNPARSED].reshape(shape)
                m_counted = counted[:, _MULTI:_UNPARSED].reshape(shape)
                for count in GOLD_COUNTS:
                    exact = 100 * m_hits[..., count] / m_counted[..., count]
                    out[f"multi_exact_k{count}"] = _prompt_mean_std(exact, std_ddof)[0]
                f1_by_prompt = 100 * f1[:, _MULTI:_UNPARSED].reshape(shape).sum(-1) / m_counted.sum(-1)
                out["multi_f1"] = _prompt_mean_std(f1_by_prompt, std_ddof)[0]
            out["unparsed"] = totals[:, _UNPARSED, 3]
        return out

    identity = ["|".join(str(part) for part in record_identity(record)) for record in records]
    return Rows(
        units,
        np.asarray(values, dtype=np.float64).reshape(-1, _COLUMNS),
        statistic,
        UNITS["dare"],
        np.asarray(cells, dtype=np.int64),
        N_CELLS,
        identity=identity,
    )
