"""Paired comparison of two runs of the same task: per-question correctness (``Behaviour.per_question``)
paired by record identity, McNemar's test; an unjudged (``None``) question is counted as ``excluded``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, read_jsonl
from lmms_eval_tasks.uncertainty.result import McNemar as McNemarResult

ALPHA = 0.05
_SHOWN_IDS = 5


# ``compare --test`` choices -> the McNemar variant of ``lmms_eval_tasks.uncertainty.mcnemar``.
TESTS = {
    "auto": "auto",
    "exact": "exact",
    "asymptotic": "corrected",
    "uncorrected": "uncorrected",
    "paper": "paper",
}
# What the paper's variant tests (the others are two-sided), printed next to its p-value.
PAPER_SIDEDNESS = "one-sided: alternative = the run with more discordant wins (`better`) is the more accurate"


def mcnemar(b01: int, b10: int, *, exact: bool | None = None, variant: str | None = None) -> McNemarResult:
    """McNemar's test of ``uncertainty.mcnemar``: a ``variant`` by name, or ``exact`` True (exact binomial),
    False (asymptotic, continuity-corrected), None (exact below 25 discordant pairs)."""
    from lmms_eval_tasks.uncertainty.mcnemar import mcnemar as uncertainty_mcnemar

    if variant is None:
        variant = {None: "auto", True: "exact", False: "corrected"}[exact]
    elif exact is not None:
        raise ValueError("give either exact or variant, not both")
    return uncertainty_mcnemar(b01, b10, variant=variant)


def correctness_by_id(
    ids: Iterable[Any],
    correct: Iterable[bool | None],
    id_field: str = "question_id",
    indices: Iterable[int | str] | None = None,
) -> dict[str, bool | None]:
    """``{str(id): correct}`` from parallel sequences; a repeated id raises RecordError naming both records
    (``indices``: the record numbers for messages)."""
    ids = list(ids)
    indices = range(len(ids)) if indices is None else indices
    result: dict[str, bool | None] = {}
    first_index: dict[str, int | str] = {}
    for index, question_id, value in zip(indices, ids, correct, strict=True):
        key = str(question_id)
        if key in result:
            raise RecordError(
                index, id_field, f"duplicate question id {key!r} (also record {first_index[key]})"
            )
        first_index[key] = index
        result[key] = None if value is None else bool(value)
    return result


def samples_in_folder(path: Path, task: str) -> Path:
    """The samples file of ``task``'s latest complete run under ``path`` or in its one model folder."""
    from lmms_eval_tasks.reporting.schema import task_files

    found = task_files(path, task).get("samples")
    if found is not None:
        return found
    below = [
        files["samples"]
        for child in sorted(entry for entry in path.iterdir() if entry.is_dir())
        if "samples" in (files := task_files(child, task))
    ]
    if len(below) == 1:
        return below[0]
    if below:
        listed = ", ".join(str(item) for item in below)
        raise FileNotFoundError(f"several runs of {task!r} under {path} ({listed}): name one of the files")
    present = sorted({item.name[: -len("_samples.jsonl")] for item in path.rglob("*_samples.jsonl")})
    some = f" (tasks with records under it: {', '.join(present[:8])})" if present else ""
    raise FileNotFoundError(f"no samples file for task {task!r} under {path}{some}")


def load_run(path: str | Path, task: str | None = None) -> list[dict[str, Any]]:
    """Records of one run: a samples JSON-lines file, or a folder plus ``task`` (its latest complete run)."""
    path = Path(path)
    if path.is_dir():
        if not task:
            raise FileNotFoundError(f"{path} is a folder: name the task (--task) to read its samples file")
        path = samples_in_folder(path, task)
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    records = read_jsonl(path)
    if not records:
        raise RecordError("-", "<file>", f"{path} holds no records")
    return records


def _difference_message(only_a: Sequence[str], only_b: Sequence[str]) -> str:
    parts = []
    for label, ids in (("only in run A", only_a), ("only in run B", only_b)):
        if ids:
            shown = ", ".join(repr(i) for i in sorted(ids)[:_SHOWN_IDS])
            more = f" and {len(ids) - _SHOWN_IDS} more" if len(ids) > _SHOWN_IDS else ""
            parts.append(f"{len(ids)} {label} ({shown}{more})")
    return (
        "the two runs do not score the same questions: "
        + "; ".join(parts)
        + " (compare runs of the same task on the same data, e.g. without different --limit values)"
    )


def compare_correctness(
    correct_a: dict[str, bool | None],
    correct_b: dict[str, bool | None],
    *,
    exact: bool | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    """Pair two ``{question_id: correct}`` maps and run McNemar's test (ValueError if the id sets differ)."""
    only_a = [key for key in correct_a if key not in correct_b]
    only_b = [key for key in correct_b if key not in correct_a]
    if only_a or only_b:
        raise ValueError(_difference_message(only_a, only_b))
    if not correct_a:
        raise ValueError("no questions to compare")
    pairs = Counter((a, correct_b[key]) for key, a in correct_a.items())  # (A correct, B correct): count
    both_right = pairs[True, True]
    both_wrong = pairs[False, False]
    b01 = pairs[False, True]
    b10 = pairs[True, False]
    excluded = sum(count for pair, count in pairs.items() if None in pair)
    paired = both_right + both_wrong + b01 + b10
    if paired == 0:
        raise ValueError(f"none of the {len(correct_a)} questions is scored in both runs")
    test = mcnemar(b01, b10, exact=exact, variant=variant)
    return {
        "questions": paired,
        "excluded": excluded,
        "accuracy_a": 100.0 * (both_right + b10) / paired,
        "accuracy_b": 100.0 * (both_right + b01) / paired,
        "both_correct": both_right,
        "both_wrong": both_wrong,
        "b01": b01,
        "b10": b10,
        "statistic": test.statistic,
        "p_value": test.p_value,
        "method": test.method,
        "variant": test.variant,
        "sided": PAPER_SIDEDNESS if test.variant == "paper" else "two-sided",
        "better": test.better,
        "alpha": ALPHA,
        "significant": test.p_value < ALPHA,
    }


def compare_runs(
    benchmark: str,
    records_a: Sequence[dict[str, Any]],
    records_b: Sequence[dict[str, Any]],
    *,
    exact: bool | None = None,
    variant: str | None = None,
    options: Mapping[str, Any] | None = None,
    checked: Any = None,
) -> dict[str, Any]:
    """Re-score both runs per question (the same scorer ``options``, or ``checked`` when built) and compare
    them; accuracies are percentages over the paired questions (DARE: records, not its headline cells)."""
    from lmms_eval_tasks.framework.registry import get_benchmark

    options = dict(options or {})
    entry = get_benchmark(benchmark)
    per_question = entry.loaded.per_question
    if per_question is None:
        raise ValueError(
            f"benchmark {benchmark!r} has no per-question correctness (Behaviour.per_question is None), "
            "so two runs cannot be compared question by question"
        )
    checked = checked or entry.check_options(**options)
    correct = []
    for run, records in (("A", records_a), ("B", records_b)):
        entry.validate(list(records), label=lambda index, run=run: f"run {run} {index}")
    for run, records in (("A", records_a), ("B", records_b)):
        try:
            correct.append(per_question.checked(list(records), checked))
        except RecordError as error:
            raise RecordError(f"run {run} {error.record_index}", error.field, error.problem) from None
    result = compare_correctness(*correct, exact=exact, variant=variant)
    return {"benchmark": benchmark, "options": options, **result}
