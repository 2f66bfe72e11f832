"""lmms-eval hooks for DVQA: chart image, the paper's prompt per model, one ``score`` record per question.

Metric logic lives in ``lmms_eval_tasks.tasks.dvqa.scoring``; ``LMMS_EVAL_TASKS_DVQA_PROTOCOL=official``
switches to the official script's numbers (decimal points removed), ``LMMS_EVAL_TASKS_DVQA_PROMPT``
overrides the prompt (docs/revisiting.md).
"""

from __future__ import annotations

import random
from typing import Any

from lmms_eval_tasks.tasks.revisiting import shared_tasks

DATASET = "dvqa"
# Dataset fields copied into each record (the first three are what the scorer needs).
RECORD_FIELDS = ("question_id", "template_id", "answer", "question", "image_file")
COLUMNS = ("question_id", "question", "template_id", "answer", "image")
_WORDS = ("yes", "no")


SHARED = shared_tasks.DatasetHooks(DATASET, RECORD_FIELDS, required=3, target_field="answer")
doc_to_visual = shared_tasks.visual_hook("dvqa")  # the chart (RGB); errors name the question
doc_to_text = SHARED.doc_to_text
doc_to_target = SHARED.doc_to_target
make_record = SHARED.make_record
task_settings = SHARED.task_settings


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """Yes or no for yes/no questions (the question starts with a verb), else a number from 0 to 10."""
    first = str(doc.get("question", "")).split(" ", 1)[0].lower()
    if first in ("is", "are", "does", "do"):
        return rng.choice(_WORDS)
    return str(rng.randint(0, 10))


HOOKS = SHARED.task_hooks(COLUMNS)
process_results = HOOKS.process_results
