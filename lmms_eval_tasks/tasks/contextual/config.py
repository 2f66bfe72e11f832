"""ConTextual's config: its tasks, and the one reader of its ``LMMS_EVAL_TASKS_CONTEXTUAL_*`` variables
(docs/configuration.md); the judge itself is the shared judge configuration (``judges.config``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks import environment

PROTOCOL_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_PROTOCOL"
IMAGE_JUDGE_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_IMAGE_JUDGE"
SKIP_MISSING_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_SKIP_MISSING"
JUDGE_PROMPT_ENV = "LMMS_EVAL_TASKS_CONTEXTUAL_JUDGE_PROMPT"  # official (default) or hardened


@dataclass(frozen=True)
class TaskSpec:
    """One task: judged or submission-only, bundled or prepared images, and the judge it fixes (``"rule"``:
    the offline rule judge by name; None: the configured one)."""

    judged: bool
    bundled_images: bool
    expected_rows: int
    judge: str | None = None


TASKS: dict[str, TaskSpec] = {
    "contextual": TaskSpec(judged=True, bundled_images=False, expected_rows=100),
    "contextual_offline": TaskSpec(judged=True, bundled_images=False, expected_rows=100, judge="rule"),
    "contextual_test": TaskSpec(judged=False, bundled_images=False, expected_rows=506),
    "contextual_sample": TaskSpec(judged=True, bundled_images=True, expected_rows=10),
    "contextual_sample_submission": TaskSpec(judged=False, bundled_images=True, expected_rows=10),
}


def task_spec(task: str) -> TaskSpec:
    """The spec of a ConTextual task (KeyError naming the known tasks otherwise)."""
    if task not in TASKS:
        raise KeyError(f"unknown ConTextual task {task!r}; known: {', '.join(TASKS)}")
    return TASKS[task]


def reads_response(task: str) -> bool:
    """True when ``task``'s rows must hold the reference ``response`` (judged tasks)."""
    return task_spec(task).judged


def reads_image_column(task: str) -> bool:
    """True when ``task``'s images are in its ``image`` column (bundled), not files ``prepare`` downloaded."""
    return task_spec(task).bundled_images


def score_options(task: str) -> dict[str, Any]:
    """The ``score`` options of ``task``: a judged task's protocol, image judge and judge prompt from the
    environment, and the judge it fixes; a submission task's flag and the rows the leaderboard expects."""
    from lmms_eval_tasks.tasks.contextual.scoring import PROTOCOLS

    spec = task_spec(task)
    if not spec.judged:
        return {"submission": True, "expected_rows": spec.expected_rows}
    protocol = environment.text(PROTOCOL_ENV) or "default"
    if protocol not in PROTOCOLS:
        raise ValueError(f"{PROTOCOL_ENV}={protocol!r}: expected one of {', '.join(PROTOCOLS)}")
    options: dict[str, Any] = {"protocol": protocol, "image_judge": environment.yes(IMAGE_JUDGE_ENV)}
    judge_prompt = environment.text(JUDGE_PROMPT_ENV)
    if judge_prompt:  # recorded only when asked: the official prompt is the default
        options["judge_prompt"] = judge_prompt
    if spec.judge:
        options["judge"] = spec.judge
    return options


def judge_needed(task: str) -> str | None:
    """``contextual_offline``, the rule-judged task to suggest, when ``task`` needs an LLM judge; None for
    submission tasks, ``contextual_offline`` and the sample (which falls back to the rule judge, labelled)."""
    spec = TASKS.get(task)
    if spec is None or not spec.judged or spec.bundled_images or spec.judge is not None:
        return None
    return "contextual_offline"
