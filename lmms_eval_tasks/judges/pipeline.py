"""The judging pipeline every judged benchmark uses: ``JudgeItem``s -> judge x repeats -> ``JudgedBatch``,
the parsed verdict matrix with counts, usage and settings (the policies: docs/judges.md)."""

from __future__ import annotations

import base64
import io
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from loguru import logger

from lmms_eval_tasks.environment import judge_setting
from lmms_eval_tasks.judges.base import USAGE_COUNTERS, Judge, JudgeReply, JudgeRequest
from lmms_eval_tasks.judges.config import numeric_setting
from lmms_eval_tasks.judges.integrity import (
    LENGTH_REFUSED,
    Conflict,
    fold_text,
    masked_reply,
    without_model_lines,
)
from lmms_eval_tasks.judges.redact import scrub

CONTENT_FREE = "content-free answer"  # the reason of a cell rejected without asking the judge
JUDGED, UNPARSEABLE, UNJUDGED = "judged", "unparseable", "unjudged"
CONFLICTING = "conflicting"  # the reply holds two conflicting verdicts of the judge's own: no verdict
MODEL_FAILURE = "model_failure"  # refused as too long, or no verdict and planted markers: the model's failure
MASKED = "masked"  # masking the model's quoted text removed or changed the judge's verdict
VERDICT_MASKED = "the model's text removed or changed the judge's verdict"
_NO_MODEL_FAILURE = object()


class JudgingFailed(RuntimeError):
    """A judged task ended with no judged item (endpoint down, wrong URL, no quota...): no metric exists."""


@dataclass(frozen=True)
class JudgeItem:
    """One thing to judge: a unique id, the rendered prompt, the rule judge's reply, optional system/image
    (``image``: bytes, a PIL image or an ``http(s)://`` / ``data:`` URL, sent to an LLM judge only)."""

    item_id: str
    prompt: str
    rule_reply: str | None = None
    system: str | None = None
    image: Any = None
    model_text: tuple[str, ...] = ()  # the model-written texts the prompt quotes (masked out of replies)
    carries_markers: bool = False  # the model text holds the judge's own markers (screened by the benchmark)
    content_free: bool = False  # the model's answer has no content (framework.screening): never sent

    def request(self) -> JudgeRequest:
        """The judge request for this item."""
        return JudgeRequest(
            prompt=self.prompt, rule_reply=self.rule_reply, system=self.system, image=_image_url(self.image)
        )


@dataclass(frozen=True)
class VerdictCell:
    """One item x repeat: the parsed verdict (None unless ``status`` is "judged"), raw reply, reason."""

    status: str  # JUDGED, UNPARSEABLE (unreadable reply), CONFLICTING, MASKED, MODEL_FAILURE or UNJUDGED
    verdict: Any = None
    reply: str | None = None
    error: str | None = None  # why there is no verdict; secret-free
    cached: bool = False
    glued: bool = False  # a line of the model's text stands glued into the judge's words (counted)

    @property
    def judged(self) -> bool:
        """True when this cell holds a verdict (the judge's, or the one a model failure decides)."""
        return self.status in (JUDGED, MODEL_FAILURE)


