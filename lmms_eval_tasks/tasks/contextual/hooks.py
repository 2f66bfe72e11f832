"""lmms-eval hooks for the ConTextual tasks: image, prompt, one ``score`` record per instruction; judged
tasks are scored once per task, submission tasks write the leaderboard predictions files.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from loguru import logger

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework import task_pipeline
from lmms_eval_tasks.framework.dataset_contract import image_of
from lmms_eval_tasks.framework.hook_factory import TaskHooks
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.tasks.contextual import scoring
from lmms_eval_tasks.tasks.contextual.config import SKIP_MISSING_ENV, task_spec
from lmms_eval_tasks.tasks.contextual.prepare import DATA_ENV, default_data_dir, image_filename

SUBMISSION_METRICS: tuple[str, ...] = ("submission_rows", "empty_predictions")
LOWER_IS_BETTER = {"unjudged", "empty_predictions"}


def task_settings(task: str) -> dict[str, Any]:
    """What each report records about the task's settings."""
    spec = task_spec(task)
    settings: dict[str, Any] = {"kind": "judged" if spec.judged else "submission"}
    if spec.judged:  # its score_options are added by the hook runtime (config.score_options)
        settings["judge_prompt"] = scoring.JUDGE_PROMPT
    if not spec.bundled_images:
        settings["images_folder"] = str(images_dir())
        settings["skip_missing_images"] = environment.yes(SKIP_MISSING_ENV)
    return settings


def metric_keys(task: str) -> tuple[str, ...]:
    """Headline metrics for judged tasks; the submission file's counts for submission tasks."""
    return scoring.HEADLINE_METRICS if task_spec(task).judged else SUBMISSION_METRICS


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
    if task_spec(task).bundled_images:
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
    if environment.yes(SKIP_MISSING_ENV):
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
    """The instruction's image as RGB: bundled in the sample, else the file ``prepare`` downloaded (the
    pack's one loader, ``framework.images.load_rgb``; errors name the row)."""
    if doc.get("image") is None:
        path = _image_path(doc)
        if not path.is_file():
            raise RecordError(
                _label(doc),
                "image_url",
                f"image not found at {path}; run `lmms-eval-tasks prepare contextual`",
            )
        return [image_of("contextual", {"image_url": str(path)}, "image_url", _label(doc))]
    return [image_of("contextual", doc, "image", _label(doc))]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The instruction exactly as in the data (the paper's prompt); pre/post prompts default to empty."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{doc['instruction']}{kwargs.get('post_prompt', '')}"


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """One ``score`` record: the CSV's fields (checked by the dataset contract), the model's response and
    (prepared data) the image file."""
    record: dict[str, Any] = {field: doc[field] for field in ("image_url", "instruction", "category")}
    if isinstance(doc.get("response"), str):  # every judged task's rows hold it (the dataset contract)
        record["response"] = doc["response"]
    prediction = results[0] if results else ""
    record["prediction"] = prediction if isinstance(prediction, str) else str(prediction)
    if not task_spec(task).bundled_images:
        record["image_path"] = str(_image_path(doc))
    return record


def _model_name(args: Any) -> str:
    """The model's name for the submission JSON: ``pretrained=`` from --model_args, else --model."""
    model_args = str(getattr(args, "model_args", "") or "")
    for part in model_args.split(","):
        key, _, value = part.partition("=")
        if key.strip() == "pretrained" and value.strip():
            return value.strip()
    return str(getattr(args, "model", "") or "model")


def write_submission(records: list[dict[str, Any]], folder: Path, task: str, model: str) -> dict[str, Path]:
    """The leaderboard files: ``<task>_predictions.csv`` (the authors' CSV with the model's response) and
    ``<task>_predictions.json`` ({model: {image_url: response}}, as the authors' ``master.json``)."""
    from lmms_eval_tasks.reporting.schema import write_atomically

    folder.mkdir(parents=True, exist_ok=True)
    paths = {"csv": folder / f"{task}_predictions.csv", "json": folder / f"{task}_predictions.json"}
    table = io.StringIO()
    fields = list(scoring.SUBMISSION_FIELDS)  # the last is the response
    writer = csv.DictWriter(table, fieldnames=fields)
    writer.writeheader()
    for record in records:
        writer.writerow({**{name: record[name] for name in fields[:-1]}, "response": record["prediction"]})
    write_atomically(paths["csv"], table.getvalue())
    responses = {record["image_url"]: record["prediction"] for record in records}
    write_atomically(paths["json"], json.dumps({model: responses}, indent=2, ensure_ascii=False))
    return paths


def report_details(
    records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any
) -> dict[str, Any]:
    """What only a run knows: a submission task's leaderboard files, written to the run's folder."""
    if task_spec(task).judged:
        return {}
    folder = task_pipeline.output_dir(args)
    if folder is None:
        logger.warning(f"{task}: no --output_path: the submission file is not written")
        return {}
    paths = write_submission(records, folder, task, _model_name(args))
    logger.info(f"{task}: leaderboard predictions written to {paths['csv']} and {paths['json']}")
    return {"submission_files": {kind: str(path) for kind, path in paths.items()}}


HOOKS = TaskHooks(
    "contextual",
    make_record,
    task_settings=task_settings,
    metric_keys=metric_keys,
    prepare_docs=prepare_docs,
    report_details=report_details,
)
process_results = HOOKS.process_results
