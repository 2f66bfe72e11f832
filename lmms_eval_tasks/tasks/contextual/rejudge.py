"""What `lmms-eval-tasks rejudge` needs to know about ConTextual records (lmms_eval_tasks/rejudge.py)."""

from __future__ import annotations

from typing import Any

# Fields a judge wrote (or a user supplied as verdicts): removed so the judge being compared decides
# (the scorer would otherwise re-read a previous run's ``judge_replies``).
ANNOTATIONS = frozenset({"judge_verdict", "judge_verdicts", "judge_replies", "rouge_l"})
COMPARED_METRICS = ("acceptance_rate",)


def outcome(record: dict[str, Any]) -> bool | None:
    """Whether the judge accepted the response: the majority of its judged repeats, None when unjudged or
    tied (the rule of ``scoring.per_question_correct``)."""
    verdicts = [v for v in record.get("judge_verdicts") or [] if v is not None]
    yes = sum(v == "Yes" for v in verdicts)
    return None if not verdicts or 2 * yes == len(verdicts) else 2 * yes > len(verdicts)


def item_label(record: dict[str, Any]) -> str:
    """An instruction's identity: its image and the start of its text."""
    return f"{record.get('image_url')}: {str(record.get('instruction'))[:60]}"