@dataclass
class JudgedBatch:
    """What ``judge_items`` returns: the verdict matrix and everything a report needs about it."""

    item_ids: list[str]
    cells: list[list[VerdictCell]]
    repeats: int
    settings: dict[str, Any]
    usage: dict[str, Any]
    desc: str = "judging"
    max_unjudged: float = 0.05
    last_error: str | None = None
    describe: dict[str, Any] = field(default_factory=dict)

    def verdicts(self) -> list[list[Any]]:
        """``[item][repeat]`` parsed verdicts; None = no verdict (unjudged or unparseable)."""
        return [[cell.verdict if cell.judged else None for cell in row] for row in self.cells]

    def replies(self) -> list[list[str | None]]:
        """``[item][repeat]`` raw reply texts (None when the judge gave none)."""
        return [[cell.reply for cell in row] for row in self.cells]

    def errors(self) -> list[list[str | None]]:
        """``[item][repeat]`` reasons for a missing verdict (None where there is a verdict)."""
        return [[cell.error for cell in row] for row in self.cells]

    def counts(self) -> dict[str, int]:
        """Items, cells, judged / unparseable / unjudged cells, items with at least one missing verdict."""
        statuses = Counter(cell.status for row in self.cells for cell in row)
        failures = [cell.error or "" for row in self.cells for cell in row if cell.status == MODEL_FAILURE]
        why = {"too_long": LENGTH_REFUSED, "content_free": CONTENT_FREE, "masked": VERDICT_MASKED}
        by_cause = {f"model_failure_{kind}": sum(e.startswith(why[kind]) for e in failures) for kind in why}
        return {
            "items": len(self.cells),
            "cells": len(self.cells) * self.repeats,
            "judged": statuses[JUDGED],
            "unparseable": statuses[UNPARSEABLE],
            "conflicting": statuses[CONFLICTING],
            "masked": statuses[MASKED],
            "verdict_fragments": sum(1 for row in self.cells for cell in row if cell.glued),
            "model_failure": statuses[MODEL_FAILURE],
            **by_cause,
            "unjudged": statuses[UNJUDGED],
            "items_missing_a_verdict": sum(1 for row in self.cells if not all(cell.judged for cell in row)),
        }

    def unjudged(self) -> list[dict[str, Any]]:
        """One entry per item missing a verdict in any repeat: id, those repeats, the last reason."""
        entries = []
        for item_id, row in zip(self.item_ids, self.cells, strict=True):
            missing = [repeat for repeat, cell in enumerate(row) if not cell.judged]
            if missing:
                entries.append(
                    {"item_id": item_id, "repeats": missing, "error": row[missing[-1]].error or "unknown"}
                )
        return entries

    def any_judged(self) -> bool:
        """True when at least one cell holds a verdict (always True for an empty batch: nothing to judge)."""
        return not self.cells or any(cell.judged for row in self.cells for cell in row)

    def require_judged(self, task: str) -> None:
        """Raise JudgingFailed, saying why and with the last (redacted) error, when no item got a verdict."""
        if not self.any_judged():
            raise JudgingFailed(failure_message(task, [self]))

    def report(self) -> dict[str, Any]:
        """JSON-safe summary for a pack report: settings, counts, usage, the unjudged list."""
        return {
            "desc": self.desc,
            "settings": self.settings,
            "counts": self.counts(),
            "usage": self.usage,
            "unjudged": self.unjudged(),
            "max_unjudged": self.max_unjudged,
        }


def failure_message(task: str, batches: Sequence[JudgedBatch]) -> str:
    """The one-line reason a judged task has no result: counts, judge, endpoint and last error."""
    cells = sum(len(batch.cells) * batch.repeats for batch in batches)
    last = next((batch.last_error for batch in reversed(batches) if batch.last_error), None) or "unknown"
    settings = batches[-1].settings if batches else {}
    describe = batches[-1].describe if batches else {}
    endpoint = describe.get("endpoint")
    where = f" at {endpoint}" if endpoint else ""
    from lmms_eval_tasks.documentation import doc

    return scrub(
        f"{task}: judging failed entirely: none of {cells} judge replies gave a verdict "
        f"(judge {settings.get('kind')}/{settings.get('model')}{where}); last error: {last}. "
        f"No metric can be computed: check the endpoint (see {doc('judges.md')}), or use the offline rule "
        "judge "
        "(LMMS_EVAL_TASKS_JUDGE=rule) and say so when citing numbers"
    )


def protocol_repeats(judge: Judge, protocol_default: int, task: str | None) -> int:
    """Repeats when the caller gave none: the env setting if set, else 1 for the rule judge (no spread),
    else the benchmark protocol's number (e.g. 3 for HallusionBench)."""
    if judge_setting("repeats", task):
        return int(judge.repeats)
    return 1 if judge.kind == "rule" else protocol_default


