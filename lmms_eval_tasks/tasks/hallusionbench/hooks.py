"""Thin lmms-eval hooks for the HallusionBench tasks, built with the pack's one hook factory.

All metric logic lives in ``lmms_eval_tasks.tasks.hallusionbench.scoring``. Each task's docs carry its name
(``task_docs.process_docs_<task>``); ``process_results`` turns a document and the model's answer into a
``score`` record; the first aggregation judges and scores the whole task once, annotates the records for
``--log_samples`` and writes the pack's report and the leaderboard file. See docs/hallusionbench.md.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework import hooks as harness
from lmms_eval_tasks.framework.scoring import RecordError
from lmms_eval_tasks.judges.pipeline import JudgingFailed
from lmms_eval_tasks.tasks.hallusionbench import scoring

HF_DATASET = "lmms-lab/HallusionBench"
SAMPLE_NON_IMAGE = Path(__file__).resolve().parent / "sample" / "non_image.parquet"
LEADERBOARD_FILE = "HallusionBench_result.json"
PRIMARY_KEY = "aAcc"


@dataclass(frozen=True)
class TaskSettings:
    """How one task is scored: the variant and the judge kind (None: auto, from the environment)."""

    variant: str
    judge: str | None


TASKS: dict[str, TaskSettings] = {
    "hallusionbench": TaskSettings("official", None),
    "hallusionbench_offline": TaskSettings("official", "rule"),
    "hallusionbench_vlmevalkit": TaskSettings("vlmevalkit", None),
    "hallusionbench_sample": TaskSettings("official", None),
    "hallusionbench_offline_sample": TaskSettings("official", "rule"),
    "hallusionbench_vlmevalkit_sample": TaskSettings("vlmevalkit", None),
}

# What each task lists in YAML (the host's results): the headline metrics. Every other metric (easy/hard,
# bias, consistency, per category and subcategory) is in the pack's report and in `score`.
OFFICIAL_RESULT_KEYS: tuple[str, ...] = (
    "aAcc",
    "fAcc",
    "qAcc",
    "overall",
    "LH",
    "VI",
    "Mixed",
    "unjudged_verdicts",
)
VLMEVALKIT_RESULT_KEYS: tuple[str, ...] = (*scoring.VLMEVALKIT_METRICS, "unjudged_verdicts", "llm_matched")
RESULT_KEYS = {"official": OFFICIAL_RESULT_KEYS, "vlmevalkit": VLMEVALKIT_RESULT_KEYS}
HIGHER_IS_BETTER = frozenset({"aAcc", "fAcc", "qAcc", "overall"})


# ---- documents and prompt ----------------------------------------------------------------------------


def _document_label(doc: dict[str, Any]) -> str:
    """The official question key (category_subcategory_set_figure_question) naming a document in errors."""
    return "_".join(
        str(doc.get(name)) for name in ("category", "subcategory", "set_id", "figure_id", "question_id")
    )


def doc_to_visual(doc: dict[str, Any]) -> list:
    """The question's image as RGB, or no visual at all for the VS no-image questions (visual_input "0").

    A missing image on an image question, or one that cannot be decoded, raises a RecordError naming the
    question and the ``image`` field (the datasets library decodes lazily, so decoding happens here).
    """
    image = doc.get("image")
    if image is None:
        if str(doc.get("visual_input", "")).strip() == "0":
            return []
        raise RecordError(
            _document_label(doc),
            "image",
            f"missing on an image question (visual_input {doc.get('visual_input')!r})",
        )
    try:
        return [image.convert("RGB")]
    except Exception as error:  # PIL raises OSError, ValueError, SyntaxError... on damaged files
        raise RecordError(
            _document_label(doc), "image", f"cannot be decoded ({type(error).__name__}: {error})"
        ) from error


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The raw official question (pre/post prompts default to empty)."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['question']}{kwargs.get('post_prompt', '')}"


def concatenate_non_image(image_split, non_image_split):
    """The image split followed by the non_image split (its questions get ``image`` None): all 1129."""
    from datasets import Dataset, concatenate_datasets

    if any(value == "0" for value in image_split["visual_input"]):
        logger.info(
            "HallusionBench: the split already holds no-image questions; not adding the non_image split"
        )
        return image_split
    rows = []
    for row in non_image_split:
        row = dict(row)
        row["image"] = None
        rows.append({name: row.get(name) for name in image_split.column_names})
    extra = Dataset.from_list(rows, features=image_split.features)
    return concatenate_datasets([image_split, extra])


def process_docs_full(dataset):
    """Add the HF ``non_image`` split (178 VS figure_id "0" questions) to the ``image`` split (951)."""
    from datasets import load_dataset

    return concatenate_non_image(dataset, load_dataset(HF_DATASET, split="non_image"))


def process_docs_sample(dataset):
    """Add the bundled sample's no-image questions to its image questions (the same layout as HF)."""
    from datasets import load_dataset

    return concatenate_non_image(
        dataset, load_dataset("parquet", data_files=str(SAMPLE_NON_IMAGE), split="train")
    )


