"""HallusionBench scoring, harness-free: the official metrics and LH/VI decision tree of ``tianyi-lab/
HallusionBench`` (docs/hallusionbench.md) on saved records, with supplied or judged verdicts."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from loguru import logger

from lmms_eval_tasks.framework.input_checks import (
    OptionError,
    RecordError,
    check_judge_options,
    check_option,
    require_field,
)
from lmms_eval_tasks.framework.registry import derived, scorer
from lmms_eval_tasks.uncertainty.resampling import Resampling, ordered_sum, percent, present_mean

# ---- Data model --------------------------------------------------------------------------------------------

CATEGORY_SUBCATEGORIES: dict[str, tuple[str, ...]] = {
    "VD": ("illusion", "math", "ocr", "figure", "video"),
    "VS": ("chart", "table", "map", "ocr"),
}
QUESTION_KEY = ("category", "subcategory", "set_id", "figure_id", "question_id")  # the official grouping keys
# The official JSON row fields, in the official file's key order.
OFFICIAL_FIELDS: tuple[str, ...] = tuple(
    "category subcategory visual_input set_id figure_id sample_note question_id question "
    "gt_answer_details gt_answer filename".split()
)
# Official verdict codes: "1" correct, "0" incorrect, "2" unclear.
CORRECT, INCORRECT, UNCLEAR = "1", "0", "2"
VERDICT_WORDS = {CORRECT: "correct", INCORRECT: "incorrect", UNCLEAR: "unclear"}
# Per supplied judge field: the types and values it accepts (strings stripped, lower-cased), and their names
_SUPPLIED_VALUES = {
    "judge_verdict": (
        (int, str),
        {int(code): code for code in VERDICT_WORDS} | {code: code for code in VERDICT_WORDS}
        | {word: code for code, word in VERDICT_WORDS.items()},
        "correct/incorrect/unclear, '1'/'0'/'2'",
    ),
    "judge_same": (
        (bool, int, str),
        {0: False, 1: True, "0": False, "1": True,
         "same": True, "different": False, "true": True, "false": False},
        "a bool, 'same'/'different', '1'/'0'",
    ),
}  # fmt: skip

# Metric names reported for every group (overall, per category, per subcategory).
CORRECTNESS_METRICS: tuple[str, ...] = tuple(
    "aAcc fAcc qAcc easy_aAcc hard_aAcc pct_diff fp_ratio consistency_correct consistency_inconsistent "
    "consistency_wrong overall".split()
)
DIAGNOSIS_METRICS: tuple[str, ...] = ("LH", "VI", "Mixed", "pair_LH", "pair_VI", "pair_Mixed")
# The headline output keys (overall group, unprefixed).
HEADLINE_METRICS: tuple[str, ...] = (*CORRECTNESS_METRICS[:-1], *DIAGNOSIS_METRICS[:3], "overall")
VLMEVALKIT_METRICS: tuple[str, ...] = ("aAcc", "fAcc", "qAcc", "overall")
VARIANTS = ("official", "vlmevalkit")
UNIT = "figure group"  # the resampling unit: a figure group's questions and figures depend on each other


# ---- Entry points: Options (checked once), score -> evaluate -> the report ---------------------------------


@dataclass(frozen=True)
class Options:
    """HallusionBench's scorer options (docs/hallusionbench.md), each checked here (one-line OptionError)."""

    variant: str = "official"  # or "vlmevalkit"
    judge: Any = None  # None/"auto", "openai", "rule" or a Judge object; used only for what is not supplied
    judge_model: str | None = None
    repeats: int | None = None  # judge repeats (None: the setting, else 3 for an LLM judge, 1 for rules)
    diagnosis: bool = True  # the LH/VI/Mixed diagnosis (and its consistency judging)
    no_verdict: str = "official"  # a reply without a verdict word: the official parse, or "unjudged"
    verdict_parse: str = "final"  # the label rule on the judge's final verdict line, "official": whole reply
    judge_prompt: str = "official"  # or "hardened"
    model_text_limit: int | None = None  # characters of each answer sent (docs/judges.md)

    def __post_init__(self) -> None:
        from lmms_eval_tasks.judges.integrity import JUDGE_PROMPTS
        from lmms_eval_tasks.tasks.hallusionbench.judge_integrity import VERDICT_PARSES

        check_option("variant", self.variant, str, choices=VARIANTS)
        check_option("verdict_parse", self.verdict_parse, str, choices=VERDICT_PARSES)
        check_option("judge_prompt", self.judge_prompt, str, choices=JUDGE_PROMPTS)
        check_option("model_text_limit", self.model_text_limit, int, minimum=1, allow_none=True)
        check_option("no_verdict", self.no_verdict, str, choices=NO_VERDICT_CHOICES)
        check_judge_options(self.judge, self.judge_model)
        if isinstance(self.judge_model, str) and not self.judge_model.strip():
            raise OptionError("option judge_model: expected a model name or null, got an empty string")
        check_option("repeats", self.repeats, int, minimum=1, allow_none=True)
        check_option("diagnosis", self.diagnosis, bool)


@scorer(Options)
def score(records: list[dict[str, Any]], options: Options) -> tuple[dict[str, Any], dict[str, Any]]:
    """Judge and score saved records, annotating each in place (for --log_samples): (metrics, details).
    Percent, except pct_diff and fp_ratio (fractions); see docs/hallusionbench.md."""
    from lmms_eval_tasks.judges.pipeline import JudgingFailed

    try:
        evaluation = evaluate.checked(records, options)
    except JudgingFailed as error:  # no verdict at all: fail the host's evaluation (the launcher exits 1)
        tasks = sorted({str(record.get("task")) for record in records if record.get("task")})
        raise JudgingFailed(f"{', '.join(tasks)}: {error}" if tasks else str(error)) from None
    judge_name = evaluation.judge.get("model", "?")
    _annotate(records, evaluation, judge_name)
    values: dict[str, Any] = evaluation.flat()  # the counts included
    values.setdefault("llm_matched", 0)
    values.setdefault("no_verdict", 0)
    values["judge_is_rule_based"] = 1 if evaluation.judge.get("kind") == "rule" else 0
    logger.info(
        f"HallusionBench: judged by {evaluation.judge.get('kind')} / {judge_name}, {evaluation.repeats} "
        f"repeat(s); aAcc={values.get('aAcc')}, fAcc={values.get('fAcc')}, qAcc={values.get('qAcc')}"
    )
    return values, _details(records, evaluation)


@scorer(Options)
def evaluate(records: Sequence[dict[str, Any]], options: Options) -> Evaluation:
    """The full result (per repeat, per question): verdicts (supplied or judged), each repeat's metrics."""
    if not records:
        raise RecordError("-", "<records>", "no records to score")
    from lmms_eval_tasks.judges.pipeline import LazyJudge

    # created on first use only: with every verdict supplied no judge (and no "no endpoint" warning) exists
    source = LazyJudge(options.judge, model=options.judge_model, task=JUDGE_TASK)
    try:
        if options.variant == "vlmevalkit":
            return _vlmevalkit_evaluation(records, source)
        structure = build_structure(parse_questions(records))
        verdicts, sames, repeats, judged = _official_judging(records, structure, source, options)
    finally:
        source.close()
    per_repeat, diagnosis = [], options.diagnosis
    for r in range(repeats):  # a loop, not a comprehension: the metrics two calls below score
        per_repeat.append(repeat_metrics(structure, _column(verdicts, r), _column(sames, r), diagnosis))
    evaluation = _evaluation_of("official", structure, verdicts, sames, per_repeat, diagnosis, **judged)
    _finish_official(records, evaluation, options)
    return evaluation


