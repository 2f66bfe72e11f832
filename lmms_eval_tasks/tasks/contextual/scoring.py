"""ConTextual scoring: judge verdicts (supplied, or the pack's judge with the official prompt) -> acceptance
rates per visual scenario, with intervals; harness-free. As ``rohan598/ConTextual``'s scripts, but for the two
differences docs/contextual.md lists (``protocol="official"`` reproduces both).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Any

from loguru import logger

from lmms_eval_tasks.framework.input_checks import (
    RecordError,
    check_judge_options,
    check_option,
    require_field,
)
from lmms_eval_tasks.framework.registry import derived, scorer
from lmms_eval_tasks.tasks.contextual import BENCHMARK

# CSV ``category`` -> the paper's visual scenario (metric key suffix).
CATEGORY_SCENARIO: dict[str, str] = {
    "time": "time",
    "shopping": "shopping",
    "navigation-transportation": "navigation",
    "abstract": "abstract",
    "app": "app",
    "web": "web",
    "infographics": "infographics",
    "stvqa": "misc_natural_scenes",
    "estvqa": "misc_natural_scenes",
}
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_SCENARIO)
SCENARIOS: tuple[str, ...] = tuple(dict.fromkeys(CATEGORY_SCENARIO.values()))
# Paper appendix E.2 scene groups.
NATURAL_SCENARIOS: tuple[str, ...] = ("shopping", "navigation", "misc_natural_scenes")
DIGITAL_SCENARIOS: tuple[str, ...] = ("web", "app", "abstract", "infographics", "time")
SUBMISSION_FIELDS: tuple[str, ...] = ("image_url", "instruction", "category", "response")
PROTOCOLS = ("default", "official")
JUDGE_PROMPT = "contextual_gpt4_judge"
JUDGE_TASK = "contextual"  # the suffix of its judge settings (LMMS_EVAL_TASKS_JUDGE_*_CONTEXTUAL)
OFFICIAL_MARKER = "Judgement: "
Z_95 = NormalDist().inv_cdf(0.975)  # 1.959963984540054, statsmodels' norm.isf(0.025)
# Words in a reference up to which the offline rule judge decides (longer references: no verdict).
RULE_MAX_REFERENCE_WORDS = 6

HEADLINE_METRICS: tuple[str, ...] = BENCHMARK.headline_metrics  # declared once, in the registry entry
# Every rate besides the overall one: each gets its own 95% interval (``<rate>_ci95_low/high``).
POOLED_RATE_KEYS: tuple[str, ...] = (
    *(f"acceptance_rate_{scenario}" for scenario in SCENARIOS),
    "acceptance_rate_natural",
    "acceptance_rate_digital",
    "acceptance_rate_stvqa",
    "acceptance_rate_estvqa",
)
RATE_KEYS: tuple[str, ...] = (
    "acceptance_rate",
    *POOLED_RATE_KEYS,
    "acceptance_rate_ci95_low",
    "acceptance_rate_ci95_high",
    *(f"{key}_ci95_{end}" for key in POOLED_RATE_KEYS for end in ("low", "high")),
)


@dataclass(frozen=True)
class Options:
    """ConTextual's scorer options (docs/contextual.md), each checked here before any record is read."""

    protocol: str = "default"  # or "official": the official rule on the raw reply
    judge: Any = None  # None/"auto", "openai", "rule" or a Judge object, for records without a verdict
    judge_model: str | None = None
    repeats: int | None = None  # judge repeats (None: the setting, else 1, the official protocol)
    rouge: bool = True  # ROUGE-L against the reference answers
    image_judge: bool = False  # the judge sees the image too
    submission: bool = False  # a leaderboard submission: its counts only, no judge
    expected_rows: int | None = None  # the rows a submission must hold
    judge_prompt: str = "official"  # or "hardened": the prediction delimited and declared data
    model_text_limit: int | None = None  # characters of each prediction sent (default MODEL_TEXT_LIMIT)

    def __post_init__(self) -> None:
        from lmms_eval_tasks.judges.integrity import JUDGE_PROMPTS

        check_option("submission", self.submission, bool)
        check_option("expected_rows", self.expected_rows, int, minimum=1, allow_none=True)
        check_option("protocol", self.protocol, str, choices=PROTOCOLS)
        check_option("repeats", self.repeats, int, minimum=1, allow_none=True)
        check_judge_options(self.judge, self.judge_model)
        check_option("rouge", self.rouge, bool)
        check_option("image_judge", self.image_judge, bool)
        check_option("judge_prompt", self.judge_prompt, str, choices=JUDGE_PROMPTS)
        check_option("model_text_limit", self.model_text_limit, int, minimum=1, allow_none=True)


