"""lmms-eval hooks for DVQA: chart image, the paper's prompt per model, one ``score`` record per question.

Metric logic lives in ``lmms_eval_tasks.scoring.dvqa``; ``LMMS_EVAL_TASKS_DVQA_PROTOCOL=official``
switches to the official script's numbers (decimal points removed), ``LMMS_EVAL_TASKS_DVQA_PROMPT``
overrides the prompt (docs/revisiting.md).
"""

from __future__ import annotations

import os
import random
from typing import Any

from lmms_eval_tasks.harness import TaskHooks
from lmms_eval_tasks.tasks.revisiting import common

DATASET = "dvqa"
# Dataset fields copied into each record (the first three are what the scorer needs).
RECORD_FIELDS = ("question_id", "template_id", "answer", "question", "image_file")
COLUMNS = ("question_id", "question", "template_id", "answer", "image")
_WORDS = ("yes", "no")


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The chart (RGB); errors name the question."""
    return common.doc_to_visual(doc)


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The question in the paper's prompt for the model (``prompt`` kwarg: hf, llava15 or gpt)."""
    return common.build_prompt(DATASET, str(doc["question"]), lmms_eval_specific_kwargs)


def doc_to_target(doc: dict[str, Any]) -> str:
    """The answer (shown in the host's samples log)."""
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
    }


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """Yes or no for yes/no questions (the question starts with a verb), else a number from 0 to 10."""
    first = str(doc.get("question", "")).split(" ", 1)[0].lower()
    if first in ("is", "are", "does", "do"):
        return rng.choice(_WORDS)
    return str(rng.randint(0, 10))


HOOKS = TaskHooks(
    DATASET,
    make_record,
    task_settings=task_settings,
    prepare_docs=common.prepare_docs_for(DATASET, COLUMNS),
    report_details=common.report_details_for(DATASET),
)
process_results = HOOKS.process_results
aggregate_micro_accuracy = HOOKS.aggregator("micro_accuracy")
aggregate_macro_accuracy = HOOKS.aggregator("macro_accuracy")
aggregate_accuracy_structure = HOOKS.aggregator("accuracy_structure")
aggregate_accuracy_data = HOOKS.aggregator("accuracy_data")
aggregate_accuracy_reasoning = HOOKS.aggregator("accuracy_reasoning")
aggregate_group = HOOKS.aggregate_group
