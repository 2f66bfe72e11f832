"""Thin lmms-eval hooks for the ConTextual tasks: image, prompt, one ``score`` record per instruction.

Metric logic lives in ``lmms_eval_tasks.tasks.contextual.scoring``. Judged tasks (``contextual``,
``contextual_sample``) are judged and scored once per task in aggregation; submission tasks
(``contextual_test``, ``contextual_sample_submission``) only write the leaderboard predictions file.
Options from the environment (recorded in each report): ``LMMS_EVAL_TASKS_CONTEXTUAL_PROTOCOL``
(default/official), ``LMMS_EVAL_TASKS_CONTEXTUAL_IMAGE_JUDGE=1`` (the image-aware judge),
``LMMS_EVAL_TASKS_DATA_CONTEXTUAL`` (the folder ``prepare`` wrote) and
``LMMS_EVAL_TASKS_CONTEXTUAL_SKIP_MISSING=1``.
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework import hooks as harness
from lmms_eval_tasks.framework.hooks import TaskHooks
from lmms_eval_tasks.framework.scoring import RecordError
from lmms_eval_tasks.tasks.contextual import scoring
from lmms_eval_tasks.tasks.contextual.prepare import DATA_ENV, default_data_dir, image_filename

PROTOCOL_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_PROTOCOL"
IMAGE_JUDGE_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_IMAGE_JUDGE"
SKIP_MISSING_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_SKIP_MISSING"
SUBMISSION_METRICS: tuple[str, ...] = ("submission_rows", "empty_predictions")
LOWER_IS_BETTER = {"unjudged", "empty_predictions"}
_TRUE = {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class TaskSpec:
    """One task: judged or submission-only, and whether its images are bundled or prepared."""

    judged: bool
    bundled_images: bool
    expected_rows: int


TASKS: dict[str, TaskSpec] = {
    "contextual": TaskSpec(judged=True, bundled_images=False, expected_rows=100),
    "contextual_test": TaskSpec(judged=False, bundled_images=False, expected_rows=506),
    "contextual_sample": TaskSpec(judged=True, bundled_images=True, expected_rows=10),
    "contextual_sample_submission": TaskSpec(judged=False, bundled_images=True, expected_rows=10),
}


def _spec(task: str) -> TaskSpec:
    if task not in TASKS:
        raise KeyError(f"unknown ConTextual task {task!r}; known: {', '.join(TASKS)}")
    return TASKS[task]


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def score_options() -> dict[str, Any]:
    """Scoring options from the environment: the protocol and the image-aware judge."""
    protocol = os.environ.get(PROTOCOL_ENV, "").strip() or "default"
    if protocol not in scoring.PROTOCOLS:
        raise ValueError(f"{PROTOCOL_ENV}={protocol!r}: expected one of {', '.join(scoring.PROTOCOLS)}")
    return {"protocol": protocol, "image_judge": _flag(IMAGE_JUDGE_ENV)}


def task_settings(task: str) -> dict[str, Any]:
    """What each report records about the task's settings."""
    spec = _spec(task)
    settings: dict[str, Any] = {"kind": "judged" if spec.judged else "submission"}
    if spec.judged:
        settings["score_options"] = score_options()
        settings["judge_prompt"] = scoring.JUDGE_PROMPT
    if not spec.bundled_images:
        settings["images_folder"] = str(images_dir())
        settings["skip_missing_images"] = _flag(SKIP_MISSING_ENV)
    return settings


def metric_keys(task: str) -> tuple[str, ...]:
    """Headline metrics for judged tasks; the submission file's counts for submission tasks."""
    return scoring.HEADLINE_METRICS if _spec(task).judged else SUBMISSION_METRICS


# ---- documents, image and prompt ---------------------------------------------------------------------


def images_dir() -> Path:
    """Where ``prepare`` put the images (``$LMMS_EVAL_TASKS_DATA_CONTEXTUAL/images``)."""
    return default_data_dir() / "images"


def _label(doc: dict[str, Any]) -> str:
    row = doc.get("csv_row")
    where = f"row {row}" if row is not None else "instruction"
    return f"{where} ({doc.get('image_url')})"


def _image_path(doc: dict[str, Any]) -> Path:
    return images_dir() / image_filename(str(doc["image_url"]))


