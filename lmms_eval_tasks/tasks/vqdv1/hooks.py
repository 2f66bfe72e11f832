"""lmms-eval hooks for VQDv1: image, prompt per model, one ``score`` record per query, aggregation (box
conventions and protocol: scoring options from the environment, docs/vqdv1.md)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.framework.hook_factory import TaskHooks
from lmms_eval_tasks.framework.input_checks import RecordError
from lmms_eval_tasks.framework.task_pipeline import output_dir
from lmms_eval_tasks.tasks.revisiting import shared_tasks
from lmms_eval_tasks.tasks.vqdv1 import scoring
from lmms_eval_tasks.tasks.vqdv1.prompts import PROMPT_ENV, build_prompt, resolve_template

# Dataset fields copied into each record (the first four are required; the rest when present).
RECORD_FIELDS = tuple("question_id gtbox width height row question question_type image_id file_name".split())


def task_settings(task: str) -> dict[str, Any]:
    """Scoring options and the prompt in force, recorded in the task's report."""
    return {"prompt_override": environment.text(PROMPT_ENV) or None, "iou_threshold": scoring.IOU_THRESHOLD}


def _gtbox(doc: dict[str, Any]) -> list[Any]:
    value = doc.get("gtbox")
    if isinstance(value, str):  # a JSON string column is accepted too
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise RecordError(doc.get("question_id", "?"), "gtbox", f"not JSON: {value!r:.80}") from None
    if value is None:
        raise RecordError(doc.get("question_id", "?"), "gtbox", "missing")
    return [list(box) for box in value]


doc_to_visual = shared_tasks.visual_hook("vqdv1")  # the query's image (RGB); errors name the query


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The query in the model's prompt (``prompt`` kwarg or $LMMS_EVAL_TASKS_VQDV1_PROMPT)."""
    return build_prompt(str(doc["question"]), lmms_eval_specific_kwargs)


def doc_to_target(doc: dict[str, Any]) -> str:
    """The ground-truth boxes as JSON text (shown in the host's samples log; scoring reads ``gtbox``)."""
    return json.dumps(_gtbox(doc))


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """One ``score`` record: the dataset's fields plus the raw model text."""
    record = shared_tasks.copy_fields(doc, RECORD_FIELDS, RECORD_FIELDS[:4])
    record["gtbox"] = _gtbox(doc)
    record["prediction"] = shared_tasks.prediction_of(results)
    return record


def report_details(records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any) -> dict:
    """What only a run knows: the precision/recall plot (with an output folder), an overridden prompt, and
    that a sample task's data are the bundled generated sample."""
    details: dict[str, Any] = {}
    if task.endswith("_sample"):
        details["deviations"] = ["bundled generated sample data, not the VQDv1 slim subset"]
    folder = output_dir(args) if args is not None else None
    if folder is not None and scoring.bucket_table(metrics):
        path = Path(folder) / f"{task}_precision_recall.png"  # next to the report
        path.parent.mkdir(parents=True, exist_ok=True)
        scoring.plot_precision_recall(metrics, path, title=task)
        details["precision_recall_plot"] = str(path)
    if environment.text(PROMPT_ENV):
        details["prompt_template"] = resolve_template(None)
    return details


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random box list in the output syntax (0-5 boxes in pixel [x1, y1, x2, y2]; "[[]]" for none)."""
    width = float(doc.get("width") or 100)
    height = float(doc.get("height") or 100)
    boxes = []
    for _ in range(rng.randint(0, 5)):
        x1, x2 = sorted(rng.uniform(0, width) for _ in range(2))
        y1, y2 = sorted(rng.uniform(0, height) for _ in range(2))
        boxes.append(f"[{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}]")
    return "[" + ", ".join(boxes) + "]" if boxes else "[[]]"


DATASET_COLUMNS = ("question_id", "question", "gtbox", "width", "height", "image")
_prepare_columns = shared_tasks.prepare_docs_for("vqdv1", DATASET_COLUMNS)


def prepare_docs(dataset: Any, task: str) -> Any:
    """The task's docs, each with its ``row`` (written by ``prepare vqdv1``; else its position): the record
    identity, since the authors' subset repeats queries on purpose (sampled with replacement)."""
    dataset = _prepare_columns(dataset, task)
    if "row" not in dataset.column_names:
        dataset = dataset.add_column("row", list(range(len(dataset))))
    return dataset


HOOKS = TaskHooks(
    "vqdv1",
    make_record,
    task_settings=task_settings,
    report_details=report_details,
    prepare_docs=prepare_docs,
)
process_results = HOOKS.process_results
