"""lmms-eval hooks for TallyQA: image, the paper's prompt per model, one ``score`` record per question.

Metric logic lives in ``lmms_eval_tasks.tasks.tallyqa.scoring``; ``LMMS_EVAL_TASKS_TALLYQA_PROTOCOL=official``
switches to the official script's numbers, ``LMMS_EVAL_TASKS_TALLYQA_PROMPT`` overrides the prompt. The
pack report carries the accuracy by true count (the paper's Figs. 8-9) and, with an output folder, its plot.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from lmms_eval_tasks.framework.task_pipeline import output_dir
from lmms_eval_tasks.tasks.revisiting import shared_tasks
from lmms_eval_tasks.tasks.tallyqa import scoring

DATASET = "tallyqa"
# Dataset fields copied into each record (the first three are what the scorer needs).
RECORD_FIELDS = ("question_id", "answer", "issimple", "question", "image_id", "image_file", "data_source")
COLUMNS = ("question_id", "question", "answer", "issimple", "image")


SHARED = shared_tasks.DatasetHooks(
    DATASET,
    RECORD_FIELDS,
    required=3,
    target_field="answer",
    report_settings={"rmse_clip": [0, scoring.CLIP_MAX]},
)
doc_to_visual = shared_tasks.visual_hook("tallyqa")  # the question's image (RGB); errors name the question
doc_to_text = SHARED.doc_to_text
doc_to_target = SHARED.doc_to_target  # the true count
make_record = SHARED.make_record
task_settings = SHARED.task_settings


def report_details(records: list[dict[str, Any]], metrics: dict[str, Any], task: str, args: Any) -> dict:
    """What only a run knows: its deviations and, with an output folder, the accuracy-by-count plot."""
    details: dict[str, Any] = {"deviations": shared_tasks.deviations(DATASET, task)}
    folder = output_dir(args) if args is not None else None
    if folder is not None:
        path = Path(folder) / f"{task}_accuracy_by_count.png"
        scoring.plot_accuracy_by_count(metrics, path, title=task)
        details["accuracy_by_count_plot"] = str(path)
    return details


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random count from 0 to 15 (the range the scorer clips to), in digits."""
    return str(rng.randint(0, scoring.CLIP_MAX))


HOOKS = SHARED.task_hooks(COLUMNS, report_details=report_details)
process_results = HOOKS.process_results