def _usage_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    delta: dict[str, Any] = {"kind": after.get("kind"), "model": after.get("model")}
    for name in USAGE_COUNTERS:
        delta[name] = int(after.get(name, 0) or 0) - int(before.get(name, 0) or 0)
    cost_before, cost_after = before.get("estimated_cost_usd"), after.get("estimated_cost_usd")
    delta["estimated_cost_usd"] = None if cost_after is None else round(cost_after - (cost_before or 0.0), 6)
    return delta


def _model_failure(cell: VerdictCell, item: JudgeItem, verdict: Any) -> VerdictCell:
    """The cell as the model's failure when the model caused the missing verdict (too long for the judge,
    or planted markers and no verdict of the judge's own); unchanged otherwise."""
    if verdict is _NO_MODEL_FAILURE or cell.judged:
        return cell
    if cell.status == UNJUDGED and (cell.error or "").startswith(LENGTH_REFUSED):
        if not _model_text_dominates(item):  # the image or the template filled the window: not the model
            error = f"{cell.error} (not the model's text: unjudged)"[:400]
            return VerdictCell(UNJUDGED, None, None, error, cell.cached)
        reason = f"{cell.error}: the model's output is too long for the judge, scored as rejected"
    elif cell.status == MASKED:
        reason = f"{cell.error}: scored as rejected (the model's text must not take the judge's verdict)"
    elif cell.status in (UNPARSEABLE, CONFLICTING) and item.carries_markers:
        reason = (
            f"{cell.error}; the model's output carries the judge's own markers: scored as rejected "
            "(a planted verdict must not leave the denominator)"
        )
    else:
        return cell
    return VerdictCell(MODEL_FAILURE, verdict, cell.reply, reason[:400], cell.cached)


def _model_text_dominates(item: JudgeItem) -> bool:
    """True when the model's text is the larger part of the request (longer than the prompt's other text,
    the system message and the image as sent together): only then is a refusal for length the model's."""
    model = sum(len(text) for text in item.model_text)
    rest = len(item.prompt) - model + len(item.system or "") + len(_image_url(item.image) or "")
    return model > 0 and model >= rest


_NOT_THE_JUDGES = object()  # the verdict read is not the one the judge's own words hold


def _not_the_judges(
    parse: Callable[[str], Any], reply: str, model_text: tuple[str, ...], verdict: Any, chose: bool
) -> bool:
    """True when the verdict read differs from the verdict of the judge's words alone (every model line cut
    out, standalone or not) and either those words hold a verdict (a quote after the judge's own was read),
    or masking picked among the reply's verdicts (a model line equal to the judge's verdict line masked),
    or the reply with only the short model texts the judge quoted cut holds another verdict (a model line
    cut the judge's own, a short one it quoted after it was read; 'Judgement: "Yes"' alone stands)."""
    own, empty = parse(without_model_lines(reply, model_text)), parse("")
    if own == verdict or isinstance(own, Conflict) and isinstance(verdict, Conflict):
        return False
    holds = lambda found: found is not None and not isinstance(found, Conflict) and found != empty  # noqa: E731
    if chose or holds(own):
        return True
    short = parse(without_model_lines(reply, model_text, short_only=True))
    return holds(verdict) and holds(short) and short != verdict