# ---- per-sample records ------------------------------------------------------------------------------


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """The official fields of ``doc`` plus the model's answer and the task name."""
    record = {name: doc.get(name) for name in scoring.OFFICIAL_FIELDS}
    prediction = results[0] if results else ""
    record["prediction"] = prediction if isinstance(prediction, str) else str(prediction)
    record["task"] = task
    return record


def prepare_docs(dataset: Any, task: str) -> Any:
    """Official-protocol tasks add the no-image questions to the image split (1129, or the sample's 29)."""
    if TASKS[task].variant != "official":
        return dataset
    return process_docs_sample(dataset) if task.endswith("_sample") else process_docs_full(dataset)


def metric_keys(task: str) -> tuple[str, ...]:
    """The keys a task lists in YAML (headline metrics; every metric is in the report and `score`)."""
    return RESULT_KEYS[TASKS[task].variant]


# ---- scoring once per task ---------------------------------------------------------------------------


def _verdict_words(row: list[str | None]) -> list[str | None]:
    return [None if verdict is None else scoring.VERDICT_WORDS[verdict] for verdict in row]


def _annotate(records: list[dict[str, Any]], evaluation: scoring.Evaluation, judge_name: str) -> None:
    """Add verdicts, correctness, consistency and diagnosis per repeat to each record (for --log_samples)."""
    if evaluation.variant == "vlmevalkit":
        kept = [record for record in records if str(record.get("visual_input")) != "0"]
        replies = evaluation.replies.get("yes_no_match", [[None]] * len(kept))
        for offset, record in enumerate(kept):
            record["judge"] = judge_name
            record["extracted_answer"] = evaluation.extracted[offset]
            record["yes_no_match_reply"] = replies[offset][0]
            record["correct"] = evaluation.correct[offset]
        return
    correctness = evaluation.replies.get("correctness")
    consistency = evaluation.replies.get("consistency")
    for offset, record in enumerate(records):
        record["judge"] = judge_name
        record["judge_verdicts"] = _verdict_words(evaluation.verdicts[offset])
        record["correct"] = evaluation.correct[offset]
        same = evaluation.sames[offset]
        record["consistency_same"] = None if all(flag is None for flag in same) else same
        record["diagnosis"] = [
            None if found is None else scoring.DIAGNOSIS_NAMES[found]
            for found in evaluation.diagnosis[offset]
        ]
        if correctness is not None:
            record["judge_replies"] = correctness[offset]
            record["judge_errors"] = evaluation.errors["correctness"][offset]
        if consistency is not None:
            record["consistency_replies"] = consistency[offset]


def _unjudged_list(records: list[dict[str, Any]], evaluation: scoring.Evaluation) -> list[dict[str, Any]]:
    """Every judgement without a verdict (the judging pipeline gives each one its reason)."""
    entries = []
    indices = evaluation.record_indices or list(range(len(records)))
    for kind, rows in evaluation.replies.items():
        errors = evaluation.errors.get(kind, [])
        for offset, row in enumerate(rows):
            for repeat in range(len(row)):
                error = errors[offset][repeat] if offset < len(errors) else None
                if error is not None:  # unjudged (no reply) or an unreadable reply
                    index = indices[offset]
                    entries.append(
                        {
                            "kind": kind,
                            "record": index,
                            "repeat": repeat,
                            "error": error,
                            "question_key": [
                                records[index].get(name)
                                for name in ("category", "subcategory", "set_id", "figure_id", "question_id")
                            ],
                        }
                    )
    return entries


def leaderboard_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The official JSON rows (11 fields, official key order) plus ``model_prediction``."""
    return [
        {
            **{name: record.get(name) for name in scoring.OFFICIAL_FIELDS},
            "model_prediction": record.get("prediction", ""),
        }
        for record in records
    ]


def _deviations(task: str, evaluation: scoring.Evaluation) -> list[str]:
    """How this run departs from the paper's protocol (GPT-4 judge, all 1129 questions)."""
    deviations = []
    if task.endswith("_sample"):
        deviations.append("bundled generated sample data, not the HallusionBench dataset")
    if evaluation.judge.get("kind") == "rule":
        deviations.append("rule-based yes/no judge instead of the paper's GPT-4 judge")
    if evaluation.variant == "vlmevalkit":
        deviations.append("VLMEvalKit variant: image questions only, VLMEvalKit's answer matching")
    return deviations


NO_VERDICT_ENV = "LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT"


def no_verdict_option() -> str:
    """How a run scores judge replies without a verdict word: ``official`` (default) or ``unjudged``."""
    value = os.environ.get(NO_VERDICT_ENV, "").strip() or "official"
    if value not in scoring.NO_VERDICT_CHOICES:
        choices = ", ".join(scoring.NO_VERDICT_CHOICES)
        raise ValueError(f"{NO_VERDICT_ENV}={value!r}: expected one of {choices}")
    return value