@scorer(Options)
def per_question_correct(records: Sequence[dict[str, Any]], options: Options) -> dict[str, bool | None]:
    """Correctness per question key, for ``compare`` (McNemar): most judged repeats right (a tie is wrong),
    None when no repeat was judged. The vlmevalkit variant scores image questions only."""
    evaluation = evaluate.checked(records, derived(options, diagnosis=False))
    indices = evaluation.record_indices or list(range(len(records)))
    questions = parse_questions([records[index] for index in indices], indices)
    result: dict[str, bool | None] = {}
    for question, row in zip(questions, evaluation.correct, strict=True):
        judged = [value for value in row if value is not None]
        key = "/".join(question.question_key)
        result[key] = None if not judged else 2 * sum(judged) > len(judged)
    return result


def _details(records: list[dict[str, Any]], evaluation: Evaluation) -> dict[str, Any]:
    """``score``'s details: the evaluation's spread, counts, judging, warnings and resampling rows."""
    details = {
        "variant": evaluation.variant,
        "units": "percent, except pct_diff and fp_ratio (fractions)",
        "spread": evaluation.spread,
        "per_repeat": evaluation.per_repeat,
        "counts": evaluation.counts,
        "judge_usage": evaluation.judge_usage,
        "judging": evaluation.judging,  # per judging batch: settings, counts, usage, unjudged items
        "unjudged": _unjudged_list(records, evaluation),
        "no_verdict": evaluation.no_verdict,  # how verdict-less judge replies were scored
        "no_verdict_replies": evaluation.no_verdict_replies,
        "judge": {**evaluation.judge, "repeats": evaluation.repeats},
        "deviations": _deviations(evaluation),
        "warnings": [
            f"{evaluation.counts[name]} {name.replace('_', ' ')}"
            for name in ("unjudged_verdicts", "empty_predictions")
            if evaluation.counts.get(name)
        ]
        + _no_verdict_warning(evaluation)
        + _integrity_warnings(evaluation),
    }
    if evaluation.variant == "official":
        details["resampling"] = resampling_of(build_structure(parse_questions(records)), evaluation)
    else:  # said in the report's uncertainty block (framework/intervals.py)
        details["no_resampling"] = (
            f"standard errors cover the official variant only (variant={evaluation.variant} has none yet)"
        )
    return details


# ---- what score adds to the metrics: annotations, details ----------------------------------------------


def _annotate(records: list[dict[str, Any]], evaluation: Evaluation, judge_name: str) -> None:
    """Add verdicts, correctness, consistency and diagnosis per repeat to each record (for --log_samples)."""
    if evaluation.variant == "vlmevalkit":
        replies = evaluation.replies["yes_no_match"]
        for offset, index in enumerate(evaluation.record_indices or []):
            record = records[index]
            record["judge"] = judge_name
            record["extracted_answer"] = evaluation.extracted[offset]
            record["yes_no_match_reply"] = replies[offset][0]
            record["correct"] = evaluation.correct[offset]
        return
    correctness = evaluation.replies.get("correctness")
    consistency = evaluation.replies.get("consistency")
    for offset, record in enumerate(records):
        record["judge"] = judge_name
        record["judge_verdicts"] = [
            None if verdict is None else VERDICT_WORDS[verdict] for verdict in evaluation.verdicts[offset]
        ]
        record["correct"] = evaluation.correct[offset]
        same = evaluation.sames[offset]
        record["consistency_same"] = None if all(flag is None for flag in same) else same
        record["diagnosis"] = [
            None if found is None else DIAGNOSIS_NAMES[found] for found in evaluation.diagnosis[offset]
        ]
        if correctness is not None:
            record["judge_replies"] = correctness[offset]
            record["judge_errors"] = evaluation.errors["correctness"][offset]
        if consistency is not None:
            record["consistency_replies"] = consistency[offset]


def _unjudged_list(records: list[dict[str, Any]], evaluation: Evaluation) -> list[dict[str, Any]]:
    """Every judgement without a verdict (the judging pipeline gives each one its reason)."""
    indices = evaluation.record_indices or list(range(len(records)))
    return [
        {
            "kind": kind,
            "record": indices[offset],
            "repeat": repeat,
            "error": error,
            "question_key": [records[indices[offset]].get(name) for name in QUESTION_KEY],
        }
        for kind, rows in evaluation.errors.items()
        for offset, row in enumerate(rows)
        for repeat, error in enumerate(row)
        if error is not None  # unjudged (no reply) or an unreadable reply
    ]


def _deviations(evaluation: Evaluation) -> list[str]:
    """How this scoring departs from the paper's protocol (GPT-4 judge, all 1129 questions)."""
    deviations = []
    if evaluation.judge.get("kind") == "rule":
        deviations.append("rule-based yes/no judge instead of the paper's GPT-4 judge")
    if evaluation.variant == "vlmevalkit":
        deviations.append("VLMEvalKit variant: image questions only, VLMEvalKit's answer matching")
    return deviations


def _no_verdict_warning(evaluation: Evaluation) -> list[str]:
    """The report's warning about judge replies without a verdict word (none when there are none)."""
    count = evaluation.counts.get("no_verdict", 0)
    if not count:
        return []
    how, other = "left unjudged (out of the metrics)", "official"
    if evaluation.no_verdict == "official":
        how = "scored as the official parse does (correctness: unclear, consistency: different)"
        other = "unjudged"
    return [
        f"{count} judge replies without a verdict word, {how}; listed in details.no_verdict_replies. "
        f"Set {NO_VERDICT_ENV}={other} (or score with no_verdict={other}) to compare"
    ]


def _integrity_warnings(evaluation: Evaluation) -> list[str]:
    """One warning per non-zero judge-integrity count, saying what it did to the scores."""
    said = {
        "model_text_cut": "answers cut before judging (the judge saw their first characters only: "
        "judge_integrity.MODEL_TEXT_LIMIT or model_text_limit)",
        "rejected_too_long_for_judge": "verdicts scored incorrect because the judge refused the prompt as "
        "too long (the model's output; never left out)",
        "rejected_model_failure": "verdicts scored incorrect (consistency: different) as the model's failure "
        "(too long for the judge, or an answer carrying the judge's labels and a reply with no verdict of "
        "the judge's own)",
        "rejected_content_free": "verdicts scored incorrect (consistency: different) without asking the "
        "judge because the answer is content-free (empty, punctuation only, or a reasoning opener with no "
        "answer: a 'master key'; verdict_parse=official sends them to the judge)",
        "rejected_verdict_masked": "verdicts scored incorrect (consistency: different) because the answer's "
        "text, quoted by the judge, removed or changed the judge's own verdict",
        "verdict_fragments": "judge replies where a line of the answer stands glued into the judge's own "
        "words (e.g. 'ncorrect' inside 'incorrect'): the verdict is read as the judge wrote it",
        "conflicting_verdicts": "judge replies whose final verdict line holds two verdicts (no verdict)",
    }
    from lmms_eval_tasks.judges.self_test import warning

    mark = warning(evaluation.judging.get("self_test"))
    counted = [f"{evaluation.counts[key]} {text}" for key, text in said.items() if evaluation.counts.get(key)]
    return counted + ([mark] if mark else [])


def _count_empty_predictions(records: Sequence[dict[str, Any]], evaluation: Evaluation) -> None:
    """Count blank answers and warn: the judge reads a failed generation as "unclear" (right on no-image)."""
    empty = sum(
        1
        for record in records
        if isinstance(record, dict) and "prediction" in record and not str(record["prediction"] or "").strip()
    )
    evaluation.counts["empty_predictions"] = empty
    if empty:
        logger.warning(
            f"HallusionBench: {empty} of {len(records)} model answers are empty (generation errors?); "
            "they are judged as given (usually 'unclear') - check the model's log"
        )