def _parse_cell(reply: Any, parse: Callable[[str], Any], item: JudgeItem, mask: bool = True) -> VerdictCell:
    if reply.text is None:
        return VerdictCell(UNJUDGED, None, None, reply.error or "unknown error", reply.cached)
    try:
        masked, glued = masked_reply(reply.text, item.model_text) if mask else (reply.text, False)
        verdict = parse(fold_text(masked) if mask else masked)
        # the judge's own verdict, read as written: masking may reveal it, never remove or change it
        own = parse(fold_text(reply.text)) if masked != reply.text else verdict
        chose = masked != reply.text and (own is None or isinstance(own, Conflict))  # masking picked one
        if mask and _not_the_judges(parse, reply.text, item.model_text, verdict, chose):
            own = _NOT_THE_JUDGES
    except Exception as error:  # a parser must not crash scoring: the reply is kept, the cell counted
        failure = f"reply parser failed: {type(error).__name__}: {error}"[:300]
        return VerdictCell(UNPARSEABLE, None, reply.text, failure, reply.cached)
    shown = reply.text if len(reply.text) <= 80 else reply.text[:77] + "..."
    if own is not None and not isinstance(own, Conflict) and verdict != own:
        return VerdictCell(MASKED, None, reply.text, f"{VERDICT_MASKED}: {shown!r}", reply.cached)
    if isinstance(verdict, Conflict):
        error = f"conflicting verdicts in reply: {shown!r}"
        return VerdictCell(CONFLICTING, None, reply.text, error, reply.cached)
    if verdict is None:
        return VerdictCell(UNPARSEABLE, None, reply.text, f"unparseable reply: {shown!r}", reply.cached)
    return VerdictCell(JUDGED, verdict, reply.text, None, reply.cached, glued)


def judge_items(
    items: Sequence[JudgeItem],
    judge: Judge,
    *,
    parse: Callable[[str], Any],
    repeats: int | None = None,
    task: str | None = None,
    desc: str = "judging",
    max_unjudged: float | None = None,
    mask_model_text: bool = True,
    model_failure_verdict: Any = _NO_MODEL_FAILURE,
    reject_content_free: bool = False,
) -> JudgedBatch:
    """Judge every item ``repeats`` times (default: the judge's) and parse each reply into a verdict; never
    raises for a failed item, ValueError / TypeError for duplicate ids or malformed items.
    ``mask_model_text``: mask the items' model text out of replies (False: official parse of the raw reply);
    ``model_failure_verdict``: the verdict of a cell the model's failure decides (unset: none);
    ``reject_content_free``: content-free items get it without a call."""
    threshold = float(numeric_setting("max_unjudged", max_unjudged, task))  # the share above which it warns
    for index, item in enumerate(items):
        if not isinstance(item, JudgeItem):
            raise TypeError(f"item {index}: expected JudgeItem, got {type(item).__name__}")
        if not isinstance(item.item_id, str) or not item.item_id:
            raise TypeError(f"item {index}: item_id must be a non-empty str, got {item.item_id!r}")
    if reject_content_free and model_failure_verdict is _NO_MODEL_FAILURE:
        raise ValueError("reject_content_free needs model_failure_verdict (the verdict of a rejected item)")
    ids = [item.item_id for item in items]
    if len(set(ids)) != len(ids):
        duplicate = next(item_id for item_id, count in Counter(ids).items() if count > 1)
        raise ValueError(f"judge items must have unique ids; {duplicate!r} appears more than once")
    describe = judge.describe()
    resolved = judge._resolve_repeats(repeats)
    settings = {
        "kind": judge.kind,
        "model": judge.model,
        "repeats": resolved,
        "namespace": describe.get("cache_namespace"),
    }
    before = judge.usage()
    rejected = {index for index, item in enumerate(items) if reject_content_free and item.content_free}
    sent = [item for index, item in enumerate(items) if index not in rejected]
    replies = judge.judge([item.request() for item in sent], repeats=resolved, desc=desc) if sent else []
    usage = _usage_delta(before, judge.usage())
    sent_cells = iter(
        [
            _model_failure(_parse_cell(reply, parse, item, mask_model_text), item, model_failure_verdict)
            for reply in row
        ]
        for item, row in zip(sent, replies, strict=True)
    )
    reason = f"{CONTENT_FREE}: rejected without asking the judge (a content-free answer earns no credit)"
    cells = [
        [VerdictCell(MODEL_FAILURE, model_failure_verdict, None, reason) for _ in range(resolved)]
        if index in rejected
        else next(sent_cells)
        for index in range(len(items))
    ]
    missing = [cell for row in cells for cell in row if cell.error is not None and not cell.judged]
    # prefer a transport error (what the endpoint said) over "unparseable" as the reason shown to users
    transport = [cell for cell in missing if cell.status == UNJUDGED]
    last_error = (transport or missing)[-1].error if missing else None
    batch = JudgedBatch(
        item_ids=ids,
        cells=cells,
        repeats=resolved,
        settings=settings,
        usage=usage,
        desc=desc,
        max_unjudged=threshold,
        last_error=None if last_error is None else scrub(last_error),
        describe=describe,
    )
    counts = batch.counts()
    share = counts["items_missing_a_verdict"] / len(cells) if cells else 0.0
    if share > threshold:
        reasons = Counter(
            (cell.error or "unknown")[:120] for row in cells for cell in row if not cell.judged
        ).most_common(3)
        logger.warning(
            f"!!! {desc}: {counts['items_missing_a_verdict']} of {counts['items']} items "
            f"({100 * share:.1f} %) are missing a verdict in at least one repeat, above the "
            f"{100 * threshold:g} % threshold (LMMS_EVAL_TASKS_JUDGE_MAX_UNJUDGED). Metrics leave them out; "
            f"do not cite them without saying so. Top reasons: "
            + "; ".join(f"{count} x {reason}" for reason, count in reasons)
        )
    return batch


