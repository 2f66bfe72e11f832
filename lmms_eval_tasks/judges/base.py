"""The judge data types and the behaviour shared by every judge (usage counters, unjudged summary)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from loguru import logger

# a judge's usage counters, in the order its usage() reports them (the tokens after the unjudged reasons)
USAGE_COUNTERS = tuple(
    "replies calls cache_hits retries unjudged refused_too_long prompt_tokens completion_tokens".split()
)


@dataclass(frozen=True)
class JudgeRequest:
    """One item to judge: the filled-in prompt, the rule judge's answer for it, an optional system message
    and an optional image URL (``http(s)://`` or ``data:image/...;base64,...``) sent with the prompt."""

    prompt: str
    rule_reply: str | None = None
    system: str | None = None
    image: str | None = None

    def messages(self) -> list[dict[str, Any]]:
        """The chat messages sent to an LLM judge (text only, or text plus one image part)."""
        content: Any = self.prompt
        if self.image is not None:
            image = {"type": "image_url", "image_url": {"url": self.image}}
            content = [{"type": "text", "text": self.prompt}, image]
        system = [] if self.system is None else [{"role": "system", "content": self.system}]
        return [*system, {"role": "user", "content": content}]


@dataclass(frozen=True)
class JudgeReply:
    """The judge's reply for one request and one repeat; ``text`` is None when the item is unjudged."""

    text: str | None
    error: str | None
    cached: bool
    repeat: int


def validate_requests(requests: Sequence[JudgeRequest]) -> None:
    """Raise TypeError naming the first item that is not a well-formed JudgeRequest."""
    if isinstance(requests, JudgeRequest | str):
        raise TypeError("judge() takes a sequence of JudgeRequest, not a single request")
    for index, request in enumerate(requests):
        if not isinstance(request, JudgeRequest):
            raise TypeError(f"request {index}: expected JudgeRequest, got {type(request).__name__}")
        if not isinstance(request.prompt, str):
            raise TypeError(
                f"request {index}: field 'prompt' must be a str, got {type(request.prompt).__name__}"
            )
        for name in ("system", "rule_reply", "image"):  # the image as a URL
            if not isinstance(getattr(request, name), str | None):
                raise TypeError(f"request {index}: field {name!r} must be a str or None")


class Judge:
    """Common base: ``kind``, ``model``, ``repeats``, thread-safe usage counters and the unjudged warning."""

    kind: str = "base"
    model: str = ""
    repeats: int = 1

    def __init__(self) -> None:
        self._usage_lock = threading.Lock()
        self._counters: Counter[str] = Counter()
        self._unjudged_reasons: Counter[str] = Counter()

    # -- public API -------------------------------------------------------------------------------------
    def judge(
        self, requests: Sequence[JudgeRequest], *, repeats: int | None = None, desc: str = "judging"
    ) -> list[list[JudgeReply]]:
        """Judge every request ``repeats`` times; ``result[i][r]`` is request i's reply for repeat r."""
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """JSON-safe settings to record in results (never the key)."""
        raise NotImplementedError

    def usage(self) -> dict[str, Any]:
        """Counters since this judge was created: calls, cache hits, retries, unjudged, tokens, cost."""
        with self._usage_lock:
            counters = dict(self._counters)
            reasons = dict(self._unjudged_reasons.most_common(10))
        return {
            "kind": self.kind,
            "model": self.model,
            **{name: counters.get(name, 0) for name in USAGE_COUNTERS[:6]},
            "unjudged_reasons": reasons,
            **{name: counters.get(name, 0) for name in USAGE_COUNTERS[6:]},
            "estimated_cost_usd": self._estimated_cost(counters),
        }

    def close(self) -> None:
        """Release resources (HTTP client, cache connection); the judge is unusable afterwards."""

    def __enter__(self) -> Judge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- helpers for subclasses -------------------------------------------------------------------------
    def _estimated_cost(self, counters: dict[str, int]) -> float | None:
        return 0.0

    def _count(self, **amounts: int) -> None:
        with self._usage_lock:
            self._counters.update(amounts)

    def _resolve_repeats(self, repeats: int | None) -> int:
        repeats = self.repeats if repeats is None else repeats
        if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
            raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
        return repeats

    def _finish(self, results: list[list[JudgeReply]], desc: str) -> list[list[JudgeReply]]:
        """Count the run's unjudged replies and warn loudly when there are any."""
        from lmms_eval_tasks.judges.integrity import LENGTH_REFUSED

        reasons: Counter[str] = Counter()
        total = too_long = 0
        for replies in results:
            for reply in replies:
                total += 1
                if reply.text is None and (reply.error or "").startswith(LENGTH_REFUSED):
                    too_long += 1  # the model's failure: a judged benchmark scores it as rejected
                elif reply.text is None:
                    reasons[reply.error or "unknown error"] += 1
        if too_long:
            logger.warning(
                f"{desc}: the judge refused {too_long} of {total} prompts as too long; judged benchmarks "
                "score them as rejected when the model's output is the larger part of the prompt, else as "
                "unjudged (an image or template filling the judge's window)"
            )
        unjudged = sum(reasons.values())
        with self._usage_lock:
            self._counters.update(replies=total, unjudged=unjudged, refused_too_long=too_long)
            self._unjudged_reasons.update(reasons)
        if unjudged:
            items = sum(1 for replies in results if any(reply.text is None for reply in replies))
            summary = "; ".join(f"{count} x {reason}" for reason, count in reasons.most_common(5))
            logger.warning(
                f"!!! {desc}: {unjudged} of {total} judge replies are UNJUDGED "
                f"({items} of {len(results)} items, judge {self.kind}/{self.model}). They are not scored as "
                f"answers; metrics that need them exclude them and report the count. Reasons: {summary}"
            )
        return results