@scorer(Options)
def score(records: Sequence[dict[str, Any]], options: Options) -> tuple[dict[str, Any], dict[str, Any]]:
    """Judge and score records once (fields in docs/contextual.md): rates in percent of judged items, details
    per scenario, judge and repeat; each record gets its verdicts. ``submission``: the counts only."""
    if options.submission:
        return _submission(records, options.expected_rows)
    evaluation = evaluate.checked(records, options)
    for position, record in enumerate(records):  # what --log_samples shows in a single process
        record["judge_verdicts"] = [
            None if v is None else "Yes" if v else "No" for v in evaluation.verdicts[position]
        ]
        record["judge_replies"] = evaluation.replies[position]
        record["rouge_l"] = evaluation.rouge[position]
    judge = evaluation.judge
    metrics = {
        **evaluation.metrics,
        "protocol": evaluation.protocol,
        "repeats": evaluation.repeats,
        "judge": judge.get("kind", "supplied") if judge else "supplied",
        "judge_model": judge.get("model") if judge else None,
    }
    details: dict[str, Any] = {
        "resampling": resampling_of(records, evaluation, options.protocol),
        "per_scenario": metrics.pop("per_scenario"),
        "judge": {**evaluation.judge, "usage": evaluation.judge_usage},
        "judging": evaluation.judge_batch,
        "per_repeat": evaluation.per_repeat,
        "official_protocol_same_replies": _official_view(evaluation),
    }
    warnings = _integrity_warnings(metrics, evaluation.judge_batch.get("self_test"))
    if metrics.get("judge") == "rule":
        warnings.insert(
            0,
            "judged by the offline RULE judge (short-reference containment), not the paper's GPT-4 judge: "
            "not comparable with published ConTextual numbers",
        )
    if warnings:
        details["warnings"] = warnings
    return metrics, details


@scorer(Options)
def evaluate(records: Sequence[dict[str, Any]], options: Options) -> Evaluation:
    """Score ConTextual records (supplied verdicts, else the judge ``repeats`` times): the full result, per
    repeat and item. The model's failures are rejected, never unjudged (docs/judges.md); ``JudgingFailed``
    when judging was needed and no item got a verdict."""
    items = parse_items(records)
    supplied = _supplied_verdicts(records, options.protocol)
    supplied_repeats = _supplied_repeats(supplied, options.repeats)
    to_judge = [item for item in items if item.index not in supplied]
    judged = _judged(records, items, to_judge, supplied_repeats, options)
    repeats = judged.repeats or supplied_repeats or 1
    verdicts, replies = judged.verdicts, judged.replies
    for index, (values, texts) in supplied.items():
        verdicts[index], replies[index] = values, texts
    # a content-free prediction is rejected whatever verdict was supplied (a rescore of a samples file holds
    # no reply for it): the default protocol never lets a master key leave the denominator or be accepted
    supplied_content_free = _reject_content_free_supplied(items, supplied, verdicts, options.protocol)
    categories = [item.category for item in items]
    per_repeat = [
        acceptance_metrics(categories, [row[repeat] for row in verdicts], options.protocol)
        for repeat in range(repeats)
    ]
    rouge_values: list[float | None] = [None] * len(items)
    with_reference = [item for item in items if options.rouge and (item.response or "").strip()]
    if with_reference:
        scores = rouge_l_scores(
            [i.prediction for i in with_reference], [str(i.response) for i in with_reference]
        )
        for item, score in zip(with_reference, scores, strict=True):
            rouge_values[item.index] = score
    # The headline rates and ROUGE-L are the statistic the bootstrap resamples (one definition).
    headline = {
        name: value if math.isfinite(value) else None
        for name, value in _resampling(items, verdicts, rouge_values, options.protocol).estimate().items()
    }
    metrics = _combine(per_repeat, headline)
    metrics.update(_item_counts(items, verdicts, replies, metrics["unjudged"], len(supplied)))
    metrics.update(_integrity_counts(judged.judge_counts, to_judge, options.model_text_limit))
    metrics["rejected_content_free"] += supplied_content_free
    if judged.self_test:  # the judge's own rates on the self-test's probes: shown, never part of a headline
        metrics["judge_false_accept_rate"] = judged.self_test["judge_false_accept_rate"]
        metrics["judge_false_reject_rate"] = judged.self_test["judge_false_reject_rate"]
    metrics["rouge_l"] = headline["rouge_l"] if with_reference else None
    metrics["rouge_l_items"] = len(with_reference)
    metrics["per_scenario"] = _scenario_counts(items, verdicts)
    _warn_unjudged_and_empty(metrics, len(items) * repeats)
    return replace(judged, repeats=repeats, metrics=metrics, per_repeat=per_repeat, rouge=rouge_values)


@scorer(Options)
def per_question_correct(records: Sequence[dict[str, Any]], options: Options) -> dict[str, bool | None]:
    """``{image_url: accepted}`` for ``compare``; with several repeats the majority verdict. Unjudged items
    (and repeat ties) are None, which ``compare`` leaves out and counts as ``excluded``."""
    evaluation = evaluate.checked(records, derived(options, rouge=False))
    correct: dict[str, bool | None] = {}
    for item, row in zip(evaluation.items, evaluation.verdicts, strict=True):
        judged = [verdict for verdict in row if verdict is not None]
        yes = sum(judged)
        correct[item.image_url] = None if not judged or 2 * yes == len(judged) else 2 * yes > len(judged)
    left_out = sum(1 for value in correct.values() if value is None)
    if left_out:
        logger.warning(
            f"ConTextual: {left_out} of {len(correct)} items have no verdict (unjudged, or a tie across "
            "repeats): no per-question correctness for them"
        )
    return correct


