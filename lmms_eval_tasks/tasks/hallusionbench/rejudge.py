"""What `lmms-eval-tasks rejudge` needs to know about HallusionBench records (lmms_eval_tasks/rejudge.py)."""

from __future__ import annotations

from typing import Any

# Fields a judge wrote (or a user supplied as verdicts): removed so the judge being compared decides.
ANNOTATIONS = frozenset(
    {
        "judge", "judge_verdict", "judge_same", "judge_verdicts", "judge_replies", "judge_errors", "correct",
        "consistency_same", "consistency_replies", "diagnosis", "extracted_answer", "yes_no_match_reply",
    }
)  # fmt: skip
COMPARED_METRICS = ("aAcc", "fAcc", "qAcc")


def outcome(record: dict[str, Any]) -> bool | None:
    """The judged correctness of one question: most judged repeats right, a tie wrong (as
    ``scoring.per_question_correct``); None when no repeat has a verdict."""
    correct = record.get("correct")
    values = [v for v in (correct if isinstance(correct, list) else [correct]) if v is not None]
    return None if not values else 2 * sum(values) > len(values)


def item_label(record: dict[str, Any]) -> str:
    """A question's identity as the official grouping keys name it."""
    return (
        f"{record.get('category')}/{record.get('subcategory')} set {record.get('set_id')} "
        f"figure {record.get('figure_id')} question {record.get('question_id')}"
    )