# ---- Repeats and judging -----------------------------------------------------------------------------------


@dataclass
class Evaluation:
    """Everything one scoring run produced: averaged metrics, per-repeat metrics, per-question outcomes."""

    variant: str
    repeats: int
    metrics: dict[str, float | None]
    per_repeat: list[dict[str, float | None]]
    spread: dict[str, dict[str, float | None]]
    verdicts: list[list[str | None]]
    sames: list[list[bool | None]]
    correct: list[list[int | None]]
    diagnosis: list[list[tuple[int, int] | None]]
    counts: dict[str, int]
    judge: dict[str, Any] = field(default_factory=dict)
    judge_usage: dict[str, Any] = field(default_factory=dict)
    replies: dict[str, list[list[str | None]]] = field(default_factory=dict)
    errors: dict[str, list[list[str | None]]] = field(default_factory=dict)
    extracted: list[str | None] | None = None
    judging: dict[str, dict[str, Any]] = field(default_factory=dict)  # per batch: JudgedBatch.report()
    record_indices: list[int] | None = None  # each scored question's record (VLMEvalKit: no no-image rows)
    no_verdict_replies: list[dict[str, Any]] = field(default_factory=list)  # replies without a verdict word
    no_verdict: str = "official"  # how those were scored

    def flat(self) -> dict[str, Any]:
        """The ``score`` output: metrics (percent, pct_diff/fp_ratio as fractions), spread, counts."""
        output: dict[str, Any] = dict(self.metrics)
        for name in HEADLINE_METRICS if self.variant == "official" else VLMEVALKIT_METRICS:
            output[f"{name}_std"] = self.spread.get(name, {}).get("std")
        output.update(self.counts)
        output["repeats"] = self.repeats
        output["variant"] = self.variant
        output["judge"] = self.judge.get("kind", "supplied")
        output["judge_model"] = self.judge.get("model")
        return output


def _official_judging(records, structure, judge, options: Options) -> tuple[list, list, int, dict[str, Any]]:
    """(verdicts, sames, repeats, judged): the verdicts (supplied, else judged) and the consistency judgements
    the diagnosis needs (supplied, else judged, else none) per question and repeat; ``judged``, the
    ``Evaluation`` fields the judging fills (judge, judge_usage, replies, errors, judging)."""
    from lmms_eval_tasks.judges.pipeline import protocol_repeats

    prompt_options = {"judge_prompt": options.judge_prompt, "model_text_limit": options.model_text_limit}
    verdicts = _supplied(records, "judge_verdict", normalize_verdict)
    sames = _supplied(records, "judge_same", normalize_verdict)
    n, repeats, judge_object = len(structure.questions), options.repeats, None
    result: dict[str, Any] = {"replies": {}, "errors": {}, "judging": {}}
    if verdicts is not None:
        if repeats is not None and repeats != len(verdicts[0]):
            raise RecordError(
                0, "judge_verdict", f"{len(verdicts[0])} repeats supplied but repeats={repeats} asked"
            )
        repeats = len(verdicts[0])
    else:
        judge_object = judge.get()
        repeats = repeats or protocol_repeats(judge_object, 3, JUDGE_TASK)  # the paper's 3 (1 for rules)
        result["judging"]["self_test"] = _self_test(
            records, judge_object, options.verdict_parse, options.no_verdict, prompt_options
        )
        requests = correctness_requests(records, _predictions(records), **prompt_options)
        batch = _judged(result, "correctness", judge_object, requests, repeats, options)
        batch.require_judged("HallusionBench correctness")  # no verdict at all: no metric, fail loudly
        result["replies"]["correctness"], result["errors"]["correctness"] = batch.replies(), batch.errors()
        verdicts = batch.verdicts()
    if sames is not None:
        if len(sames[0]) != repeats:
            raise RecordError(0, "judge_same", f"{len(sames[0])} repeats but judge_verdict has {repeats}")
    elif options.diagnosis:
        judge_object = judge.get()
        offsets = consistency_needed(structure, verdicts)
        requests = consistency_requests(structure, _predictions(records), offsets, **prompt_options)
        batch = _judged(result, "consistency", judge_object, requests, repeats, options)
        sames = [[None] * repeats for _ in range(n)]
        replies, errors = [[None] * repeats for _ in range(n)], [[None] * repeats for _ in range(n)]
        for offset, same_row, text_row, error_row in zip(
            offsets, batch.verdicts(), batch.replies(), batch.errors(), strict=True
        ):
            sames[offset], replies[offset], errors[offset] = same_row, text_row, error_row
        result["replies"]["consistency"], result["errors"]["consistency"] = replies, errors
    else:
        sames = [[None] * repeats for _ in range(n)]
    if judge_object is not None:
        result.update(judge=judge_object.describe(), judge_usage=judge_object.usage())
    return verdicts, sames, repeats, result


def _judged(
    result: dict[str, Any], kind: str, judge_object: Any, requests: list, repeats: int, options: Options
):
    """One batch of the official judging (``kind``: correctness or consistency), its report kept; a reply the
    model's failure decides is incorrect / different."""
    reader = _verdict_reader(kind, options.no_verdict, options.verdict_parse)
    failure = INCORRECT if kind == "correctness" else False
    batch = _judge_batch(
        judge_object, requests, reader, repeats, f"HallusionBench {kind}", options.verdict_parse, failure
    )
    result["judging"][kind] = batch.report()
    return batch


def _finish_official(records, evaluation: Evaluation, options: Options) -> None:
    """What the official evaluation adds after the metrics: the judging's counts and the judge's self-test
    rates (shown, never part of a headline number)."""
    self_test = evaluation.judging.pop("self_test", None)
    if self_test:  # an LLM judge's (a rule judge has none)
        from lmms_eval_tasks.judges.self_test import provenance

        evaluation.judging["self_test"] = self_test  # after the batches
        evaluation.judge["self_test"] = provenance(self_test)
        for name in ("judge_false_accept_rate", "judge_false_reject_rate"):
            evaluation.metrics[name] = self_test[name]
    _count_no_verdict(records, evaluation, options.no_verdict)
    _count_integrity(evaluation, records, options.model_text_limit)
    if not options.diagnosis:
        drop = {metric_key(group, name) for group in group_names() for name in DIAGNOSIS_METRICS}
        evaluation.metrics = {key: value for key, value in evaluation.metrics.items() if key not in drop}
    _count_empty_predictions(records, evaluation)


def _column(rows: list[list[Any]], repeat: int) -> list[Any]:
    """Every question's value in one judge repeat."""
    return [row[repeat] for row in rows]


