"""HallusionBench's config: how each task is scored, the one reader of its environment variables (the judge
itself is the shared judge configuration, ``lmms_eval_tasks.judges.config``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmms_eval_tasks import environment
from lmms_eval_tasks.tasks.hallusionbench.scoring import NO_VERDICT_CHOICES, NO_VERDICT_ENV

JUDGE_PROMPT_ENV = "LMMS_EVAL_TASKS_HALLUSIONBENCH_JUDGE_PROMPT"  # official (default) or hardened


@dataclass(frozen=True)
class TaskVariant:
    """How one task is scored: the variant and the judge kind (None: auto, from the judge configuration)."""

    variant: str
    judge: str | None


TASKS: dict[str, TaskVariant] = {
    "hallusionbench": TaskVariant("official", None),
    "hallusionbench_offline": TaskVariant("official", "rule"),
    "hallusionbench_vlmevalkit": TaskVariant("vlmevalkit", None),
    "hallusionbench_sample": TaskVariant("official", None),
    "hallusionbench_offline_sample": TaskVariant("official", "rule"),
    "hallusionbench_vlmevalkit_sample": TaskVariant("vlmevalkit", None),
}


def score_options(task: str) -> dict[str, Any]:
    """The ``score`` options of ``task`` (the variant, and the judge kind when the task fixes one)."""
    if task not in TASKS:
        known = ", ".join(sorted(TASKS))
        raise ValueError(f"HallusionBench records carry an unknown task name {task!r} (known: {known})")
    variant = TASKS[task]
    options: dict[str, Any] = {"variant": variant.variant}
    if variant.judge is not None:
        options["judge"] = variant.judge
    if variant.variant == "official":
        options["no_verdict"] = no_verdict_option()
        judge_prompt = environment.text(JUDGE_PROMPT_ENV)
        if judge_prompt:  # recorded only when asked: the official prompt is the default
            options["judge_prompt"] = judge_prompt
    return options


def no_verdict_option() -> str:
    """How a run scores judge replies without a verdict word: ``official`` (default) or ``unjudged``."""
    value = environment.text(NO_VERDICT_ENV) or "official"
    if value not in NO_VERDICT_CHOICES:
        raise ValueError(f"{NO_VERDICT_ENV}={value!r}: expected one of {', '.join(NO_VERDICT_CHOICES)}")
    return value


def judge_needed(task: str) -> str | None:
    """The rule-judged task to suggest when ``task`` needs an LLM judge ("" when there is none), else None
    (``*_sample`` tasks use the rule judge, labelled, without an endpoint)."""
    settings = TASKS.get(task)
    if settings is None or settings.judge is not None or task.endswith("_sample"):
        return None
    return "hallusionbench_offline" if settings.variant == "official" else ""