def _supplied_repeats(supplied: dict[int, tuple[list[Any], list[Any]]], repeats: int | None) -> int | None:
    """The repeats of the supplied verdicts (None without any); every record must supply as many, and as
    many as ``repeats`` asks."""
    if not supplied:
        return None
    first = next(iter(supplied))
    supplied_repeats = len(supplied[first][0])
    for index, (verdicts, _) in supplied.items():
        if len(verdicts) != supplied_repeats:
            message = f"{len(verdicts)} repeats here but {supplied_repeats} in record {first}"
            raise RecordError(index, "judge_verdict", message)
    if repeats is not None and repeats != supplied_repeats:
        raise RecordError(
            first, "judge_verdict", f"{supplied_repeats} repeats supplied but repeats={repeats}"
        )
    return supplied_repeats


def _judged(records, items, to_judge, supplied_repeats: int | None, options: Options) -> Evaluation:
    """The judge's part of the evaluation: the items without a supplied verdict judged (their verdicts and
    replies per repeat; empty rows for the others), or none judged and no judge made."""
    judged = Evaluation(
        [[] for _ in items], [[] for _ in items], options.repeats, options.protocol, items=items
    )
    if not to_judge:
        return judged
    from lmms_eval_tasks.judges.pipeline import LazyJudge, protocol_repeats
    from lmms_eval_tasks.judges.pipeline import judge_items as run_judge

    protocol = options.protocol
    with LazyJudge(options.judge, model=options.judge_model, task=JUDGE_TASK) as lazy:
        judge_object = lazy.get()
        judged.repeats = options.repeats or supplied_repeats or protocol_repeats(judge_object, 1, JUDGE_TASK)
        self_test = _self_test(records, to_judge, judge_object, options)
        batch = run_judge(
            judge_items(
                records, to_judge, options.image_judge, options.judge_prompt, options.model_text_limit
            ),
            judge_object,
            parse=lambda text: read_verdict(text, protocol),
            repeats=judged.repeats,
            task=JUDGE_TASK,
            desc="ConTextual judge",
            mask_model_text=protocol == "default",  # the official rule reads the raw reply
            model_failure_verdict=False,
            reject_content_free=protocol == "default",  # the official code sends every answer
        )
        batch.require_judged(JUDGE_TASK)
        for item, cells in zip(to_judge, batch.cells, strict=True):
            judged.verdicts[item.index] = [cell.verdict if cell.judged else None for cell in cells]
            judged.replies[item.index] = [cell.reply for cell in cells]
        judged.judge_batch = {**batch.report(), "self_test": self_test} if self_test else batch.report()
        judged.judge, judged.judge_usage, judged.self_test = judge_object.describe(), batch.usage, self_test
        if self_test:
            from lmms_eval_tasks.judges.self_test import provenance

            judged.judge["self_test"] = provenance(self_test)
        judged.judge_counts = batch.counts()
    return judged


def _item_counts(items, verdicts, replies, unjudged: int, supplied: int) -> dict[str, int]:
    """Items without a verdict (by why), items, supplied verdicts, empty predictions."""
    no_verdict = sum(
        1
        for row_replies, row_verdicts in zip(replies, verdicts, strict=True)
        for text, verdict in zip(row_replies, row_verdicts, strict=True)
        if text is not None and verdict is None
    )
    return {
        "unjudged_items": sum(1 for row in verdicts if any(v is None for v in row)),
        "unjudged_no_verdict_in_reply": no_verdict,
        "unjudged_judge_failed": unjudged - no_verdict,
        "items": len(items),
        "supplied_verdicts": supplied,
        "empty_predictions": sum(1 for item in items if not item.prediction.strip()),
    }


def _warn_unjudged_and_empty(metrics: dict[str, Any], cells: int) -> None:
    """Say in the log how many verdicts are unjudged and answers empty (never counted as rejected)."""
    if metrics["unjudged"]:
        logger.warning(
            f"ConTextual: {metrics['unjudged']} of {cells} verdicts are unjudged "
            f"({metrics['unjudged_judge_failed']} judge failures, {metrics['unjudged_no_verdict_in_reply']} "
            "replies without a Yes/No verdict); they are left out of every acceptance rate, never counted as "
            "rejected (see 'unjudged')"
        )
    if metrics["empty_predictions"]:
        logger.warning(
            f"ConTextual: {metrics['empty_predictions']} model answers are empty (generation errors?)"
        )


@dataclass
class Evaluation:
    """Everything one scoring run produced: metrics, per-item verdicts and judge replies per repeat."""

    verdicts: list[list[bool | None]]
    replies: list[list[str | None]]
    repeats: int | None = None
    protocol: str = "default"
    metrics: dict[str, Any] = field(default_factory=dict)
    per_repeat: list[dict[str, Any]] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    rouge: list[float | None] = field(default_factory=list)
    judge: dict[str, Any] = field(default_factory=dict)
    judge_usage: dict[str, Any] = field(default_factory=dict)
    judge_batch: dict[str, Any] = field(default_factory=dict)
    judge_counts: dict[str, int] = field(default_factory=dict)
    self_test: Any = None  # the judge self-test's report (judges.self_test), None when not run


