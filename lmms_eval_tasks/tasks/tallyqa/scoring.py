"""TallyQA scoring ("Revisiting MLLM Evaluation"): a parsed count (else unparsed, wrong); per split micro,
macro, RMSE of clipped counts, accuracy by count; the official "RMSE" is an MSE (``<split>_mse``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.registry import scorer
from lmms_eval_tasks.tasks.revisiting.scoring import (
    BUCKETS,
    ProtocolOptions,
    cardinal_words,
    count_bucket,
    judged_records,
    per_question_correct_for,
    prediction_text,
)
from lmms_eval_tasks.uncertainty.resampling import (
    Resampling,
    cell_codes,
    group_matrix,
    ordered_sum,
    percent,
    present_mean,
)

SPLITS = (("simple", True), ("complex", False))
CLIP_MAX = 15
UNIT = "question"  # the resampling unit: questions are independent

# The official script's number words: "zero" .. "fifteen", "none" and "no".
_OFFICIAL_WORDS = {cardinal_words(value): value for value in range(16)} | {"none": 0, "no": 0}
_MAX_DIGITS = 300  # longer numbers are read as infinity (clipped to 15 like any large count)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_TRAILING = " \t\r\n.!?,;:\"'"


@scorer(ProtocolOptions)
def score(
    records: Iterable[dict[str, Any]], options: ProtocolOptions
) -> tuple[dict[str, Any], dict[str, Any]]:
    """TallyQA metrics (see the module docstring) and details: the accuracy by true count and the
    ``resampling`` the rates come from."""
    protocol = options.protocol
    records, judged = judged_records(records, protocol, judge_records)
    resampling = resampling_of(judged, protocol)
    rates = resampling.estimate()
    metrics: dict[str, Any] = {}
    for prefix, _ in SPLITS:
        items = [item for item in judged if item["split"] == prefix]
        if not items:
            continue
        metrics.update({key: value for key, value in rates.items() if key.startswith(f"{prefix}_")})
        for count in sorted({item["answer"] for item in items}):
            metrics[f"{prefix}_questions_count_{count}"] = sum(item["answer"] == count for item in items)
        metrics[f"{prefix}_unparsed"] = sum(item["parsed"] is None for item in items)
        metrics[f"{prefix}_questions"] = len(items)
    metrics["micro_accuracy"] = rates["micro_accuracy"]
    metrics["unparsed"] = sum(item["parsed"] is None for item in judged)
    metrics["questions"] = len(judged)
    metrics["protocol"] = protocol
    details = {"accuracy_by_count": accuracy_by_count(metrics), "resampling": resampling}
    undefined = undefined_reasons(metrics)
    return metrics, {**details, "undefined": undefined} if undefined else details


def undefined_reasons(metrics: dict[str, Any]) -> dict[str, str]:
    """Why a split's (R)MSE has no value: no prediction of the split parsed as a number."""
    reasons = {}
    for split, _ in SPLITS:
        for key in (f"{split}_rmse", f"{split}_mse"):
            value = metrics.get(key)
            if isinstance(value, float) and math.isnan(value):
                unparsed, questions = metrics[f"{split}_unparsed"], metrics[f"{split}_questions"]
                reasons[key] = (
                    f"no {split} prediction parsed as a number: {unparsed:g} of {questions:g} unparsed"
                )
    return reasons


def resampling_of(judged: list[dict[str, Any]], protocol: str) -> Resampling:
    """Every rate's one definition: one row per question, cell = (split, true count), values (correct, 1,
    parsed, squared clipped error); per split micro, macro over buckets 0-4+, (R)MSE, per-bucket/count."""
    split_index = {split: s for s, (split, _) in enumerate(SPLITS)}
    keys = [(split_index[item["split"]], item["answer"]) for item in judged]
    codes, cells = cell_codes(keys, sorted(set(keys)))
    values = []
    for item in judged:
        parsed = item["parsed"]
        if parsed is None:
            error = 0.0
        else:
            predicted = min(parsed, CLIP_MAX) if protocol == "official" else min(max(parsed, 0), CLIP_MAX)
            error = (float(predicted) - float(item["answer"])) ** 2
        values.append([float(item["correct"]), 1.0, float(parsed is not None), error])
    table = np.asarray(values, dtype=np.float64).reshape(-1, 4)
    splits = []
    for s, (split, _) in enumerate(SPLITS):
        members = [c for c, (cell_split, _) in enumerate(cells) if cell_split == s]
        if members:
            buckets = [name for name in BUCKETS if any(count_bucket(cells[c][1]) == name for c in members)]
            to_bucket = group_matrix([cells[c] for c in members], lambda cell: count_bucket(cell[1]), buckets)
            splits.append((split, np.asarray(members), buckets, to_bucket))

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for split, members, buckets, to_bucket in splits:
            hits, counts = totals[:, members, 0], totals[:, members, 1]
            parsed, squared = ordered_sum(totals[:, members, 2]), ordered_sum(totals[:, members, 3])
            out[f"{split}_micro_accuracy"] = percent(ordered_sum(hits), ordered_sum(counts))
            by_bucket = percent(hits @ to_bucket, counts @ to_bucket)
            out[f"{split}_macro_accuracy"] = present_mean(by_bucket)
            with np.errstate(all="ignore"):
                mse = np.where(parsed > 0, squared / np.where(parsed > 0, parsed, 1.0), np.nan)
            if protocol == "official":
                out[f"{split}_mse"] = mse
            else:
                out[f"{split}_rmse"] = np.sqrt(mse)
            for j, name in enumerate(buckets):
                out[f"{split}_accuracy_bucket_{name}"] = by_bucket[:, j]
            by_count = percent(hits, counts)
            for j, c in enumerate(members):
                out[f"{split}_accuracy_count_{cells[c][1]}"] = by_count[:, j]
        out["micro_accuracy"] = percent(ordered_sum(totals[..., 0]), ordered_sum(totals[..., 1]))
        return out

    ids = [item["question_id"] for item in judged]
    return Resampling(ids, table, statistic, UNIT, codes, len(cells), identity=ids)


