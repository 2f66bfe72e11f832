"""lmms-eval hooks for TallyQA: image, the paper's prompt per model, one ``score`` record per question.

Metric logic lives in ``lmms_eval_tasks.scoring.tallyqa``; ``LMMS_EVAL_TASKS_TALLYQA_PROTOCOL=official``
switches to the official script's numbers, ``LMMS_EVAL_TASKS_TALLYQA_PROMPT`` overrides the prompt. The
pack report carries the accuracy by true count (the paper's Figs. 8-9) and, with an output folder, its plot.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from lmms_eval_tasks.harness import TaskHooks, output_dir
from lmms_eval_tasks.scoring import tallyqa as scoring
from lmms_eval_tasks.tasks.revisiting import common

DATASET = "tallyqa"
# Dataset fields copied into each record (the first three are what the scorer needs).
RECORD_FIELDS = ("question_id", "answer", "issimple", "question", "image_id", "image_file", "data_source")
COLUMNS = ("question_id", "question", "answer", "issimple", "image")


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The question's image (RGB); errors name the question."""
    return common.doc_to_visual(doc)


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The question in the paper's prompt for the model (``prompt`` kwarg: hf, llava15 or gpt)."""
    return common.build_prompt(DATASET, str(doc["question"]), lmms_eval_specific_kwargs)


def doc_to_target(doc: dict[str, Any]) -> str:
    """The true count (shown in the host's samples log)."""
    return str(doc["answer"])


def make_record(doc: dict[str, Any], results: list[Any], task: str) -> dict[str, Any]:
    """One ``score`` record: the dataset's fields plus the raw model text."""
    record = common.copy_fields(doc, RECORD_FIELDS, RECORD_FIELDS[:3])
    record["prediction"] = common.prediction_of(results)
    return record


def task_settings(task: str) -> dict[str, Any]:
    """Scoring options and the prompt in force, recorded in the task's report."""
    return {
        "score_options": common.protocol_option(DATASET),
        "prompt_override": os.environ.get(common.prompt_env(DATASET), "").strip() or None,
        "rmse_clip": [0, scoring.CLIP_MAX],
    }


def score_task(records: list[dict[str, Any]], task: str, args: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Score once; the report gets the accuracy by true count and, with an output folder, its plot."""
    metrics = scoring.score_records(records, **common.protocol_option(DATASET))
    details: dict[str, Any] = {
        "accuracy_by_count": scoring.accuracy_by_count(metrics),
        "deviations": common.deviations(DATASET, task),
    }
    folder = output_dir(args) if args is not None else None
    if folder is not None:
        path = Path(folder) / f"{task}_accuracy_by_count.png"
        scoring.plot_accuracy_by_count(metrics, path, title=task)
        details["accuracy_by_count_plot"] = str(path)
    return metrics, details


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random count from 0 to 15 (the range the scorer clips to), in digits."""
    return str(rng.randint(0, scoring.CLIP_MAX))


HOOKS = TaskHooks(
    DATASET,
    make_record,
    task_settings=task_settings,
    score_task=score_task,
    prepare_docs=common.prepare_docs_for(DATASET, COLUMNS),
)
process_results = HOOKS.process_results
aggregate_simple_micro_accuracy = HOOKS.aggregator("simple_micro_accuracy")
aggregate_simple_macro_accuracy = HOOKS.aggregator("simple_macro_accuracy")
aggregate_simple_rmse = HOOKS.aggregator("simple_rmse")
aggregate_complex_micro_accuracy = HOOKS.aggregator("complex_micro_accuracy")
aggregate_complex_macro_accuracy = HOOKS.aggregator("complex_macro_accuracy")
aggregate_complex_rmse = HOOKS.aggregator("complex_rmse")
aggregate_micro_accuracy = HOOKS.aggregator("micro_accuracy")
aggregate_unparsed = HOOKS.aggregator("unparsed")
aggregate_group = HOOKS.aggregate_group
