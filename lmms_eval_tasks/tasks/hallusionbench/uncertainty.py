"""HallusionBench standard errors: the cluster bootstrap by figure group (category, subcategory, set_id)
of aAcc, fAcc, qAcc, their mean and the LH/VI/Mixed diagnosis shares, averaged over judge repeats as the
scorer does. Questions, figures and question pairs are rows of their figure group, so a figure or pair
enters a resample whole, with the other questions about the same figures."""

from __future__ import annotations

from typing import Any

import numpy as np

from lmms_eval_tasks.framework.uncertainty import Rows
from lmms_eval_tasks.tasks.hallusionbench import scoring
from lmms_eval_tasks.uncertainty import UNITS, nanmean

# value columns per repeat: (hits, judged) for aAcc, fAcc, qAcc; then LH, VI, Mixed indicators
_COLUMNS = 9
_DIAGNOSES = ("LH", "VI", "Mixed")


def _outcomes(records: list[dict[str, Any]], options: dict[str, Any]) -> tuple[list, list]:
    """Per question: correctness and diagnosis name per repeat; from the hooks' annotations when present,
    else from ``scoring.evaluate`` (supplied verdicts, or the judge's cache)."""
    if records and all(isinstance(r.get("correct"), list) and "diagnosis" in r for r in records):
        return [r["correct"] for r in records], [
            r["diagnosis"] or [None] * len(r["correct"]) for r in records
        ]
    evaluation = scoring.evaluate(records, **options)
    names = [
        [None if t is None else scoring.DIAGNOSIS_NAMES[tuple(t)] for t in row]
        for row in evaluation.diagnosis
    ]
    return evaluation.correct, names


def uncertainty_rows(records: list[dict[str, Any]], **options: Any) -> Rows:
    """Rows: every question (aAcc, diagnosis), figure (fAcc) and question pair (qAcc), unit: figure group."""
    vlmevalkit_annotated = any("yes_no_match_reply" in record for record in records)  # hooks' vlmevalkit run
    if options.get("variant", "official") != "official" or vlmevalkit_annotated:
        raise ValueError("standard errors cover the official variant only (variant=vlmevalkit has none yet)")
    questions = scoring.parse_questions(records)
    structure = scoring.build_structure(questions)
    correct, diagnosis = _outcomes(records, options)
    repeats = max(len(row) for row in correct)
    group = [(q.category, q.subcategory, q.set_id) for q in questions]
    units: list[Any] = []
    values: list[np.ndarray] = []
    for i in range(len(questions)):
        row = np.zeros((repeats, _COLUMNS))
        for r in range(repeats):
            value = correct[i][r] if r < len(correct[i]) else None
            if value is not None:
                row[r, 0:2] = (float(value), 1.0)
            name = diagnosis[i][r] if r < len(diagnosis[i]) else None
            if name in _DIAGNOSES:
                row[r, 6 + _DIAGNOSES.index(name)] = 1.0
        units.append(group[i])
        values.append(row)
    for column, members_list in ((2, structure.figures[""]), (4, structure.pairs[""])):
        for members in members_list:
            row = np.zeros((repeats, _COLUMNS))
            for r in range(repeats):
                outcome = [correct[i][r] if r < len(correct[i]) else None for i in members]
                if all(value is not None for value in outcome):
                    row[r, column : column + 2] = (float(all(value == 1 for value in outcome)), 1.0)
            units.append(group[members[0]])
            values.append(row)

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        with np.errstate(all="ignore"):
            shares = 100.0 * totals[..., 0:6:2] / totals[..., 1:6:2]  # [R, repeat, 3]
            found = totals[..., 6:9]
            diagnosed = found.sum(axis=-1, keepdims=True)
            diagnosis_shares = np.where(
                diagnosed > 0, 100.0 * found / np.where(diagnosed > 0, diagnosed, 1), np.nan
            )
            overall = shares.mean(axis=-1)
            out = {
                name: nanmean(shares[..., m], axis=1) for m, name in enumerate(("aAcc", "fAcc", "qAcc"))
            }
            out["overall"] = nanmean(overall, axis=1)
            for d, name in enumerate(_DIAGNOSES):
                out[name] = nanmean(diagnosis_shares[..., d], axis=1)
        return out

    identity = ["/".join(q.question_key) for q in questions]
    return Rows(units, np.asarray(values), statistic, UNITS["hallusionbench"], identity=identity)