def _vlmevalkit_evaluation(records, judge) -> Evaluation:
    """VLMEvalKit's protocol: image questions only, rule yes/no extraction, LLM (yorn prompt) for unknowns."""
    from lmms_eval_tasks.judges.pipeline import JudgeItem, JudgingFailed, failure_message
    from lmms_eval_tasks.judges.prompts import render_positional

    kept_indices = [
        index
        for index, record in enumerate(records)
        if not (isinstance(record, dict) and str(record.get("visual_input", "")).strip() == "0")
    ]
    kept = [records[index] for index in kept_indices]
    dropped = len(records) - len(kept)
    if not kept:
        raise RecordError("-", "visual_input", "no image questions to score (all have visual_input '0')")
    questions = parse_questions(kept, kept_indices)
    structure = build_structure(questions)
    predictions = _predictions(kept, kept_indices)
    ignored = sum(1 for record in kept if "judge_verdict" in record or "judge_same" in record)
    if ignored:
        logger.warning(
            f"HallusionBench (variant vlmevalkit): {ignored} records carry judge_verdict/judge_same; this "
            "variant IGNORES them and reads yes/no from each prediction (VLMEvalKit's protocol). Use "
            "variant=official to score supplied verdicts"
        )
    extracted: list[str | None] = [vlmevalkit_yes_no(prediction) for prediction in predictions]
    unknown = [offset for offset, value in enumerate(extracted) if value is None]
    judge_object = judge.get()  # resolved even when unused, so results always name the judge
    replies = [[None] for _ in kept]
    errors = [[None] for _ in kept]
    judging: dict[str, dict[str, Any]] = {}
    if unknown:
        items = [
            JudgeItem(
                _item_id(kept[offset], kept_indices[offset]),
                render_positional(
                    "vlmevalkit_yorn_match_prompt",
                    _field_text(kept[offset], "question", kept_indices[offset]),
                    predictions[offset],
                ),
                rule_reply="Unknown",
            )
            for offset in unknown
        ]
        batch = _judge_batch(judge_object, items, _vlmevalkit_match, 1, "HallusionBench yes/no matching")
        judging["yes_no_match"] = batch.report()
        for offset, verdict, text, error in zip(
            unknown, batch.verdicts(), batch.replies(), batch.errors(), strict=True
        ):
            replies[offset], errors[offset] = text, error
            extracted[offset] = "unjudged" if verdict[0] is None else verdict[0]
    verdicts: list[list[str | None]] = [
        [None if answer == "unjudged" else CORRECT if answer == _YES_NO[question.gt_answer] else INCORRECT]
        for question, answer in zip(questions, extracted, strict=True)
    ]
    if unknown and all(row[0] is None for row in verdicts):
        raise JudgingFailed(failure_message("HallusionBench yes/no matching", [batch]))
    sames = [[None] for _ in kept]
    repeated = [repeat_metrics(structure, _column(verdicts, 0), _column(sames, 0), diagnosis=False)]
    judged = {"replies": {"yes_no_match": replies}, "errors": {"yes_no_match": errors}, "judging": judging}
    evaluation = _evaluation_of("vlmevalkit", structure, verdicts, sames, repeated, False, **judged)
    keep = {metric_key(group, name) for group in group_names() for name in VLMEVALKIT_METRICS}
    evaluation.metrics = {key: value for key, value in evaluation.metrics.items() if key in keep}
    evaluation.extracted = [None if value in ("unknown", "unjudged") else value for value in extracted]
    evaluation.counts["dropped_no_image_questions"] = dropped
    evaluation.counts["llm_matched"] = len(unknown)
    evaluation.counts["ignored_supplied_judge_fields"] = ignored
    evaluation.record_indices = kept_indices
    evaluation.judge = judge_object.describe()
    evaluation.judge_usage = judge_object.usage()
    _count_empty_predictions(kept, evaluation)  # the scored questions: no-image rows are not its answers
    return evaluation


_YES_NO = {"1": "yes", "0": "no"}  # gt_answer as the yes/no it stands for


def _vlmevalkit_match(text: str) -> str:
    """Parse the yes/no matcher's reply with VLMEvalKit's extraction; anything else is "unknown" (wrong)."""
    return vlmevalkit_yes_no(text) or "unknown"


def _spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"std": None, "min": None, "max": None, "repeats_defined": 0}
    mean = sum(values) / len(values)
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) if len(values) > 1 else 0.0
    return {"std": std, "min": min(values), "max": max(values), "repeats_defined": len(values)}


def combine_repeats(
    per_repeat: list[dict[str, float | None]],
) -> tuple[dict[str, float | None], dict[str, dict]]:
    """Average each metric over the repeats where it is defined (``present_mean``: the average the
    bootstrap's statistic takes, ``resampling_of``); spread = sample std, min, max."""
    keys = list(per_repeat[0]) if per_repeat else []
    averaged: dict[str, float | None] = {}
    spread: dict[str, dict] = {}
    for key in keys:
        values = [metrics[key] for metrics in per_repeat if metrics[key] is not None]
        averaged[key] = _defined(present_mean(np.asarray([values], dtype=np.float64))) if values else None
        spread[key] = _spread(values)
    return averaged, spread


def _supplied(records: Sequence[dict[str, Any]], name: str, normalize) -> list[list[Any]] | None:
    """Per-record, per-repeat supplied values of ``name``; None when no record has the field."""
    present = [name in record for record in records]
    if not any(present):
        return None
    if not all(present):
        missing = present.index(False)
        raise RecordError(
            missing, name, "missing here but given in other records (supply it for all or none)"
        )
    values = []
    for index, record in enumerate(records):
        raw = list(record[name]) if isinstance(record[name], list | tuple) else [record[name]]
        if not raw:
            raise RecordError(index, name, "empty list")
        values.append([normalize(item, index, name) for item in raw])
    odd = next((i for i, v in enumerate(values) if len(v) != len(values[0])), None)
    if odd is not None:
        raise RecordError(odd, name, f"{len(values[odd])} repeats here but {len(values[0])} in record 0")
    return values


def _predictions(records: Sequence[dict[str, Any]], indices: Sequence[int] | None = None) -> list[str]:
    indices = range(len(records)) if indices is None else indices
    return [_field_text(record, "prediction", index) for index, record in zip(indices, records, strict=True)]


def correctness_rule_reply(prediction: str, gt_answer: str) -> str:
    """Rule judge: extract yes/no; "correct"/"incorrect" against gt_answer, "unclear" if no yes/no found."""
    from lmms_eval_tasks.judges import rules

    extracted = rules.extract_yes_no(prediction)
    if extracted is None:
        return "unclear"
    return "correct" if (extracted == "yes") == (gt_answer == "1") else "incorrect"


def consistency_rule_reply(prediction: str, reference_prediction: str) -> str | None:
    """Rule judge: "same" if both answers extract to one yes/no, "different" if they differ, else None."""
    from lmms_eval_tasks.judges import rules

    current, reference = rules.extract_yes_no(prediction), rules.extract_yes_no(reference_prediction)
    if current is None or reference is None:
        return None
    return "same" if current == reference else "different"


def _field_text(record: dict[str, Any], name: str, index: int) -> str:
    value = require_field(record, name, index, (str, type(None)))
    return "" if value is None else value


def _item_id(record: dict[str, Any], index: int) -> str:
    """A judge item id: record number and question key (``#3 VD/illusion/1/0/0``), unique and readable."""
    return f"#{index} " + "/".join(str(record.get(name)) for name in QUESTION_KEY)


def _judge_item(
    item_id: str, prompt: str, fields: dict[str, str], model_fields: tuple[str, ...], rule_reply: str | None,
    content_free: bool, variant: str, limit: int | None,
) -> Any:  # fmt: skip
    """A judge item whose model-written fields are cut to ``limit`` characters (``variant="hardened"``:
    delimited and declared data), named as model text and checked for the judge's own markers."""
    from lmms_eval_tasks.judges.integrity import bound_model_text, hardened_fields
    from lmms_eval_tasks.judges.pipeline import JudgeItem
    from lmms_eval_tasks.judges.prompts import render_prompt
    from lmms_eval_tasks.tasks.hallusionbench.judge_integrity import MODEL_TEXT_LIMIT, carries_markers

    limit = MODEL_TEXT_LIMIT if limit is None else limit
    markers = any(carries_markers(fields[name]) for name in model_fields)
    fields = {name: bound_model_text(value, limit)[0] if name in model_fields else value
              for name, value in fields.items()}  # fmt: skip
    sent = tuple(fields[name] for name in model_fields)
    system = None
    if variant == "hardened":
        fields, system = hardened_fields(fields, model_fields)
    return JudgeItem(item_id, render_prompt(prompt, **fields), rule_reply=rule_reply, system=system,
                     model_text=sent, carries_markers=markers, content_free=content_free)  # fmt: skip


