"""LLM judges for the pack: one configuration, any OpenAI-compatible endpoint, or an offline rule judge.

Benchmarks judge through ``judge_items`` (``judges.pipeline``); cheap to import (docs/judges.md)."""

from __future__ import annotations

from lmms_eval_tasks.judges import rules
from lmms_eval_tasks.judges.base import Judge, JudgeReply, JudgeRequest
from lmms_eval_tasks.judges.factory import KINDS, get_judge
from lmms_eval_tasks.judges.pipeline import (
    JudgedBatch,
    JudgeItem,
    JudgingFailed,
    LazyJudge,
    judge_items,
    judge_metadata,
    repeat_spread,
    replies_log,
)
from lmms_eval_tasks.judges.prompts import load_prompt, render_positional, render_prompt
from lmms_eval_tasks.judges.rule_judge import RULE_UNDECIDED, RuleJudge

__all__ = [
    "KINDS",
    "RULE_UNDECIDED",
    "Judge",
    "JudgeItem",
    "JudgeReply",
    "JudgeRequest",
    "JudgedBatch",
    "JudgingFailed",
    "LazyJudge",
    "RuleJudge",
    "get_judge",
    "judge_items",
    "judge_metadata",
    "load_prompt",
    "render_positional",
    "render_prompt",
    "repeat_spread",
    "replies_log",
    "rules",
]