def score_task(records: list[dict[str, Any]], task: str, args: Any = None) -> tuple[dict, dict]:
    """Judge and score one task's records and annotate them; returns (metric values, report details)."""
    if task not in TASKS:
        raise ValueError(f"HallusionBench records carry an unknown task name {task!r}")
    settings = TASKS[task]
    no_verdict = no_verdict_option() if settings.variant == "official" else "official"
    try:
        evaluation = scoring.evaluate(
            records, variant=settings.variant, judge=settings.judge, no_verdict=no_verdict
        )
    except JudgingFailed as error:  # no verdict at all: fail the host's evaluation (the launcher exits 1)
        raise JudgingFailed(f"{task}: {error}") from None
    judge_name = evaluation.judge.get("model", "?")
    _annotate(records, evaluation, judge_name)
    values: dict[str, Any] = dict(evaluation.metrics)
    values["unjudged_verdicts"] = evaluation.counts["unjudged_verdicts"]
    values["llm_matched"] = evaluation.counts.get("llm_matched", 0)
    values["empty_predictions"] = evaluation.counts["empty_predictions"]
    values["no_verdict"] = evaluation.counts.get("no_verdict", 0)
    values["judge_is_rule_based"] = 1 if evaluation.judge.get("kind") == "rule" else 0
    kind = evaluation.judge.get("kind")
    logger.info(
        f"HallusionBench ({task}): judged by {kind} / {judge_name}, {evaluation.repeats} repeat(s); "
        f"aAcc={values.get('aAcc')}, fAcc={values.get('fAcc')}, qAcc={values.get('qAcc')}"
    )
    details = {
        "variant": evaluation.variant,
        "units": "percent, except pct_diff and fp_ratio (fractions)",
        "spread": evaluation.spread,
        "per_repeat": evaluation.per_repeat,
        "counts": evaluation.counts,
        "judge_usage": evaluation.judge_usage,
        "judging": evaluation.judging,  # per judging batch: settings, counts, usage, unjudged items
        "unjudged": _unjudged_list(records, evaluation),
        "no_verdict": evaluation.no_verdict,  # how verdict-less judge replies were scored
        "no_verdict_replies": evaluation.no_verdict_replies,
        "judge": {**evaluation.judge, "repeats": evaluation.repeats},
        "deviations": _deviations(task, evaluation),
        # non-zero counts (unjudged verdicts, empty predictions, replies without a verdict) become warnings
        # by the shared rule (framework.hooks.count_warnings, the benchmark's count_keys); this one says more
        "warnings": _no_verdict_warning(evaluation),
    }
    return values, details


def _no_verdict_warning(evaluation: scoring.Evaluation) -> list[str]:
    """The report's warning about judge replies without a verdict word (none when there are none)."""
    count = evaluation.counts.get("no_verdict", 0)
    if not count:
        return []
    if evaluation.no_verdict == "official":
        how = "scored as the official parse does (correctness: unclear, consistency: different)"
        other = "unjudged"
    else:
        how, other = "left unjudged (out of the metrics)", "official"
    return [
        f"{count} judge replies without a verdict word, {how}; listed in details.no_verdict_replies. "
        f"Set {NO_VERDICT_ENV}={other} (or score with no_verdict={other}) to compare"
    ]


def task_settings(task: str) -> dict[str, Any]:
    """What a task's report records as its settings: the scoring variant and the judge kind."""
    settings = {"variant": TASKS[task].variant, "judge": TASKS[task].judge or "auto"}
    if TASKS[task].variant == "official":
        settings["no_verdict"] = no_verdict_option()
    return settings


def leaderboard_files(records: list[dict[str, Any]], task: str) -> dict[str, str]:
    """The official result JSON (the 11 fields plus ``model_prediction``), next to the task's report."""
    return {LEADERBOARD_FILE: json.dumps(leaderboard_rows(records), indent=2, ensure_ascii=False)}


HOOKS = harness.TaskHooks(
    "hallusionbench",
    make_record,
    task_settings=task_settings,
    metric_keys=metric_keys,
    prepare_docs=prepare_docs,
    score_task=score_task,
    extra_files=leaderboard_files,
)
process_results = HOOKS.process_results
aggregate_aAcc, aggregate_fAcc, aggregate_qAcc, aggregate_overall = HOOKS.aggregators(
    "aAcc", "fAcc", "qAcc", "overall"
)
aggregate_LH, aggregate_VI, aggregate_Mixed = HOOKS.aggregators("LH", "VI", "Mixed")
aggregate_unjudged_verdicts, aggregate_llm_matched = HOOKS.aggregators("unjudged_verdicts", "llm_matched")


# ---- baseline model support --------------------------------------------------------------------------


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """The random-guess baseline's answer: "Yes" or "No" with equal probability."""
    return rng.choice(("Yes", "No"))