def correctness_requests(
    records: Sequence[dict[str, Any]],
    predictions: list[str],
    judge_prompt: str = "official",
    model_text_limit: int | None = None,
) -> list:
    """One correctness-judge item per record (id, prompt, the rule judge's reply), the answer bounded."""
    from lmms_eval_tasks.framework.screening import is_content_free
    from lmms_eval_tasks.tasks.hallusionbench.parsers import SCREENING

    requests = []
    for index, (record, prediction) in enumerate(zip(records, predictions, strict=True)):
        fields = {
            "question": _field_text(record, "question", index),
            "gt_answer_details": _field_text(record, "gt_answer_details", index),
            "prediction": prediction,
        }
        gt_answer = _id_field(record, "gt_answer", index)  # as validated: 1 and " 1" mean "1"
        requests.append(
            _judge_item(
                _item_id(record, index), "hallusionbench_correctness_judge", fields, ("prediction",),
                correctness_rule_reply(prediction, gt_answer),
                is_content_free(prediction, SCREENING, fields["gt_answer_details"]),
                judge_prompt, model_text_limit,
            )
        )  # fmt: skip
    return requests


def consistency_needed(structure: _Structure, verdicts: list[list[str | None]]) -> list[int]:
    """Questions whose diagnosis reads the consistency flag in at least one repeat (the only ones judged)."""
    needed = []
    for offset, (question, reference) in enumerate(
        zip(structure.questions, structure.reference_of, strict=True)
    ):
        if reference is None:
            continue
        for verdict, reference_verdict in zip(verdicts[offset], verdicts[reference], strict=True):
            if verdict is not None and needs_consistency(question, verdict, reference_verdict):
                needed.append(offset)
                break
    return needed


def consistency_requests(
    structure: _Structure,
    predictions: list[str],
    offsets: Sequence[int],
    judge_prompt: str = "official",
    model_text_limit: int | None = None,
) -> list:
    """Consistency-judge items (answer vs its pair reference answer) for the questions at ``offsets``."""
    from lmms_eval_tasks.framework.screening import is_content_free
    from lmms_eval_tasks.tasks.hallusionbench.parsers import SCREENING

    requests = []
    for offset in offsets:
        reference = structure.reference_of[offset]
        if reference is None:
            raise ValueError(f"question {offset} has no pair reference to compare with")
        fields = {"response_current": predictions[offset], "response_figure0": predictions[reference]}
        item_id = f"#{structure.questions[offset].index} same as #{structure.questions[reference].index}"
        # a content-free answer is the same as nothing: "different", not asked
        empty = any(is_content_free(text, SCREENING) for text in fields.values())
        requests.append(
            _judge_item(
                item_id, "hallusionbench_consistency_same_judge", fields, tuple(fields),
                consistency_rule_reply(*fields.values()), empty, judge_prompt, model_text_limit,
            )
        )  # fmt: skip
    return requests


JUDGE_TASK = "hallusionbench"  # the judge settings' per-task suffix (LMMS_EVAL_TASKS_JUDGE_*_HALLUSIONBENCH)


def _judge_batch(
    judge_object: Any, items: list, parse, repeats: int, desc: str, verdict_parse: str = "final",
    model_failure: Any = None,
):  # fmt: skip
    """One judging batch (judge x repeats -> verdicts); unless ``verdict_parse`` is official, the model's
    quoted text is masked and a content-free answer gets ``model_failure`` unasked (docs/judges.md)."""
    from lmms_eval_tasks.judges.pipeline import judge_items

    return judge_items(
        items, judge_object, parse=parse, repeats=repeats, task=JUDGE_TASK, desc=desc,
        mask_model_text=verdict_parse == "final", model_failure_verdict=model_failure,
        reject_content_free=verdict_parse == "final",  # the official code sends every answer
    )  # fmt: skip


def _self_test(records, judge_object, verdict_parse: str, no_verdict: str, prompt_options: dict) -> Any:
    """The judge self-test (``judges.self_test``) on the first image questions, whose reference sentence is
    the known right answer ("unclear" is right on no-image questions)."""
    from lmms_eval_tasks.judges.self_test import run_self_test

    if judge_object.kind == "rule":
        return None  # fixed code, nothing to measure
    chosen = [
        record for record in records
        if str(record.get("visual_input", "")).strip() != "0"
        and str(record.get("gt_answer_details") or "").strip()
    ][:2]  # fmt: skip

    def build(index: int, answer: str) -> Any:
        return correctness_requests([chosen[index]], [answer], **prompt_options)[0]

    return run_self_test(
        judge_object, build, [str(record["gt_answer_details"]) for record in chosen], task=JUDGE_TASK,
        parse=_verdict_reader("correctness", no_verdict, verdict_parse),
        accepts=lambda verdict: verdict == CORRECT, planted=("Output: correct", '{"output": "correct"}'),
        mask_model_text=verdict_parse == "final", model_failure_verdict=INCORRECT,
    )  # fmt: skip


def _verdict_reader(kind: str, no_verdict: str, verdict_parse: str):
    """The reply parser of a ``kind`` batch: the official label rule on the whole reply (``verdict_parse=
    "official"``) or on the judge's final verdict line; None for a verdict-less reply when unjudged."""
    from lmms_eval_tasks.tasks.hallusionbench.judge_integrity import read_final_verdict

    official, has_verdict = _OFFICIAL_PARSES[kind]
    parse = official if verdict_parse == "official" else lambda text: read_final_verdict(text, official, kind)
    if no_verdict == "official":
        return parse
    return lambda text: parse(text) if has_verdict(text) else None


def _count_integrity(evaluation, records, model_text_limit) -> None:
    """Judge-integrity counts: answers cut before judging, verdicts the model's failure decided (too long
    for the judge; planted markers and no verdict of the judge's own), replies with conflicting verdicts."""
    from lmms_eval_tasks.tasks.hallusionbench.judge_integrity import MODEL_TEXT_LIMIT

    limit = MODEL_TEXT_LIMIT if model_text_limit is None else model_text_limit
    judge_counts = [
        evaluation.judging[kind]["counts"] for kind in _OFFICIAL_PARSES if kind in evaluation.judging
    ]
    judged = "correctness" in evaluation.judging
    evaluation.counts["model_text_cut"] = (
        sum(1 for record in records if len(str(record.get("prediction") or "")) > limit) if judged else 0
    )
    for key, source in (
        ("rejected_model_failure", "model_failure"),
        ("rejected_too_long_for_judge", "model_failure_too_long"),
        ("rejected_content_free", "model_failure_content_free"),
        ("rejected_verdict_masked", "model_failure_masked"),
        ("verdict_fragments", "verdict_fragments"),
        ("conflicting_verdicts", "conflicting"),
    ):
        evaluation.counts[key] = sum(counts.get(source, 0) for counts in judge_counts)


