"""The offline rule-based judge: replies with each request's precomputed ``rule_reply``; no network."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lmms_eval_tasks.judges.base import Judge, JudgeReply, JudgeRequest, validate_requests

RULE_UNDECIDED = "rule judge could not decide"


class RuleJudge(Judge):
    """Deterministic judge for yes/no, option letters and numbers (the benchmark supplies ``rule_reply``)."""

    kind = "rule"
    model = "rule-based"

    def __init__(self, *, repeats: int = 1, reason: str = "requested", task: str | None = None) -> None:
        super().__init__()
        self.repeats = repeats
        self.reason = reason
        self.task = task

    def judge(
        self, requests: Sequence[JudgeRequest], *, repeats: int | None = None, desc: str = "judging"
    ) -> list[list[JudgeReply]]:
        """Reply ``rule_reply`` for every repeat (identical: the rule judge has no spread)."""
        validate_requests(requests)
        repeats = self._resolve_repeats(repeats)
        results = [
            [
                JudgeReply(
                    text=request.rule_reply,
                    error=None if request.rule_reply is not None else RULE_UNDECIDED,
                    cached=False,
                    repeat=repeat,
                )
                for repeat in range(repeats)
            ]
            for request in requests
        ]
        return self._finish(results, desc)

    def describe(self) -> dict[str, Any]:
        """Which judge produced the results and why it was chosen."""
        return {
            "kind": self.kind,
            "model": self.model,
            "repeats": self.repeats,
            "selected_because": self.reason,
            "task": self.task,
        }