def _number_words(text: str) -> tuple[str, ...]:
    """The words of a number written out, hyphens and "and" dropped: "one hundred and twenty-one" ->
    ("one", "hundred", "twenty", "one")."""
    return tuple(word for word in re.split(r"[\s-]+", text) if word and word != "and")


# Every English number below 1000 in words (num2words' spelling, ``cardinal_words``), by its words.
_WORDS_BELOW_1000 = {_number_words(cardinal_words(value)): value for value in range(1000)}


def parse_count(text: str, protocol: str = "default") -> float | None:
    """The count a model answered (a float: 3.0, 2.5), or None when unparsed (module docstring: both
    protocols)."""
    if protocol == "official":
        compact = text.strip().replace(".", "").replace(" ", "").lower()
        if compact.isnumeric():
            if len(compact) > _MAX_DIGITS:
                return float("inf")  # what int() would give the script, without the quadratic conversion
            try:
                return float(int(compact))
            except ValueError:  # e.g. "½": numeric but not an int; the official script crashes here
                return None
        word = _OFFICIAL_WORDS.get(compact)
        return None if word is None else float(word)
    cleaned = text.strip().lower().strip(_TRAILING)
    if not cleaned:
        return None
    if _NUMBER.fullmatch(cleaned):
        return float(cleaned) if len(cleaned) <= _MAX_DIGITS else float("inf")
    if cleaned in ("none", "no", "zero"):
        return 0.0
    value = _WORDS_BELOW_1000.get(_number_words(cleaned))
    return None if value is None else float(value)


def _answer(record: dict[str, Any], index: int) -> int:
    value = require_field(record, "answer", index, (int, str))
    if isinstance(value, bool):
        raise RecordError(index, "answer", f"expected a count, got bool {value!r}")
    if isinstance(value, str):
        if not value.strip().isdigit():
            raise RecordError(index, "answer", f"expected a non-negative integer count, got {value!r}")
        value = int(value.strip())
    if value < 0:
        raise RecordError(index, "answer", f"expected a non-negative count, got {value}")
    return value


def judge_records(records: Sequence[dict[str, Any]], protocol: str = "default") -> list[dict[str, Any]]:
    """Per record: question_id, split, answer, parsed prediction (None = unparsed), correct. ``protocol``
    checked by ``ProtocolOptions``."""
    judged = []
    for index, record in enumerate(records):
        question_id = require_field(record, "question_id", index, (str, int))
        simple = require_field(record, "issimple", index, bool)
        answer = _answer(record, index)
        parsed = parse_count(prediction_text(record, index), protocol)
        judged.append(
            {
                "question_id": str(question_id),
                "split": "simple" if simple else "complex",
                "answer": answer,
                "parsed": parsed,
                "correct": parsed is not None and parsed == answer,
            }
        )
    return judged


per_question_correct = per_question_correct_for(judge_records, "tallyqa", itemgetter("correct"))


def accuracy_by_count(metrics: dict[str, Any]) -> dict[str, dict[int, float]]:
    """``{split: {true count: accuracy}}`` from ``score`` output (the data of Figs. 8-9)."""
    table: dict[str, dict[int, float]] = {}
    for prefix, _ in SPLITS:
        marker = f"{prefix}_accuracy_count_"
        table[prefix] = {
            int(key[len(marker) :]): value for key, value in metrics.items() if key.startswith(marker)
        }
    return table


def plot_accuracy_by_count(metrics: dict[str, Any], path: str | Path, title: str = "TallyQA") -> Path:
    """Accuracy by true count, one line per split, as a PNG drawn as the report draws its line plots."""
    from lmms_eval_tasks.reporting.sections import lines

    series = {
        split: (sorted(values), [values[count] for count in sorted(values)])
        for split, values in accuracy_by_count(metrics).items()
        if values
    }
    path = Path(path)
    plot = lines(f"{title}: accuracy by true count", path.name, series, "true count", "accuracy (%)")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(plot.png)
    return path