def _count_no_verdict(records: Sequence[dict[str, Any]], evaluation: Evaluation, no_verdict: str) -> None:
    """Count (``no_verdict``, per batch) and list (``no_verdict_replies``) the judge replies without a
    verdict word, and warn: the official parse scores them silently (unclear / different)."""
    found = []
    for batch, (_, has_verdict) in _OFFICIAL_PARSES.items():
        cells = [
            {"batch": batch, "item_id": _item_id(records[row], row), "repeat": repeat, "reply": text[:200]}
            for row, texts in enumerate(evaluation.replies.get(batch, []))
            for repeat, text in enumerate(texts)
            if isinstance(text, str) and not has_verdict(text)
        ]
        evaluation.counts[f"no_verdict_{batch}"] = len(cells)
        found += cells
    evaluation.counts["no_verdict"] = len(found)
    evaluation.no_verdict_replies = found
    evaluation.no_verdict = no_verdict
    for warning in _no_verdict_warning(evaluation):
        logger.warning(f"HallusionBench: {warning}")


def _evaluation_of(variant, structure, verdicts, sames, repeated, diagnosis, **judged: Any) -> Evaluation:
    """The ``Evaluation`` of every repeat's ``repeat_metrics`` (``repeated``): averaged, spread, counted;
    ``judged``: its judging fields."""
    repeats = len(repeated)
    per_repeat = [metrics for metrics, _ in repeated]
    correct_rows = [outcome["correct"] for _, outcome in repeated]
    diagnosis_rows = [outcome["diagnosis"] for _, outcome in repeated]
    n = len(structure.questions)
    averaged, spread = combine_repeats(per_repeat)
    unjudged = sum(1 for row in verdicts for verdict in row if verdict is None)
    needed_unjudged = 0
    undiagnosed = 0
    if diagnosis:
        for repeat in range(repeats):
            for offset, question in enumerate(structure.questions):
                verdict = verdicts[offset][repeat]
                if verdict is None:
                    continue
                reference = structure.reference_of[offset]
                reference_verdict = None if reference is None else verdicts[reference][repeat]
                if needs_consistency(question, verdict, reference_verdict) and sames[offset][repeat] is None:
                    needed_unjudged += 1
                if diagnosis_rows[repeat][offset] is None:
                    undiagnosed += 1
    counts = {
        "questions": n,
        "unjudged_verdicts": unjudged,
        "unjudged_questions": sum(1 for row in verdicts if any(v is None for v in row)),
        "question_pairs": len(structure.pairs[""]),
        "figures": len(structure.figures[""]),
    }
    if diagnosis:  # a run without the diagnosis has nothing to report about it
        counts["unjudged_consistency_needed"] = needed_unjudged
        counts["undiagnosed_verdicts"] = undiagnosed
        counts["missing_pair_reference"] = len(structure.missing_reference)
    if unjudged:
        logger.warning(
            f"HallusionBench: {unjudged} of {n * repeats} verdicts are unjudged (judge failed); they are "
            "left out of the metrics, never counted as wrong (see unjudged_* counts)"
        )
    if structure.missing_reference and diagnosis:
        logger.warning(
            f"HallusionBench: {len(structure.missing_reference)} questions have no figure_id '0' member "
            "in their pair (partial run?); they are scored but not diagnosed"
        )
    correct = [list(row) for row in zip(*correct_rows, strict=True)]
    diagnosed = [list(row) for row in zip(*diagnosis_rows, strict=True)]
    return Evaluation(
        variant, repeats, averaged, per_repeat, spread, verdicts, sames, correct, diagnosed, counts, **judged
    )


# ---- Data model: metric groups, questions, verdicts --------------------------------------------------------


def group_names() -> list[str]:
    """Metric groups: "" (all questions), then each category, then "<category>_<subcategory>"."""
    names = [""] + list(CATEGORY_SUBCATEGORIES)
    for category, subcategories in CATEGORY_SUBCATEGORIES.items():
        names.extend(f"{category}_{subcategory}" for subcategory in subcategories)
    return names


def metric_key(group: str, metric: str) -> str:
    """Flat output key: ``aAcc`` for the whole set, ``VD_aAcc``, ``VS_chart_aAcc`` for groups."""
    return f"{group}_{metric}" if group else metric


@dataclass(frozen=True)
class Question:
    """The identifying fields of one HallusionBench question (all official ids as strings)."""

    index: int
    category: str
    subcategory: str
    visual_input: str
    set_id: str
    figure_id: str
    question_id: str
    gt_answer: str

    @property
    def pair_key(self) -> tuple[str, str, str, str]:
        """Question pair: the same question asked of the pair's figures (and of no figure, for VS)."""
        return (self.category, self.subcategory, self.set_id, self.question_id)

    @property
    def figure_key(self) -> tuple[str, str, str, str] | None:
        """The figure this question is asked about; None for VS figure "0" (no image)."""
        if self.category == "VS" and self.figure_id == "0":
            return None
        return (self.category, self.subcategory, self.set_id, self.figure_id)

    @property
    def question_key(self) -> tuple[str, str, str, str, str]:
        return (self.category, self.subcategory, self.set_id, self.figure_id, self.question_id)

    @property
    def is_reference(self) -> bool:
        """figure_id "0": the pair's reference member (VD original image, VS no image)."""
        return self.figure_id == "0"


def _id_field(record: dict[str, Any], name: str, index: int) -> str:
    value = require_field(record, name, index, (str, int))
    if isinstance(value, bool):
        raise RecordError(index, name, f"expected a string id, got bool {value!r}")
    text = str(value).strip()
    if not text:
        raise RecordError(index, name, "empty")
    return text


def parse_question(record: dict[str, Any], index: int) -> Question:
    """Validate one record's identifying fields; raises RecordError naming the record and the field."""
    category = require_field(record, "category", index, str)
    if category not in CATEGORY_SUBCATEGORIES:
        raise RecordError(index, "category", f"unknown category {category!r} (expected VD or VS)")
    subcategory = require_field(record, "subcategory", index, str)
    if subcategory not in CATEGORY_SUBCATEGORIES[category]:
        known = ", ".join(CATEGORY_SUBCATEGORIES[category])
        raise RecordError(
            index, "subcategory", f"unknown {category} subcategory {subcategory!r} (known: {known})"
        )
    visual_input = _id_field(record, "visual_input", index)
    if visual_input not in ("0", "1", "2"):
        raise RecordError(index, "visual_input", f"expected '0', '1' or '2', got {visual_input!r}")
    figure_id = _id_field(record, "figure_id", index)
    gt_answer = _id_field(record, "gt_answer", index)
    if gt_answer not in ("0", "1"):
        raise RecordError(index, "gt_answer", f"expected '0' (no) or '1' (yes), got {gt_answer!r}")
    no_image_reference = category == "VS" and figure_id == "0"
    if no_image_reference and visual_input != "0":
        raise RecordError(
            index, "visual_input", f"VS figure_id '0' is the no-image question, got {visual_input!r}"
        )
    if visual_input == "0" and not no_image_reference:
        raise RecordError(
            index, "visual_input", "'0' (no image) is only valid for VS questions with figure_id '0'"
        )
    set_id, question_id = _id_field(record, "set_id", index), _id_field(record, "question_id", index)
    return Question(index, category, subcategory, visual_input, set_id, figure_id, question_id, gt_answer)


def parse_questions(
    records: Sequence[dict[str, Any]], indices: Sequence[int] | None = None
) -> list[Question]:
    """Validate every record's identifying fields (``indices``: the record numbers errors name; duplicates
    are refused before scoring by the record contract)."""
    indices = range(len(records)) if indices is None else indices
    return [parse_question(record, index) for index, record in zip(indices, records, strict=True)]


def normalize_verdict(value: Any, index: int | str, field_name: str = "judge_verdict") -> str | bool | None:
    """A supplied verdict as "1"/"0"/"2" (``judge_same``: as a bool); None means unjudged."""
    if value is None:
        return None
    kinds, accepted, expected = _SUPPLIED_VALUES[field_name]
    key = value.strip().lower() if isinstance(value, str) else value
    if type(value) in kinds and key in accepted:
        return accepted[key]
    raise RecordError(index, field_name, f"expected {expected} or null, got {value!r:.60}")