def prepare_docs(dataset: Any, task: str) -> Any:
    """Check every prepared image is present before any model runs (all missing rows named at once)."""
    if _spec(task).bundled_images:
        return dataset
    missing = [
        index
        for index, url in enumerate(dataset["image_url"])
        if not (images_dir() / image_filename(url)).is_file()
    ]
    if not missing:
        return dataset
    rows = dataset["csv_row"] if "csv_row" in dataset.column_names else list(range(len(dataset)))
    listed = "; ".join(f"row {rows[i]} ({dataset['image_url'][i]})" for i in missing[:10])
    more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
    if _flag(SKIP_MISSING_ENV):
        logger.warning(
            f"!!! {task}: {len(missing)} of {len(dataset)} instructions SKIPPED, their images are not in "
            f"{images_dir()} ({SKIP_MISSING_ENV}=1): {listed}{more}"
        )
        keep = sorted(set(range(len(dataset))) - set(missing))
        return dataset.select(keep)
    raise FileNotFoundError(
        f"{task}: {len(missing)} of {len(dataset)} images are missing from {images_dir()}: {listed}{more}. "
        "Download them once with `lmms-eval-tasks prepare contextual --out DIR` "
        f"and set {DATA_ENV}=DIR (or set {SKIP_MISSING_ENV}=1 to run without those rows, counted)."
    )


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The instruction's image as RGB: bundled in the sample, else the file ``prepare`` downloaded."""
    from PIL import Image

    image = doc.get("image")
    if image is None:
        path = _image_path(doc)
        if not path.is_file():
            raise RecordError(
                _label(doc),
                "image_url",
                f"image not found at {path}; run `lmms-eval-tasks prepare contextual`",
            )
        try:
            with Image.open(path) as opened:
                return [opened.convert("RGB")]
        except Exception as error:  # PIL raises several types for damaged files
            raise RecordError(_label(doc), "image_url", f"{path} cannot be decoded: {error}") from error
    try:
        return [image.convert("RGB")]
    except Exception as error:
        raise RecordError(_label(doc), "image", f"cannot be decoded: {error}") from error


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The instruction exactly as in the data (the paper's prompt); pre/post prompts default to empty."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['instruction']}{kwargs.get('post_prompt', '')}"


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """One ``score`` record: the CSV's fields, the model's response and (prepared data) the image file."""
    record: dict[str, Any] = {}
    for field in ("image_url", "instruction", "category"):
        value = doc.get(field)
        if not isinstance(value, str):
            raise RecordError(_label(doc), field, "missing from the document")
        record[field] = value
    if isinstance(doc.get("response"), str):
        record["response"] = doc["response"]
    elif _spec(task).judged:
        raise RecordError(_label(doc), "response", "missing: a judged task needs the reference response")
    prediction = results[0] if results else ""
    record["prediction"] = prediction if isinstance(prediction, str) else str(prediction)
    if not _spec(task).bundled_images:
        record["image_path"] = str(_image_path(doc))
    return record


# ---- scoring and the submission file ------------------------------------------------------------------


def _model_name(args: Any) -> str:
    """The model's name for the submission JSON: ``pretrained=`` from --model_args, else --model."""
    model_args = str(getattr(args, "model_args", "") or "")
    for part in model_args.split(","):
        key, _, value = part.partition("=")
        if key.strip() == "pretrained" and value.strip():
            return value.strip()
    return str(getattr(args, "model", "") or "model")


def write_submission(records: list[dict[str, Any]], folder: Path, task: str, model: str) -> dict[str, Path]:
    """The leaderboard files: ``<task>_predictions.csv`` (image_url, instruction, category, response: the
    authors' CSV with the model's response) and ``<task>_predictions.json`` ({model: {image_url: response}},
    the shape of the authors' ``master.json``)."""
    folder.mkdir(parents=True, exist_ok=True)
    csv_path = folder / f"{task}_predictions.csv"
    json_path = folder / f"{task}_predictions.json"
    temporary = csv_path.with_suffix(".csv.tmp")
    with open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(scoring.SUBMISSION_FIELDS))
        writer.writeheader()
        for record in records:
            writer.writerow(
                {
                    "image_url": record["image_url"],
                    "instruction": record["instruction"],
                    "category": record["category"],
                    "response": record["prediction"],
                }
            )
    os.replace(temporary, csv_path)
    responses = {record["image_url"]: record["prediction"] for record in records}
    temporary = json_path.with_suffix(".json.tmp")
    temporary.write_text(json.dumps({model: responses}, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, json_path)
    return {"csv": csv_path, "json": json_path}


def _submission(records: list[dict[str, Any]], task: str, args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    urls = [record.get("image_url") for record in records]
    if len(set(urls)) != len(urls):
        raise RecordError("-", "image_url", f"{task}: duplicate instructions in the predictions")
    expected = _spec(task).expected_rows
    empty = sum(1 for record in records if not str(record.get("prediction") or "").strip())
    metrics = {"submission_rows": len(records), "empty_predictions": empty}
    details: dict[str, Any] = {"expected_rows": expected, "complete": len(records) == expected}
    if len(records) != expected:
        logger.warning(
            f"!!! {task}: {len(records)} of {expected} instructions predicted (--limit or skipped images?): "
            "the leaderboard needs all of them"
        )
    folder = harness.output_dir(args)
    if folder is None:
        logger.warning(f"{task}: no --output_path: the submission file is not written")
        return metrics, details
    paths = write_submission(records, folder, task, _model_name(args))
    details["submission_files"] = {kind: str(path) for kind, path in paths.items()}
    logger.info(f"{task}: leaderboard predictions written to {paths['csv']} and {paths['json']}")
    return metrics, details


def _official_view(evaluation: scoring.Evaluation) -> dict[str, Any]:
    """The same judge replies read with the official protocol (parse + Misc denominator): no extra calls."""
    if evaluation.protocol == "official":
        return {}
    rows = []
    for item, replies in zip(evaluation.items, evaluation.replies, strict=True):
        rows.append({"category": item.category, "replies": replies})
    per_repeat = []
    for repeat in range(evaluation.repeats):
        verdicts = [
            scoring.parse_judge_reply(row["replies"][repeat], "official")
            if row["replies"][repeat] is not None
            else None
            for row in rows
        ]
        per_repeat.append(scoring.acceptance_metrics([row["category"] for row in rows], verdicts, "official"))
    keys = ("acceptance_rate", "acceptance_rate_misc_natural_scenes", "judged", "unjudged")
    return {key: [metrics[key] for metrics in per_repeat] for key in keys}


def _judged(records: list[dict[str, Any]], task: str) -> tuple[dict[str, Any], dict[str, Any]]:
    # judge settings use the benchmark's suffix for every ConTextual task (LMMS_EVAL_TASKS_JUDGE_*_CONTEXTUAL)
    evaluation = scoring.evaluate(records, task="contextual", **score_options())
    for position, record in enumerate(records):  # what --log_samples shows in a single process
        per_item = evaluation.per_item(position)
        record["judge_verdicts"] = per_item["verdicts"]
        record["judge_replies"] = per_item["judge_replies"]
        record["rouge_l"] = per_item["rouge_l"]
    metrics = evaluation.flat()
    details: dict[str, Any] = {
        "per_scenario": metrics.pop("per_scenario"),
        "judge": {**evaluation.judge, "usage": evaluation.judge_usage},
        "judging": evaluation.judge_batch,
        "per_repeat": evaluation.per_repeat,
        "official_protocol_same_replies": _official_view(evaluation),
    }
    if metrics.get("judge") == "rule":
        details["warnings"] = [
            "judged by the offline RULE judge (short-reference containment), not the paper's GPT-4 judge: "
            "not comparable with published ConTextual numbers"
        ]
    return metrics, details


def score_task(records: list[dict[str, Any]], task: str, args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Judge and score a judged task once; write the predictions file for a submission task."""
    if _spec(task).judged:
        return _judged(records, task)
    return _submission(records, task, args)


HOOKS = TaskHooks(
    "contextual",
    make_record,
    task_settings=task_settings,
    metric_keys=metric_keys,
    prepare_docs=prepare_docs,
    score_task=score_task,
)
process_results = HOOKS.process_results

__all__ = ["HOOKS", "TASKS", "doc_to_text", "doc_to_visual", "make_record"]