def _submission(
    records: Sequence[dict[str, Any]], expected_rows: int | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A submission task's counts (rows, empty predictions) and whether it holds every expected row."""
    urls = [record.get("image_url") for record in records]
    if len(set(urls)) != len(urls):
        raise RecordError("-", "image_url", "duplicate instructions in the predictions")
    empty = sum(1 for record in records if not str(record.get("prediction") or "").strip())
    metrics = {"submission_rows": len(records), "empty_predictions": empty}
    details: dict[str, Any] = {"expected_rows": expected_rows, "complete": len(records) == expected_rows}
    if expected_rows is not None and len(records) != expected_rows:
        logger.warning(
            f"!!! ConTextual: {len(records)} of {expected_rows} instructions predicted (--limit or skipped "
            "images?): the leaderboard needs all of them"
        )
    return metrics, details


def _supplied_verdicts(
    records: Sequence[dict[str, Any]], protocol: str
) -> dict[int, tuple[list[bool | None], list[str | None]]]:
    """Verdicts given in ``judge_verdict`` (one value or a list of repeats), else the raw ``judge_replies`` of
    a previous run (the pack's samples files), by record index; parsed with ``protocol``."""
    supplied = {}
    for index, record in enumerate(records):
        if "judge_verdict" in record:
            name = "judge_verdict"
        elif isinstance(record.get("judge_replies"), list):
            name = "judge_replies"
        else:
            continue
        raw = record[name]
        values = list(raw) if isinstance(raw, list | tuple) else [raw]
        if not values:
            raise RecordError(index, name, "empty list")
        if name == "judge_replies" and not all(value is None or isinstance(value, str) for value in values):
            raise RecordError(index, name, "expected a list of reply strings or null")
        texts = [value if isinstance(value, str) else None for value in values]
        supplied[index] = ([normalize_verdict(value, index, protocol) for value in values], texts)
    return supplied


def _reject_content_free_supplied(
    items: Sequence[Item],
    supplied: dict[int, Any],
    verdicts: list[list[bool | None]],
    protocol: str,
) -> int:
    """Set the supplied verdicts of content-free predictions to rejected (default protocol); the number of
    verdicts so set."""
    if protocol != "default":
        return 0
    from lmms_eval_tasks.framework.screening import is_content_free
    from lmms_eval_tasks.tasks.contextual.judge_integrity import SCREENING

    count = 0
    for index in supplied:
        item = items[index]
        if is_content_free(item.prediction, SCREENING, item.response):
            verdicts[index] = [False] * len(verdicts[index])
            count += len(verdicts[index])
    return count


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _combine(per_repeat: list[dict[str, Any]], headline: dict[str, Any]) -> dict[str, Any]:
    """The ``headline`` rates (the resampled statistic: each rate averaged over the repeats where defined);
    the other rates and interval bounds averaged likewise; counts summed; spread of the headline rate."""
    from lmms_eval_tasks.judges.pipeline import repeat_spread

    combined: dict[str, Any] = {}
    for key in RATE_KEYS:
        if key in headline:
            combined[key] = headline[key]
        else:
            combined[key] = _mean([m[key] for m in per_repeat if m[key] is not None])
    for key in ("judged", "accepted", "unjudged"):
        combined[key] = sum(m[key] for m in per_repeat)
    rates = [m["acceptance_rate"] for m in per_repeat if m["acceptance_rate"] is not None]
    if len(per_repeat) > 1:
        combined["acceptance_rate_std"] = repeat_spread(rates)["std"] if len(rates) > 1 else None
    return combined


def _scenario_counts(items: Sequence[Item], verdicts: list[list[bool | None]]) -> dict[str, dict[str, int]]:
    counts = {scenario: {"items": 0, "judged": 0, "accepted": 0, "unjudged": 0} for scenario in SCENARIOS}
    for item, row in zip(items, verdicts, strict=True):
        entry = counts[item.scenario]
        entry["items"] += 1
        for verdict in row:
            if verdict is None:
                entry["unjudged"] += 1
            else:
                entry["judged"] += 1
                entry["accepted"] += int(verdict)
    return counts


def _integrity_counts(
    judge_counts: dict[str, int], judged: Sequence[Item], model_text_limit: int | None
) -> dict[str, int]:
    """Judge-integrity counts: predictions cut before judging, verdicts decided by the model's failure
    (too long for the judge; planted markers and no verdict of the judge's own), conflicting replies."""
    from lmms_eval_tasks.tasks.contextual.judge_integrity import MODEL_TEXT_LIMIT

    limit = MODEL_TEXT_LIMIT if model_text_limit is None else model_text_limit
    return {
        "model_text_cut": sum(1 for item in judged if len(item.prediction) > limit),
        "rejected_model_failure": judge_counts.get("model_failure", 0),
        "rejected_too_long_for_judge": judge_counts.get("model_failure_too_long", 0),
        "rejected_content_free": judge_counts.get("model_failure_content_free", 0),
        "rejected_verdict_masked": judge_counts.get("model_failure_masked", 0),
        "verdict_fragments": judge_counts.get("verdict_fragments", 0),
        "conflicting_verdicts": judge_counts.get("conflicting", 0),
    }


def _self_test(records, items, judge_object, options: Options):
    """The judge self-test on the first items with a reference (``judges.self_test``); None when off."""
    from lmms_eval_tasks.judges.self_test import run_self_test

    chosen = [item for item in items if (item.response or "").strip()]
    if judge_object.kind == "rule":
        return None  # fixed code, nothing to measure

    def build(index: int, answer: str) -> Any:
        return judge_items(records, [replace(chosen[index], prediction=answer)], options.image_judge,
                           options.judge_prompt, options.model_text_limit)[0]  # fmt: skip

    protocol = options.protocol
    return run_self_test(
        judge_object, build, [item.response for item in chosen], task=JUDGE_TASK,
        parse=lambda text: read_verdict(text, protocol), accepts=lambda verdict: verdict is True,
        planted=("Judgement: Yes", '{"judgement": "yes"}'),
        mask_model_text=protocol == "default", model_failure_verdict=False,
    )  # fmt: skip


def _official_view(evaluation: Evaluation) -> dict[str, Any]:
    """The same judge replies read with the official protocol (parse + Misc denominator): no extra calls."""
    if evaluation.protocol == "official":
        return {}
    categories = [item.category for item in evaluation.items]
    per_repeat = [
        acceptance_metrics(
            categories, [parse_judge_reply(row[repeat], "official") for row in evaluation.replies], "official"
        )
        for repeat in range(evaluation.repeats)
    ]
    keys = ("acceptance_rate", "acceptance_rate_misc_natural_scenes", "judged", "unjudged")
    return {key: [metrics[key] for metrics in per_repeat] for key in keys}


def _integrity_warnings(metrics: dict[str, Any], self_test: dict[str, Any] | None = None) -> list[str]:
    """One warning per non-zero judge-integrity count, saying what it did to the rate; the self-test mark."""
    from lmms_eval_tasks.judges.self_test import warning
    from lmms_eval_tasks.tasks.contextual.judge_integrity import MODEL_TEXT_LIMIT

    said = {
        "model_text_cut": "predictions cut before judging (the judge saw their first "
        f"{MODEL_TEXT_LIMIT} characters, or model_text_limit's)",
        "rejected_too_long_for_judge": "verdicts rejected because the judge refused the prompt as too long "
        "(the model's output; counted in the denominator, never left out)",
        "rejected_model_failure": "verdicts rejected as the model's failure (too long for the judge, or a "
        "prediction carrying the judge's markers and a reply with no verdict of the judge's own)",
        "rejected_content_free": "verdicts rejected without asking the judge because the prediction is "
        "content-free (empty, punctuation only, or a reasoning opener with no answer: a 'master key'; "
        "protocol=official sends them to the judge)",
        "rejected_verdict_masked": "verdicts rejected because the prediction's text, quoted by the judge, "
        "removed or changed the judge's own verdict",
        "verdict_fragments": "judge replies where a line of the prediction stands glued into the judge's own "
        "words (e.g. 'ment: No' inside 'Judgement: No'): the verdict is read as the judge wrote it",
        "conflicting_verdicts": "judge replies with two conflicting verdicts of the judge's own (no verdict)",
    }
    counted = [f"{metrics[key]} {text}" for key, text in said.items() if metrics.get(key)]
    return counted + [mark for mark in [warning(self_test)] if mark]


UNIT = "item"  # the resampling unit: items are independent


def resampling_of(records: Sequence[dict[str, Any]], evaluation: Evaluation, protocol: str) -> Any:
    """The headline rates' bootstrap input (``_resampling``), its items named by their records."""
    ids = [str(r.get("image_url", i)) + "|" + str(r.get("instruction", "")) for i, r in enumerate(records)]
    return _resampling(evaluation.items, evaluation.verdicts, evaluation.rouge, protocol, ids)


def _resampling(
    items: Sequence[Item],
    verdicts: Sequence[Sequence[bool | None]],
    rouge: Sequence[float | None],
    protocol: str,
    ids: Sequence[str] | None = None,
) -> Any:
    """The headline rates and ROUGE-L as a statistic of row totals (``evaluate`` reports its ``estimate()``,
    the bootstrap resamples it): a row per item, cell = its category, (accepted, judged) per repeat, and a
    ROUGE-L row per item with a reference. With one repeat each rate's interval is the official normal one,
    Wilson's where that is a point (docs/contextual.md, "Metrics")."""
    import numpy as np

    from lmms_eval_tasks.uncertainty.analytic import nanmean
    from lmms_eval_tasks.uncertainty.resampling import Resampling

    ids = list(ids) if ids is not None else [str(i) for i in range(len(items))]
    categories = [item.category for item in items]
    repeats = max((len(row) for row in verdicts), default=1)
    rouge_cell = len(CATEGORIES)
    with_rouge = [i for i, value in enumerate(rouge) if value is not None]
    values = np.zeros((len(items) + len(with_rouge), repeats, 4))
    for i, row in enumerate(verdicts):
        for r, verdict in enumerate(row):
            if verdict is not None:
                values[i, r, 0:2] = (float(bool(verdict)), 1.0)
    for row, i in enumerate(with_rouge, start=len(items)):
        values[row, 0, 2:4] = (float(rouge[i]), 1.0)
    cell = {name: i for i, name in enumerate(CATEGORIES)}
    codes = np.asarray([cell[c] for c in categories] + [rouge_cell] * len(with_rouge), dtype=np.int64)
    units = ids + [ids[i] for i in with_rouge]
    pools = {
        "natural": NATURAL_SCENARIOS,
        "digital": DIGITAL_SCENARIOS,
        **{name: (name,) for name in SCENARIOS},
    }
    masks = {
        name: np.asarray([CATEGORY_SCENARIO[c] in members for c in CATEGORIES] + [False], dtype=float)
        for name, members in pools.items()
    }
    st, est = cell["stvqa"], cell["estvqa"]

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:  # totals [R, cells, repeats, 4]
        accepted, judged = totals[..., 0], totals[..., 1]
        with np.errstate(all="ignore"):
            out = {"acceptance_rate": nanmean(100 * accepted.sum(1) / judged.sum(1), axis=1)}
            for name, mask in masks.items():
                rate = 100 * np.einsum("rcp,c->rp", accepted, mask) / np.einsum("rcp,c->rp", judged, mask)
                out[f"acceptance_rate_{name}"] = nanmean(rate, axis=1)
            if protocol == "official":
                rate = 100 * (accepted[:, st] + accepted[:, est]) / (2 * judged[:, st])
                out["acceptance_rate_misc_natural_scenes"] = nanmean(rate, axis=1)
            out["rouge_l"] = 100 * totals[:, rouge_cell, 0, 2] / totals[:, rouge_cell, 0, 3]
        return out

    closed: dict[str, Any] = {}
    if repeats == 1:  # every rate's interval as the scorer computes it (rate_counts, normal_interval)
        counts = rate_counts(categories, [row[0] if row else None for row in verdicts], protocol)
        closed = {name: _rate_interval(*count) for name, count in counts.items() if count[1] > 0}
    return Resampling(units, values, statistic, UNIT, codes, len(CATEGORIES) + 1,
                identity=ids, closed_form=closed)  # fmt: skip


def _rate_interval(accepted: int, judged: int) -> Any:
    """A rate's closed-form 95% interval: the official normal one, Wilson's where that is a point, none above
    100% (the official Misc. denominator)."""
    from lmms_eval_tasks.uncertainty.analytic import wilson_interval
    from lmms_eval_tasks.uncertainty.result import Uncertainty

    rate, (low, high) = 100.0 * accepted / judged, normal_interval(accepted, judged)
    if low is None:
        stderr, method = None, "normal"
        reason = (
            f"{accepted} accepted of a denominator of {judged}: a rate above 100% has no normal interval "
            "(the official analysis prints NaN)"
        )
    elif accepted in (0, judged) and float(accepted).is_integer():  # the normal interval is a point
        reason = (
            f"the Wilson score interval: at {accepted:g} of {judged:g} the official normal (Wald) interval "
            f"is the point [{low:.2f}, {high:.2f}] (kept in the metrics' _ci95_low/_ci95_high)"
        )
        wilson = wilson_interval(int(accepted), int(judged))
        stderr, low, high, method = 100.0 * wilson.stderr, 100.0 * wilson.low, 100.0 * wilson.high, "wilson"
    else:
        share = max(0.0, accepted / judged)
        stderr, method = 100.0 * math.sqrt(share * (1 - share) / judged), "normal"
        reason = "the official normal (Wald) interval, clipped to [0, 100]"
    return Uncertainty(rate, stderr, low, high, method, UNIT, int(judged), reason=reason)


@dataclass(frozen=True)
class Item:
    """One validated record."""

    index: int
    image_url: str
    instruction: str
    category: str
    scenario: str
    response: str | None
    prediction: str


def _text(record: dict[str, Any], name: str, index: int) -> str:
    value = require_field(record, name, index, (str, type(None)))
    return "" if value is None else value


def parse_item(record: dict[str, Any], index: int) -> Item:
    """Validate one record; a missing field or an unknown category raises RecordError naming both."""
    image_url = require_field(record, "image_url", index, str)
    if not image_url.strip():
        raise RecordError(index, "image_url", "empty")
    category = require_field(record, "category", index, str)
    if category not in CATEGORY_SCENARIO:
        raise RecordError(
            index, "category", f"unknown category {category!r}; expected one of {', '.join(CATEGORIES)}"
        )
    response = record.get("response")
    if response is not None and not isinstance(response, str):
        raise RecordError(index, "response", f"expected str or null, got {type(response).__name__}")
    return Item(
        index=index,
        image_url=image_url,
        instruction=_text(record, "instruction", index),
        category=category,
        scenario=CATEGORY_SCENARIO[category],
        response=response,
        prediction=_text(record, "prediction", index),
    )


def parse_items(records: Sequence[dict[str, Any]]) -> list[Item]:
    """Validate every record (image URLs identify questions, as in the official files: a repeated one is
    refused before scoring by the record contract, ``framework.records``)."""
    if not records:
        raise RecordError("-", "<records>", "no records to score")
    return [parse_item(record, index) for index, record in enumerate(records)]


def judge_prompt(item: Item, variant: str = "official", prediction: str | None = None) -> str:
    """The official GPT-4 judge prompt for one item (byte-exact template); ``variant="hardened"`` delimits
    the prediction; ``prediction``: the bounded text sent (default: the item's whole prediction)."""
    from lmms_eval_tasks.judges.integrity import hardened_fields
    from lmms_eval_tasks.judges.prompts import render_prompt

    if item.response is None:
        raise RecordError(item.index, "response", "missing: the judge needs the reference response")
    fields = {
        "instruction": item.instruction,
        "groundtruth": item.response,
        "prediction": item.prediction if prediction is None else prediction,
    }
    if variant == "hardened":
        fields, _note = hardened_fields(fields, ("prediction",))
    return render_prompt(JUDGE_PROMPT, **fields)


def judge_image(record: dict[str, Any], item: Item) -> Any:
    """What the image-aware judge is shown: the bytes of ``image_path`` when the record has one (the local
    copy ``prepare`` made), else the ``image_url`` (the chat API fetches http(s) URLs itself)."""
    path = record.get("image_path")
    if isinstance(path, str) and path:
        try:
            with open(path, "rb") as handle:
                return handle.read()
        except OSError as error:
            raise RecordError(item.index, "image_path", f"cannot read {path!r}: {error}") from None
    if item.image_url.startswith(("http://", "https://", "data:image/")):
        return item.image_url
    raise RecordError(item.index, "image_url", "the image-aware judge needs an http(s) URL or an image_path")


def judge_items(
    records: Sequence[dict[str, Any]],
    items: Sequence[Item],
    image_judge: bool = False,
    judge_prompt_variant: str = "official",
    model_text_limit: int | None = None,
) -> list:
    """One judge item per record (id = image URL, the rule judge's reply, the image if ``image_judge``); the
    prediction is cut to ``model_text_limit`` characters and named as model text (masked in the reply)."""
    from lmms_eval_tasks.framework.screening import is_content_free
    from lmms_eval_tasks.judges.integrity import bound_model_text, hardened_fields
    from lmms_eval_tasks.judges.pipeline import JudgeItem
    from lmms_eval_tasks.tasks.contextual.judge_integrity import MODEL_TEXT_LIMIT, SCREENING, carries_markers

    limit = MODEL_TEXT_LIMIT if model_text_limit is None else model_text_limit
    judged = []
    for item in items:
        sent, _cut = bound_model_text(item.prediction, limit)
        system = (
            hardened_fields({"prediction": sent}, ("prediction",))[1]
            if judge_prompt_variant == "hardened"
            else None
        )
        judged.append(
            JudgeItem(
                item_id=item.image_url,
                prompt=judge_prompt(item, judge_prompt_variant, sent),
                rule_reply=rule_reply(item.prediction, item.response or ""),
                system=system,
                image=judge_image(records[item.index], item) if image_judge else None,
                model_text=(sent,),
                carries_markers=carries_markers(item.prediction),
                content_free=is_content_free(item.prediction, SCREENING, item.response),
            )
        )
    return judged


def _normalise_words(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[^\w]+|_", " ", text).split())


def rule_reply(prediction: str, reference: str) -> str | None:
    """The offline rule judge (not the paper's metric): "Judgement: Yes" when a short reference occurs
    word-aligned in a prediction that does not hedge, else "Judgement: No"; None for longer references."""
    from lmms_eval_tasks.tasks.contextual.judge_integrity import rule_hedge

    reference_words = _normalise_words(reference or "")
    if not reference_words or len(reference_words.split()) > RULE_MAX_REFERENCE_WORDS:
        return None
    words = _normalise_words(prediction or "")
    found = f" {reference_words} " in f" {words} "
    accepted = found and not rule_hedge(prediction or "", reference, words, reference_words)
    return "Judgement: Yes" if accepted else "Judgement: No"


def rate_percent(accepted: int, judged: int) -> float | None:
    """A rate in percent of the judged items (None without any): every rate of one repeat, and a report
    page's rate from saved counts."""
    return 100.0 * accepted / judged if judged else None


def normal_interval(accepted: int, judged: int) -> tuple[float | None, float | None]:
    """95% normal (Wald) interval in percent, clipped to [0, 100] as the official analysis' statsmodels
    prints it; None for a rate above 100 (the official Misc. denominator), where statsmodels gives NaN."""
    if judged <= 0 or accepted > judged:
        return None, None
    share = max(0.0, accepted / judged)
    half = Z_95 * math.sqrt(share * (1.0 - share) / judged)
    return 100.0 * max(0.0, share - half), 100.0 * min(1.0, share + half)


def rate_counts(
    categories: Sequence[str], verdicts: Sequence[bool | None], protocol: str = "default"
) -> dict[str, tuple[int, int]]:
    """``{rate key: (accepted, denominator)}`` of one judge repeat, the one source of every rate and interval.
    Unjudged items leave every denominator; ``official`` divides Misc. Natural Scenes by 2 x judged stvqa."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    accepted = dict.fromkeys(CATEGORIES, 0)
    judged = dict.fromkeys(CATEGORIES, 0)
    for category, verdict in zip(categories, verdicts, strict=True):
        if verdict is None:
            continue
        judged[category] += 1
        accepted[category] += int(verdict)

    def pooled(scenarios: Sequence[str]) -> tuple[int, int]:
        members = [c for c in CATEGORIES if CATEGORY_SCENARIO[c] in scenarios]
        return sum(accepted[c] for c in members), sum(judged[c] for c in members)

    counts = {"acceptance_rate": (sum(accepted.values()), sum(judged.values()))}
    for scenario in SCENARIOS:
        counts[f"acceptance_rate_{scenario}"] = pooled((scenario,))
    if protocol == "official":
        counts["acceptance_rate_misc_natural_scenes"] = (
            accepted["stvqa"] + accepted["estvqa"],
            2 * judged["stvqa"],
        )
    counts["acceptance_rate_natural"] = pooled(NATURAL_SCENARIOS)
    counts["acceptance_rate_digital"] = pooled(DIGITAL_SCENARIOS)
    counts["acceptance_rate_stvqa"] = (accepted["stvqa"], judged["stvqa"])
    counts["acceptance_rate_estvqa"] = (accepted["estvqa"], judged["estvqa"])
    return counts


def acceptance_metrics(
    categories: Sequence[str], verdicts: Sequence[bool | None], protocol: str = "default"
) -> dict[str, Any]:
    """Every acceptance rate of one judge repeat (percent of judged items, denominators of ``rate_counts``),
    each with its 95% normal interval ``<rate>_ci95_low/high``."""
    counts = rate_counts(categories, verdicts, protocol)
    metrics: dict[str, Any] = {}
    for key in ("acceptance_rate", *POOLED_RATE_KEYS):
        metrics[key] = rate_percent(*counts[key])
        metrics[f"{key}_ci95_low"], metrics[f"{key}_ci95_high"] = normal_interval(*counts[key])
    accepted, judged = counts["acceptance_rate"]
    metrics.update(judged=judged, accepted=accepted)
    metrics["unjudged"] = sum(1 for verdict in verdicts if verdict is None)
    return metrics


def rouge_l_scores(predictions: Sequence[str], references: Sequence[str]) -> list[float]:
    """ROUGE-L F-measure (0-1) per pair, with Google's ``rouge-score`` package (its default tokenizer)."""
    from lmms_eval_tasks.wordnet import import_nltk

    import_nltk()  # rouge-score imports nltk (its Porter stemmer): without scipy and sklearn, 1.9 s less CPU
    from rouge_score import rouge_scorer  # a declared dependency

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    return [
        scorer.score(reference, prediction)["rougeL"].fmeasure
        for prediction, reference in zip(predictions, references, strict=True)
    ]


# "Judgement:", "**Judgement:**", "Judgement**:", "judgment :" (any case, both spellings)
_MARKER = re.compile(r"judg(?:e)?ment[*_]*[ \t]*:", re.IGNORECASE)
# after the marker: whitespace, markdown and quotes, then the verdict word as a whole word
_AFTER_MARKER = re.compile(r"[\s*_`\"'“”‘’]*(yes|no)(?![A-Za-z0-9])", re.IGNORECASE)
_WHOLE_REPLY = re.compile(r"[\s*_`\"'“”‘’]*(yes|no)[\s*_`\"'“”‘’.!]*", re.IGNORECASE)


def _marked_verdicts(text: str) -> list[bool]:
    """The Yes/No word after each "Judgement:" marker that is followed by one."""
    return [
        word.group(1).lower() == "yes"
        for marker in _MARKER.finditer(text)
        if (word := _AFTER_MARKER.match(text, marker.end()))
    ]


def read_verdict(text: Any, protocol: str = "default") -> Any:
    """``parse_judge_reply``, with ``integrity.CONFLICT`` (no verdict, counted) for a reply whose own
    "Judgement:" verdicts disagree (default protocol): the judging pipeline's parser."""
    if protocol == "default" and isinstance(text, str) and len(set(_marked_verdicts(text))) > 1:
        from lmms_eval_tasks.judges.integrity import CONFLICT

        return CONFLICT
    return parse_judge_reply(text, protocol)


def parse_judge_reply(text: Any, protocol: str = "default") -> bool | None:
    """The verdict in a judge reply: True (Yes), False (No) or None (unjudged), read by ``protocol``'s rule
    (docs/contextual.md, "Parsing the judge's reply"): the last marked verdict, or the authors' rule."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {', '.join(PROTOCOLS)}")
    if not isinstance(text, str):
        return None
    if protocol == "official":
        position = text.find(OFFICIAL_MARKER)
        if position < 0:
            return True if text == "Yes" else False if text == "No" else None
        rest = text[position + len(OFFICIAL_MARKER) :]
        return True if "Yes" in rest else False if "No" in rest else None
    found = _marked_verdicts(text)
    if found:
        return found[-1] if len(set(found)) == 1 else None
    whole = _WHOLE_REPLY.fullmatch(text)
    if whole:
        return whole.group(1).lower() == "yes"
    return None


def normalize_verdict(value: Any, index: int | str, protocol: str = "default") -> bool | None:
    """A supplied ``judge_verdict`` (a judge reply, Yes/No, 1/0 as in the official ``gpt4_judgments.json``,
    true/false or null) as True/False/None; RecordError on other values."""
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        if value in (0, 1):
            return bool(value)
        raise RecordError(index, "judge_verdict", f"expected 1 or 0, got {value!r}")
    if isinstance(value, str):
        return parse_judge_reply(value, protocol)
    raise RecordError(
        index, "judge_verdict", f"expected a judge reply, Yes/No, 1/0 or null, got {type(value).__name__}"
    )