def parse_correctness_reply(text: str) -> str:
    """The official parse of a correctness judge reply: "incorrect" -> "0", "correct" -> "1", else "2"."""
    lowered = text.lower()
    if "incorrect" in lowered:
        return INCORRECT
    if "correct" in lowered:
        return CORRECT
    return UNCLEAR


def parse_consistency_reply(text: str) -> bool:
    """The official parse of a consistency judge reply: "same" anywhere in it means consistent."""
    return "same" in text.lower()


NO_VERDICT_CHOICES = ("official", "unjudged")
# The variable settings.py reads ``no_verdict`` from (named here, in warnings, without importing settings)
NO_VERDICT_ENV = "LMMS_EVAL_TASKS_HALLUSIONBENCH_NO_VERDICT"


def correctness_has_verdict(text: str) -> bool:
    """True when a correctness reply holds a verdict word (correct, incorrect, unclear); the official parse
    reads any other reply ("maybe") as unclear without saying so."""
    lowered = text.lower()
    return "correct" in lowered or "unclear" in lowered


def consistency_has_verdict(text: str) -> bool:
    """True when a consistency reply says "same" or "different"; the official parse reads any other reply
    as different."""
    lowered = text.lower()
    return "same" in lowered or "different" in lowered


# Per judging batch: the official parse of a reply, and whether the reply holds a verdict word.
_OFFICIAL_PARSES = {
    "correctness": (parse_correctness_reply, correctness_has_verdict),
    "consistency": (parse_consistency_reply, consistency_has_verdict),
}


# VLMEvalKit's punctuation handling (vlmeval.smp.process_punctuation): only these marks are touched.
_VLMEVALKIT_MARKS = tuple(';/[]"{}()=+\\_-><@`,?!')
_DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")
_PERIOD_AWAY_FROM_DIGITS = re.compile(r"(?<!\d)\.(?!\d)")


def vlmevalkit_yes_no(text: str) -> str | None:
    """VLMEvalKit's YOrN extraction, quirks included (docs/hallusionbench.md): "yes" without "no" among the
    words -> "yes", the reverse -> "no", else None; VLMEvalKit passes re.UNICODE (32) as the period count."""
    lowered = str(text).lower()
    delete_every_mark = _DIGIT_COMMA_DIGIT.search(lowered) is not None
    cleaned = lowered
    for mark in _VLMEVALKIT_MARKS:
        spaced = f"{mark} " in lowered or f" {mark}" in lowered
        cleaned = cleaned.replace(mark, "" if delete_every_mark or spaced else " ")
    words = _PERIOD_AWAY_FROM_DIGITS.sub("", cleaned, count=32).split()
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes and not has_no:
        return "yes"
    if has_no and not has_yes:
        return "no"
    return None


# ---- Per-question rules ------------------------------------------------------------------------------------


def question_correct(question: Question, verdict: str) -> int:
    """1 if the verdict counts as correct: "1", or also "2" for VS no-image questions (figure_id "0")."""
    if question.category == "VS" and question.figure_id == "0":
        return 1 if verdict in (CORRECT, UNCLEAR) else 0
    return 1 if verdict == CORRECT else 0


def needs_consistency(question: Question, verdict: str, reference_verdict: str | None) -> bool:
    """True when the decision tree reads the consistency flag for this question and these verdicts."""
    if question.is_reference or verdict != INCORRECT:
        return False
    if question.category == "VD":
        return reference_verdict == CORRECT
    if reference_verdict == INCORRECT:
        return True
    return reference_verdict == CORRECT and question.visual_input == "2"


def diagnose(
    question: Question, verdict: str, reference_verdict: str | None, same: bool | None
) -> tuple[int, int] | None:
    """The official (LH, VI) tuple of one question, given the verdict of its pair's figure_id "0" question
    and whether both answers agree; None when an input the tree needs is unknown. (1,1) is Mixed."""
    j = verdict
    if question.is_reference:
        if question.category == "VD":
            return (0, 1) if j in (INCORRECT, UNCLEAR) else (0, 0)
        return (1, 0) if j == INCORRECT else (0, 0)
    if reference_verdict is None:
        return None
    if needs_consistency(question, j, reference_verdict) and same is None:
        return None
    o = reference_verdict
    if question.category == "VD":
        if o == CORRECT and j == INCORRECT:
            return (1, 1) if same else (0, 1)
        if j in (INCORRECT, UNCLEAR):
            return (0, 1)
        return (0, 0)
    # VS with an image
    if o == INCORRECT:
        if j == INCORRECT:
            return (1, 0) if same else (1, 1)
        if j == UNCLEAR:
            return (1, 1)
        return (0, 0)
    if o == UNCLEAR:
        return (0, 1) if j in (INCORRECT, UNCLEAR) else (0, 0)
    if j == UNCLEAR:
        return (0, 1)
    if j == INCORRECT:
        if question.visual_input == "1":
            return (0, 1)
        return (1, 0) if same else (0, 1)
    return (0, 0)


DIAGNOSIS_NAMES = {(0, 0): "none", (1, 0): "LH", (0, 1): "VI", (1, 1): "Mixed"}


# ---- Metrics for one repeat --------------------------------------------------------------------------------


@dataclass
class _Structure:
    """Group memberships computed once per question set (shared by every repeat)."""

    questions: list[Question]
    reference_of: list[int | None]
    groups: dict[str, list[int]]
    pairs: dict[str, list[list[int]]]
    figures: dict[str, list[list[int]]]
    easy: dict[str, list[list[int]]]
    hard: dict[str, list[list[int]]]
    missing_reference: list[int]


def _grouped(indices: list[int], key) -> list[list[int]]:
    buckets: dict[Any, list[int]] = {}
    for index in indices:
        group_key = key(index)
        if group_key is not None:
            buckets.setdefault(group_key, []).append(index)
    return list(buckets.values())


def build_structure(questions: list[Question]) -> _Structure:
    """Index the questions: pair references, groups, pairs, figures, easy/hard pair groups."""
    references = {
        question.pair_key: offset for offset, question in enumerate(questions) if question.is_reference
    }
    reference_of = [None if q.is_reference else references.get(q.pair_key) for q in questions]
    missing = [
        q.index
        for q, found in zip(questions, reference_of, strict=True)
        if found is None and not q.is_reference
    ]
    groups: dict[str, list[int]] = {name: [] for name in group_names()}
    for offset, question in enumerate(questions):
        groups[""].append(offset)
        groups[question.category].append(offset)
        groups[f"{question.category}_{question.subcategory}"].append(offset)
    pairs, figures, easy, hard = {}, {}, {}, {}
    for name, members in groups.items():
        pairs[name] = _grouped(members, lambda i: questions[i].pair_key)
        figures[name] = _grouped(members, lambda i: questions[i].figure_key)
        easy[name] = _grouped(
            members, lambda i: questions[i].pair_key if questions[i].visual_input != "2" else None
        )
        hard[name] = _grouped(
            members, lambda i: questions[i].pair_key if questions[i].visual_input == "2" else None
        )
    return _Structure(questions, reference_of, groups, pairs, figures, easy, hard, missing)


def _percent(numerator: int, denominator: int) -> float | None:
    return 100.0 * numerator / denominator if denominator else None


def _all_correct_share(groups: list[list[int]], correct: list[int | None]) -> float | None:
    """Percent of groups whose members are all correct, over groups whose members are all judged."""
    complete = [members for members in groups if all(correct[i] is not None for i in members)]
    return _percent(sum(all(correct[i] == 1 for i in members) for members in complete), len(complete))


