"""DVQA scoring, as in "Revisiting MLLM Evaluation": exact match after normalisation, accuracy per template,
micro and macro, in percent; decimals kept unless ``protocol=official`` (docs/revisiting.md, "DVQA")."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Any

import numpy as np

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.registry import scorer
from lmms_eval_tasks.tasks.revisiting.scoring import (
    ProtocolOptions,
    choice_field,
    closing_counts,
    digits_to_words,
    judged_records,
    official_digits_to_words,
    per_question_correct_for,
    prediction_text,
)
from lmms_eval_tasks.uncertainty.resampling import (
    Resampling,
    cell_codes,
    ordered_sum,
    percent,
    present_mean,
)

TEMPLATES = ("structure", "data", "reasoning")
UNIT = "question"  # the resampling unit: questions are independent
_PERIOD_NOT_DECIMAL = re.compile(r"\.(?!\d)")  # a "." followed by a digit is a decimal point: kept


@scorer(ProtocolOptions)
def score(
    records: Iterable[dict[str, Any]], options: ProtocolOptions
) -> tuple[dict[str, Any], dict[str, Any]]:
    """DVQA metrics in percent (see the module docstring) and details (the ``resampling`` the accuracies
    come from)."""
    protocol = options.protocol
    records, judged = judged_records(records, protocol, judge_records)
    resampling = resampling_of(judged)
    metrics: dict[str, Any] = resampling.estimate()
    for name in TEMPLATES:
        count = sum(template == name for _, template, _ in judged)
        if count:
            metrics[f"questions_{name}"] = count
    return closing_counts(metrics, records, judged, protocol), {"resampling": resampling}


def resampling_of(judged: list[tuple[str, str, bool]]) -> Resampling:
    """The accuracies' one definition: one row per question (unit: question), cell = its template,
    values (correct, 1); micro accuracy over all, macro = mean over the templates present."""
    codes, cells = cell_codes([template for _, template, _ in judged], TEMPLATES)
    values = np.asarray([[float(correct), 1.0] for *_, correct in judged]).reshape(-1, 2)
    present = [j for j in range(len(cells)) if np.any(codes == j)]

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        hits, counts = totals[..., 0], totals[..., 1]
        accuracy = percent(hits, counts)
        out = {f"accuracy_{cells[j]}": accuracy[:, j] for j in present}
        out["micro_accuracy"] = percent(ordered_sum(hits), ordered_sum(counts))
        out["macro_accuracy"] = present_mean(accuracy)
        return out

    ids = [question_id for question_id, *_ in judged]
    return Resampling(ids, values, statistic, UNIT, codes, len(cells), identity=ids)


def normalize(text: str, protocol: str = "default") -> str:
    """Spaces removed, lower case, periods removed (default: except before a digit), digits in words."""
    compact = text.strip().replace(" ", "").lower()
    if protocol == "official":
        return official_digits_to_words(compact.replace(".", ""), powers_of_ten=True)
    return digits_to_words(_PERIOD_NOT_DECIMAL.sub("", compact))


def is_correct(prediction: str, answer: str, protocol: str = "default") -> bool:
    """Exact match of the normalised prediction and answer."""
    return normalize(prediction, protocol) == normalize(answer, protocol)


def _answer(record: dict[str, Any], index: int) -> str:
    value = require_field(record, "answer", index, (str, int, float))
    if isinstance(value, bool):
        raise RecordError(index, "answer", f"expected text, got bool {value!r}")
    return value if isinstance(value, str) else str(value)


def judge_records(
    records: Sequence[dict[str, Any]], protocol: str = "default"
) -> list[tuple[str, str, bool]]:
    """Per record: (question_id, template_id, correct); RecordError on bad fields. ``protocol`` checked by
    ``ProtocolOptions``."""
    judged = []
    for index, record in enumerate(records):
        question_id = require_field(record, "question_id", index, (str, int))
        template = choice_field(record, "template_id", index, TEMPLATES, "DVQA template")
        answer = _answer(record, index)
        judged.append(
            (str(question_id), template, is_correct(prediction_text(record, index), answer, protocol))
        )
    return judged


per_question_correct = per_question_correct_for(judge_records, "dvqa", itemgetter(2))
