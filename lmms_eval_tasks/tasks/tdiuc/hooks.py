"""lmms-eval hooks for TDIUC: image, the paper's prompt per model, one ``score`` record per question.

Metric logic lives in ``lmms_eval_tasks.tasks.tdiuc.scoring``; ``LMMS_EVAL_TASKS_TDIUC_PROTOCOL=official``
switches the task to the official script's numbers, ``LMMS_EVAL_TASKS_TDIUC_PROMPT`` overrides the prompt
(docs/revisiting.md).
"""

from __future__ import annotations

import random
from typing import Any

from lmms_eval_tasks.tasks.revisiting import shared_tasks
from lmms_eval_tasks.tasks.tdiuc.scoring import ABSURD_ANSWER, QUESTION_TYPES

DATASET = "tdiuc"
# Dataset fields copied into each record (the first three are what the scorer needs).
RECORD_FIELDS = ("question_id", "question_type", "labeled_answer", "question", "image_id", "image_file")
COLUMNS = ("question_id", "question", "question_type", "labeled_answer", "image")

# The random-guess baseline's answer space per question type (absurd questions draw from another type's
# space, or answer "doesnotapply" as often as any type's question would: 1 in 12).
ANSWER_SPACES: dict[str, tuple[str, ...]] = {
    "activity_recognition": ("eating", "sitting", "standing", "walking", "playing", "riding", "sleeping"),
    "attribute": ("wood", "metal", "plastic", "glass", "striped", "large", "small"),
    "color": ("white", "black", "red", "blue", "green", "yellow", "brown", "gray", "orange", "pink"),
    "counting": tuple(str(number) for number in range(11)),
    "object_presence": ("yes", "no"),
    "object_recognition": ("dog", "cat", "car", "bus", "pizza", "phone", "umbrella", "chair", "bottle"),
    "positional_reasoning": ("left", "right", "table", "floor", "wall", "grass", "road"),
    "scene_recognition": ("kitchen", "bathroom", "street", "beach", "park", "bedroom", "field"),
    "sentiment_understanding": ("happy", "sad", "calm", "angry", "excited"),
    "sport_recognition": ("tennis", "baseball", "skiing", "surfing", "soccer", "frisbee", "skateboarding"),
    "utility_affordance": ("cutting", "sitting", "eating", "writing", "drinking", "cooking"),
}


SHARED = shared_tasks.DatasetHooks(
    DATASET,
    RECORD_FIELDS,
    required=3,
    target_field="labeled_answer",
    report_settings={"matching": "exact after normalisation, or a shared WordNet synset"},
)
doc_to_visual = shared_tasks.visual_hook("tdiuc")  # the question's image (RGB); errors name the question
doc_to_text = SHARED.doc_to_text
doc_to_target = SHARED.doc_to_target
make_record = SHARED.make_record
task_settings = SHARED.task_settings


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random answer from the question type's answer space (see ANSWER_SPACES)."""
    if rng.randrange(len(QUESTION_TYPES)) == 0:
        return ABSURD_ANSWER
    question_type = str(doc.get("question_type", ""))
    if question_type not in ANSWER_SPACES:
        question_type = rng.choice(sorted(ANSWER_SPACES))
    return rng.choice(ANSWER_SPACES[question_type])


HOOKS = SHARED.task_hooks(COLUMNS)
process_results = HOOKS.process_results