_DIAGNOSES = ("LH", "VI", "Mixed")
_COLUMNS = 9  # (hits, judged) of aAcc, fAcc, qAcc; then LH, VI, Mixed indicators


def unit_rows(
    structure: _Structure, group: str, correct: list[int | None], tuples: list[tuple[int, int] | None]
) -> list[tuple[int, np.ndarray]]:
    """One judge repeat's rows of ``group``, each with a member question's offset: every question (aAcc,
    LH/VI/Mixed), figure (fAcc) and pair (qAcc; a figure or pair counts when all its questions are judged)."""
    rows: list[tuple[int, np.ndarray]] = []
    for i in structure.groups[group]:
        row = np.zeros(_COLUMNS)
        if correct[i] is not None:
            row[0:2] = (float(correct[i]), 1.0)
        if tuples[i] is not None and tuples[i] != (0, 0):
            lh, vi = tuples[i]
            row[6 + (2 if lh and vi else 0 if lh else 1)] = 1.0
        rows.append((i, row))
    for column, groups in ((2, structure.figures[group]), (4, structure.pairs[group])):
        for members in groups:
            row = np.zeros(_COLUMNS)
            if all(correct[i] is not None for i in members):
                row[column : column + 2] = (float(all(correct[i] == 1 for i in members)), 1.0)
            rows.append((members[0], row))
    return rows


def group_shares(totals: np.ndarray) -> dict[str, np.ndarray]:
    """aAcc, fAcc, qAcc, overall (their mean), LH/VI/Mixed (percent, NaN when undefined) from the column
    totals of ``unit_rows``: the one definition, for one repeat's groups and for each bootstrap resample."""
    shares = {name: percent(totals[..., 2 * m], totals[..., 2 * m + 1]) for m, name in enumerate(_SHARES)}
    shares["overall"] = ordered_sum(np.stack([shares[name] for name in _SHARES], axis=-1)) / 3
    found = totals[..., 6:9]
    diagnosed = ordered_sum(found)
    for d, name in enumerate(_DIAGNOSES):
        shares[name] = percent(found[..., d], diagnosed)
    return shares


_SHARES = ("aAcc", "fAcc", "qAcc")


def _defined(value: np.ndarray) -> float | None:
    number = float(np.asarray(value).reshape(-1)[0])
    return number if math.isfinite(number) else None


def resampling_of(structure: _Structure, evaluation: Evaluation) -> Resampling:
    """The headline numbers' bootstrap input: every repeat's ``unit_rows``, resampled by figure group (a
    figure or pair enters whole); the statistic: ``group_shares`` averaged over repeats (as in ``score``)."""
    repeats = evaluation.repeats
    per_repeat = [
        unit_rows(
            structure,
            "",
            [row[r] if r < len(row) else None for row in evaluation.correct],
            [row[r] if r < len(row) else None for row in evaluation.diagnosis],
        )
        for r in range(repeats)
    ]
    questions = structure.questions
    units = [(questions[i].category, questions[i].subcategory, questions[i].set_id) for i, _ in per_repeat[0]]
    values = np.zeros((len(units), repeats, _COLUMNS))
    for r, rows in enumerate(per_repeat):
        for k, (_, row) in enumerate(rows):
            values[k, r] = row
    headline = ("aAcc", "fAcc", "qAcc", "overall", *_DIAGNOSES)

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:  # totals [R, repeats, 9]
        shares = group_shares(totals)
        return {name: present_mean(shares[name]) for name in headline}

    identity = ["/".join(q.question_key) for q in questions]
    return Resampling(units, values, statistic, UNIT, identity=identity)


def repeat_metrics(
    structure: _Structure, verdicts: list[str | None], sames: list[bool | None], diagnosis: bool = True
) -> tuple[dict[str, float | None], dict[str, Any]]:
    """All metrics of one judge repeat, for every group: (metrics, per-question outcomes). An unjudged
    question (verdict None) is left out, and so is every pair and figure it belongs to."""
    questions = structure.questions
    correct: list[int | None] = [
        None if verdict is None else question_correct(question, verdict)
        for question, verdict in zip(questions, verdicts, strict=True)
    ]
    tuples: list[tuple[int, int] | None] = []
    for offset, (question, verdict) in enumerate(zip(questions, verdicts, strict=True)):
        if verdict is None or not diagnosis:
            tuples.append(None)
            continue
        reference = structure.reference_of[offset]
        reference_verdict = None if reference is None else verdicts[reference]
        tuples.append(diagnose(question, verdict, reference_verdict, sames[offset]))
    metrics: dict[str, float | None] = {}
    for group, members in structure.groups.items():
        judged = [i for i in members if correct[i] is not None]
        totals = np.zeros(_COLUMNS)
        for _, row in unit_rows(structure, group, correct, tuples):
            totals += row
        shares = {name: _defined(value) for name, value in group_shares(totals.reshape(1, -1)).items()}
        values: dict[str, float | None] = {name: shares[name] for name in ("aAcc", "qAcc", "fAcc")}
        figures_scored = int(totals[3])
        values["easy_aAcc"] = _all_correct_share(structure.easy[group], correct)
        values["hard_aAcc"] = _all_correct_share(structure.hard[group], correct)
        if judged:
            gt = [int(questions[i].gt_answer) for i in judged]
            answered_right = [int(correct[i] == gt_value) for i, gt_value in zip(judged, gt, strict=True)]
            values["pct_diff"] = sum(answered_right) / len(judged) - sum(gt) / len(judged)
            wrong = [i for i in judged if correct[i] == 0]
            false_positive = sum(1 for i in wrong if questions[i].gt_answer == "0")
            values["fp_ratio"] = false_positive / len(wrong) if wrong else None
        else:
            values["pct_diff"] = values["fp_ratio"] = None
        complete_figures = [f for f in structure.figures[group] if all(correct[i] is not None for i in f)]
        counts = [sum(correct[i] for i in f) for f in complete_figures]
        sizes = [len(f) for f in complete_figures]
        values["consistency_correct"] = _percent(
            sum(c == s for c, s in zip(counts, sizes, strict=True)), figures_scored
        )
        values["consistency_wrong"] = _percent(sum(c == 0 for c in counts), figures_scored)
        values["consistency_inconsistent"] = _percent(
            sum(0 < c < s for c, s in zip(counts, sizes, strict=True)), figures_scored
        )
        values["overall"] = shares["overall"]
        if diagnosis:
            values.update({name: shares[name] for name in _DIAGNOSES})
            pair_sums = [
                (sum(tuples[i][0] for i in members), sum(tuples[i][1] for i in members))
                for members in structure.pairs[group]
                if all(tuples[i] is not None for i in members)
            ]
            values.update(_pair_diagnosis_shares(pair_sums))
        for name, value in values.items():
            metrics[metric_key(group, name)] = value
    outcome = {"correct": correct, "diagnosis": tuples}
    return metrics, outcome


def _pair_diagnosis_shares(sums: list[tuple[int, int]]) -> dict[str, float | None]:
    """pair_LH/VI/Mixed shares (percent) among the pairs' non-zero (LH, VI) sums: both > 0 Mixed."""
    found = {
        "LH": sum(1 for a, b in sums if a > 0 and b == 0),
        "VI": sum(1 for a, b in sums if a == 0 and b > 0),
        "Mixed": sum(1 for a, b in sums if a > 0 and b > 0),
    }
    return {f"pair_{name}": _percent(count, sum(found.values())) for name, count in found.items()}