def replies_log(replies: Sequence[JudgeReply]) -> dict[str, Any]:
    """One item's raw replies for per-sample logs: text and error per repeat, cache flags, unjudged count."""
    return {
        "judge_replies": [reply.text for reply in replies],
        "judge_errors": [reply.error for reply in replies],
        "judge_cached": [reply.cached for reply in replies],
        "judge_unjudged_repeats": sum(1 for reply in replies if reply.text is None),
    }


def repeat_spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """Mean, sample standard deviation (n-1; 0 for one repeat), min and max of a metric across repeats."""
    values = [float(value) for value in values]
    if not values:
        return {"n": 0, "mean": None, "std": None, "min": None, "max": None}
    mean = sum(values) / len(values)
    variance = sum((value - mean) ** 2 for value in values) / (len(values) - 1) if len(values) > 1 else 0.0
    std = math.sqrt(variance)
    return {"n": len(values), "mean": mean, "std": std, "min": min(values), "max": max(values)}


def judge_metadata(judge: Judge) -> dict[str, Any]:
    """What results should record about the judge: its settings and its usage and cost so far."""
    return {"judge": judge.describe(), "judge_usage": judge.usage()}


class LazyJudge:
    """A judge created on first use from a spec (None/"auto", "openai", "rule" or a Judge), closed if ours:
    with every verdict supplied, no judge (and no warning) is created."""

    def __init__(self, spec: Any = None, *, model: str | None = None, task: str | None = None) -> None:
        self.spec, self.model, self.task = spec, model, task
        self.created: Judge | None = None

    def get(self) -> Judge:
        """The judge: the given object, or one made by ``get_judge`` on first call."""
        if self.spec is not None and not isinstance(self.spec, str):
            return self.spec
        if self.created is None:
            from lmms_eval_tasks.judges.factory import get_judge

            kind = None if self.spec in (None, "auto") else self.spec
            self.created = get_judge(kind, model=self.model, task=self.task)
        return self.created

    def close(self) -> None:
        """Close the judge if this object created it."""
        if self.created is not None:
            self.created.close()

    def __enter__(self) -> LazyJudge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _image_url(image: Any) -> str | None:
    """An image as a URL the chat API accepts: URLs pass through, bytes / PIL images become data URLs."""
    if image is None:
        return None
    if isinstance(image, str):
        if not image.startswith(("http://", "https://", "data:image/")):
            raise TypeError("JudgeItem.image: a str must be an http(s):// or data:image/ URL")
        return image
    if hasattr(image, "save") and hasattr(image, "mode"):  # PIL image
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        image = buffer.getvalue()
    if isinstance(image, bytes | bytearray):
        data = bytes(image)
        mime = _image_mime(data)
        return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    raise TypeError(f"JudgeItem.image: expected bytes, a PIL image or a URL, got {type(image).__name__}")


def _image_mime(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    raise TypeError("JudgeItem.image: bytes are not PNG, JPEG, WebP or GIF")
