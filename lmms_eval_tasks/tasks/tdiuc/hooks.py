"""lmms-eval hooks for TDIUC: image, the paper's prompt per model, one ``score`` record per question.

Metric logic lives in ``lmms_eval_tasks.scoring.tdiuc``; ``LMMS_EVAL_TASKS_TDIUC_PROTOCOL=official``
switches the task to the official script's numbers, ``LMMS_EVAL_TASKS_TDIUC_PROMPT`` overrides the prompt
(docs/revisiting.md).
"""

from __future__ import annotations

import os
import random
from typing import Any

from lmms_eval_tasks.harness import TaskHooks
from lmms_eval_tasks.scoring.tdiuc import ABSURD_ANSWER, QUESTION_TYPES
from lmms_eval_tasks.tasks.revisiting import common

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


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The question's image (RGB); errors name the question."""
    return common.doc_to_visual(doc)


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """The question in the paper's prompt for the model (``prompt`` kwarg: hf, llava15 or gpt)."""
    return common.build_prompt(DATASET, str(doc["question"]), lmms_eval_specific_kwargs)


def doc_to_target(doc: dict[str, Any]) -> str:
    """The labelled answer (shown in the host's samples log)."""
    return str(doc["labeled_answer"])


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
        "matching": "exact after normalisation, or a shared WordNet synset",
    }


def random_answer(task_name: str, doc: dict[str, Any], rng: random.Random) -> str:
    """A random answer from the question type's answer space (see ANSWER_SPACES)."""
    if rng.randrange(len(QUESTION_TYPES)) == 0:
        return ABSURD_ANSWER
    question_type = str(doc.get("question_type", ""))
    if question_type not in ANSWER_SPACES:
        question_type = rng.choice(sorted(ANSWER_SPACES))
    return rng.choice(ANSWER_SPACES[question_type])


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
aggregate_harmonic_mpt = HOOKS.aggregator("harmonic_mpt")
aggregate_normalized_arithmetic_mpt = HOOKS.aggregator("normalized_arithmetic_mpt")
aggregate_normalized_harmonic_mpt = HOOKS.aggregator("normalized_harmonic_mpt")
aggregate_accuracy_absurd = HOOKS.aggregator("accuracy_absurd")
aggregate_accuracy_counting = HOOKS.aggregator("accuracy_counting")
aggregate_accuracy_color = HOOKS.aggregator("accuracy_color")
aggregate_group = HOOKS.aggregate_group
