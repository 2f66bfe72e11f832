"""TallyQA scoring (counting; simple vs complex questions), as in "Revisiting MLLM Evaluation".

Answer parsing: a number ("3", "3.", "2.5"), a number word ("zero" .. "fifteen" and beyond: "twenty",
"twenty-one", "one hundred"), "none" / "no" -> 0; anything else is unparsed (wrong, and counted).
Metrics per split, keys prefixed ``simple_`` / ``complex_`` (percent unless stated):
``micro_accuracy``; ``macro_accuracy`` = mean accuracy over the true-count buckets 0, 1, 2, 3, 4+ present;
``rmse`` = sqrt(mean((clip(prediction, 0, 15) - answer)^2)) over parsed predictions (a count, not percent);
``accuracy_count_<n>`` per true count (the paper's Figs. 8-9; ``plot_accuracy_by_count`` draws it);
``unparsed`` and ``questions``. ``micro_accuracy`` without prefix is over both splits.

``protocol=official`` reproduces ``eval_script/TallyQA_eval.py`` with its ``normalize_answer.py``:
every "." and space is deleted before parsing (so "2.5" reads as 25), only "zero" .. "fifteen", "none" and
"no" are number words, and the script's "RMSE" is the mean squared error without the square root: that
value is reported as ``<split>_mse`` (no ``rmse`` key under this protocol).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from operator import itemgetter
from pathlib import Path
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.tasks.revisiting.scoring import (
    check_options,
    check_protocol,
    judged_records,
    mean,
    per_question_correct_for,
    percent,
    prediction_text,
)

SPLITS = (("simple", True), ("complex", False))
BUCKETS = ("0", "1", "2", "3", "4+")
CLIP_MAX = 15

_WORDS_TO_FIFTEEN = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
)
_OFFICIAL_WORDS = {word: value for value, word in enumerate(_WORDS_TO_FIFTEEN.split())}
_OFFICIAL_WORDS.update({"none": 0, "no": 0})
_UNITS = {word: value for word, value in _OFFICIAL_WORDS.items() if value < 10 and word not in ("none", "no")}
_TEENS = {
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_MAX_DIGITS = 300  # longer numbers are read as infinity (clipped to 15 like any large count)
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")
_TRAILING = " \t\r\n.!?,;:\"'"


def _words_value(text: str) -> int | None:
    """Value of an English number below 1000 in words ("twenty-one", "one hundred and five"), else None."""
    words = [word for word in re.split(r"[\s-]+", text) if word and word != "and"]
    if words == ["zero"]:
        return 0
    total = 0
    if len(words) >= 2 and words[1] == "hundred" and words[0] in _UNITS and _UNITS[words[0]] > 0:
        total = 100 * _UNITS[words[0]]
        words = words[2:]
    if not words:
        return total or None
    if len(words) == 1 and words[0] in _TEENS:
        return total + _TEENS[words[0]]
    if len(words) == 1 and words[0] in _UNITS and _UNITS[words[0]] > 0:
        return total + _UNITS[words[0]]
    if words[0] in _TENS and len(words) <= 2:
        if len(words) == 1:
            return total + _TENS[words[0]]
        if words[1] in _UNITS and _UNITS[words[1]] > 0:
            return total + _TENS[words[0]] + _UNITS[words[1]]
    return None


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
    value = _words_value(cleaned)
    return None if value is None else float(value)


def bucket(count: int) -> str:
    """The macro-accuracy bucket of a true count: "0", "1", "2", "3" or "4+"."""
    return str(count) if count < 4 else "4+"


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
    """Per record: question_id, split, answer, parsed prediction (None = unparsed), correct."""
    protocol = check_protocol(protocol)
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


def _split_metrics(items: list[dict[str, Any]], prefix: str, protocol: str) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    metrics[f"{prefix}_micro_accuracy"] = percent(sum(item["correct"] for item in items), len(items))
    buckets: dict[str, list[bool]] = defaultdict(list)
    counts: dict[int, list[bool]] = defaultdict(list)
    for item in items:
        buckets[bucket(item["answer"])].append(item["correct"])
        counts[item["answer"]].append(item["correct"])
    bucket_accuracy = {
        name: percent(sum(buckets[name]), len(buckets[name])) for name in BUCKETS if name in buckets
    }
    metrics[f"{prefix}_macro_accuracy"] = mean(list(bucket_accuracy.values()))
    errors = []
    for item in items:
        if item["parsed"] is None:
            continue
        if protocol == "official":
            predicted = min(item["parsed"], CLIP_MAX)
        else:
            predicted = min(max(item["parsed"], 0), CLIP_MAX)
        errors.append((float(predicted) - float(item["answer"])) ** 2)
    squared = mean(errors)
    if protocol == "official":
        metrics[f"{prefix}_mse"] = squared
    else:
        metrics[f"{prefix}_rmse"] = math.sqrt(squared) if errors else float("nan")
    for name, value in bucket_accuracy.items():
        metrics[f"{prefix}_accuracy_bucket_{name}"] = value
    for count in sorted(counts):
        metrics[f"{prefix}_accuracy_count_{count}"] = percent(sum(counts[count]), len(counts[count]))
        metrics[f"{prefix}_questions_count_{count}"] = len(counts[count])
    metrics[f"{prefix}_unparsed"] = sum(item["parsed"] is None for item in items)
    metrics[f"{prefix}_questions"] = len(items)
    return metrics


def score_records(records: Iterable[dict[str, Any]], *, protocol: str = "default") -> dict[str, Any]:
    """TallyQA metrics (see the module docstring); ``protocol`` "default" or "official"."""
    records, judged = judged_records(records, protocol, judge_records)
    metrics: dict[str, Any] = {}
    for prefix, _ in SPLITS:
        items = [item for item in judged if item["split"] == prefix]
        if items:
            metrics.update(_split_metrics(items, prefix, protocol))
    metrics["micro_accuracy"] = percent(sum(item["correct"] for item in judged), len(judged))
    metrics["unparsed"] = sum(item["parsed"] is None for item in judged)
    metrics["questions"] = len(judged)
    metrics["protocol"] = protocol
    return metrics


per_question_correct = per_question_correct_for(
    judge_records, "tallyqa", itemgetter("correct")
)


def accuracy_by_count(metrics: dict[str, Any]) -> dict[str, dict[int, float]]:
    """``{split: {true count: accuracy}}`` from ``score_records`` output (the data of Figs. 8-9)."""
    table: dict[str, dict[int, float]] = {}
    for prefix, _ in SPLITS:
        marker = f"{prefix}_accuracy_count_"
        table[prefix] = {
            int(key[len(marker) :]): value for key, value in metrics.items() if key.startswith(marker)
        }
    return table


def plot_accuracy_by_count(metrics: dict[str, Any], path: str | Path, title: str = "TallyQA") -> Path:
    """Accuracy by true count, one line per split (PNG, matplotlib Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = accuracy_by_count(metrics)
    figure, axes = plt.subplots(figsize=(6, 3.5), dpi=100)
    for split, values in table.items():
        if values:
            counts = sorted(values)
            axes.plot(counts, [values[count] for count in counts], marker="o", label=split)
    axes.set_xlabel("true count")
    axes.set_ylabel("accuracy (%)")
    axes.set_ylim(0, 100)
    axes.set_title(f"{title}: accuracy by true count")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path)
    plt.close(figure)
    return path


__all__ = [
    "check_options",
    "BUCKETS",
    "accuracy_by_count",
    "bucket",
    "judge_records",
    "parse_count",
    "per_question_correct",
    "plot_accuracy_by_count",
    "score_records",
]


def score_task(records: Iterable[dict[str, Any]], **options: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one scoring path (harness and ``score``): the metrics, and the accuracy by true count."""
    metrics = score_records(records, **options)
    return metrics, {"accuracy_by_count": accuracy_by_count(metrics)}
