"""Is my number the paper's? A report against the published rows: a model matched by checkpoint or
``--published-as`` only; per metric both values, the difference, the verdict and known setting differences."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmms_eval_tasks.host.llava_checkpoints import ORIGINAL_TO_HF_CHECKPOINTS
from lmms_eval_tasks.reporting.published import PublishedRow

SAMPLING_RULE = (
    "sampling explains the difference when the published value lies inside the run's 95% interval "
    "(the report's uncertainty record), widened by half a unit of the published value's last printed digit "
    "(its rounding); outside it, the difference is larger than the run's sampling error alone explains (the "
    "published value's own sampling error is not known and not counted). A zero-width interval (every unit "
    "scored alike) estimates no sampling error: it answers only when the run's value is the published one"
)
# Reasons that are caveats, not a difference of the run's setting from the paper's (they cannot be removed
# by running differently): the judge snapshot behind the paper's model name, an unchecked published value.
_CAVEAT_PREFIXES = ("judge: {paper_model}, the paper's model name", "the published value was not checked")
# Original LLaVA checkpoints -> the published models' names (the papers' names for them).
_ORIGINAL_NAMES: dict[str, str] = {
    "liuhaotian/llava-v1.5-7b": "LLaVA-1.5-7B",
    "liuhaotian/llava-v1.5-13b": "LLaVA-1.5-13B",
    "liuhaotian/llava-v1.6-vicuna-7b": "LLaVA-NeXT-Vicuna-7B",
    "liuhaotian/llava-v1.6-vicuna-13b": "LLaVA-NeXT-13B",
    "liuhaotian/llava-v1.6-mistral-7b": "LLaVA-NeXT-Mistral-7B",
    "liuhaotian/llava-v1.6-34b": "LLaVA-NeXT-34B",
}
# Every checkpoint the pack can name: the originals and their transformers conversions (one mapping).
CHECKPOINT_NAMES: dict[str, str] = {
    **_ORIGINAL_NAMES,
    **{ORIGINAL_TO_HF_CHECKPOINTS[original]: name for original, name in _ORIGINAL_NAMES.items()},
}


# The dtype the published models ran in, where the model's own evaluation code records it: the original
# LLaVA code loads its checkpoints in float16 (llava/model/builder.py of haotian-liu/LLaVA).
PAPER_DTYPES: dict[str, str] = {name: "float16" for name in _ORIGINAL_NAMES.values()}
# Model argument spellings of one dtype -> its name.
_DTYPE_NAMES = {
    "float16": "float16", "fp16": "float16", "half": "float16", "torch.float16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16", "torch.bfloat16": "bfloat16",
    "float32": "float32", "fp32": "float32", "float": "float32", "torch.float32": "float32",
}  # fmt: skip
# Model arguments that quantize the weights (the published models ran unquantized).
_QUANTIZING_ARGS = (
    "load_in_4bit",
    "load_in_8bit",
    "quantization",
    "quantization_config",
    "bnb_4bit_quant_type",
)


@dataclass(frozen=True)
class ModelMatch:
    """Which published model a run is, and how that was decided (``how`` is shown in reports)."""

    name: str | None
    how: str
    checkpoint: str | None = None


def run_checkpoint(provenance: Mapping[str, Any]) -> str | None:
    """The checkpoint a report's run loaded: the substitution's loaded checkpoint, else ``pretrained=``
    of the model arguments; None when neither names one."""
    substitution = provenance.get("model_substitution")
    if isinstance(substitution, Mapping) and substitution.get("checkpoint"):
        return str(substitution["checkpoint"])
    return _model_arguments(provenance.get("model_args")).get("pretrained") or None


def _model_arguments(model_args: Any) -> dict[str, str]:
    """``key=value,...`` model arguments as a dict, stripped (a repeated key's last value, as the host)."""
    pairs = (part.partition("=") for part in str(model_args or "").split(","))
    return {key.strip(): value.strip() for key, _, value in pairs if key.strip()}


def match_model(provenance: Mapping[str, Any], published_as: str | None = None) -> ModelMatch:
    """The published model of a run: ``published_as`` when given, else its checkpoint's name."""
    checkpoint = run_checkpoint(provenance)
    if published_as:
        own = CHECKPOINT_NAMES.get(checkpoint or "")
        conflict = (
            f"; OVERRIDES the checkpoint's own published model {own}" if own and own != published_as else ""
        )
        return ModelMatch(
            published_as,
            f"--published-as {published_as} (the run's checkpoint: {checkpoint or 'not recorded'}{conflict})",
            checkpoint,
        )
    if checkpoint is None:
        return ModelMatch(None, f"no checkpoint recorded for model {provenance.get('model')}: not matched")
    name = CHECKPOINT_NAMES.get(checkpoint)
    if name is None:
        return ModelMatch(
            None, f"checkpoint {checkpoint} is not a published model (give --published-as NAME)", checkpoint
        )
    return ModelMatch(name, f"checkpoint {checkpoint} is {name}", checkpoint)


def published_module(benchmark: str) -> Any | None:
    """The benchmark package's ``published.py``, or None for a benchmark without one (or unknown)."""
    from lmms_eval_tasks.framework.registry import benchmarks

    entry = benchmarks().get(benchmark)
    return entry.own_module("published") if entry is not None else None


def published_for_task(module: Any, task: str) -> tuple[tuple[Any, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs: the
    module's own ``published_for_task`` where it has one, else all its ``PUBLISHED`` rows."""
    own = getattr(module, "published_for_task", None)
    return own(task) if own is not None else (module.PUBLISHED, [])


@dataclass
class MetricVerdict:
    """One compared metric: published value, run value and interval, difference, the rule's answer."""

    metric: str
    published: float
    value: float | None
    low: float | None
    high: float | None
    difference: float | None
    within_sampling: bool | None  # None: cannot tell (``why`` says what is missing)
    why: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Verdict:
    """The reproduction verdict of one report (task) of a run."""

    task: str
    benchmark: str
    model: ModelMatch
    published_row: PublishedRow | None = None
    metrics: list[MetricVerdict] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    note: str = ""
    # The reasons that are a difference of the run's setting from the paper's (not mere caveats).
    setting_differences: list[str] = field(default_factory=list)

    @property
    def summary(self) -> str:
        """A few words for the overview: agrees (a reproduction: within sampling, same setting) /
        within sampling, setting differs (not a reproduction) / differs / cannot tell / not matched."""
        if self.published_row is None:
            return "not matched"
        answers = [m.within_sampling for m in self.metrics]
        if any(answer is False for answer in answers):
            return "differs"  # one metric outside its interval is enough, whatever the others say
        if not answers or any(answer is None for answer in answers):
            return "cannot tell"
        return "within sampling, setting differs" if self.setting_differences else "agrees"

    def as_dict(self) -> dict[str, Any]:
        row = self.published_row
        return {
            "task": self.task,
            "benchmark": self.benchmark,
            "published_model": self.model.name,
            "matched_by": self.model.how,
            "checkpoint": self.model.checkpoint,
            "summary": self.summary,
            "rule": SAMPLING_RULE,
            "source": None if row is None else _source_dict(row),
            "metrics": [m.as_dict() for m in self.metrics],
            "reasons": list(self.reasons),
            "setting_differences": list(self.setting_differences),
            "note": self.note,
        }


def _source_dict(row: PublishedRow) -> dict[str, Any]:
    source = row.source
    return {"label": row.label, **(source.as_dict() if hasattr(source, "as_dict") else {"text": str(source)})}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def printed_half_unit(published: float) -> float:
    """Half a unit of the published value's last printed digit (25.06 -> 0.005, 16.0 -> 0.05): the
    rounding the printed value carries."""
    text = repr(float(published))
    if "e" in text or "E" in text:
        return 0.0
    decimals = len(text.split(".")[1]) if "." in text else 0
    return 0.5 * 10.0**-decimals


def compare_metric(report: Mapping[str, Any], metric: str, published: float) -> MetricVerdict:
    """The verdict of one metric under ``SAMPLING_RULE``."""
    value = _number((report.get("metrics") or {}).get(metric))
    block = ((report.get("details") or {}).get("uncertainty") or {}).get(metric)
    block = block if isinstance(block, Mapping) else {}
    low, high, estimate = (_number(block.get(key)) for key in ("low", "high", "estimate"))
    difference = None if value is None else value - published
    verdict = MetricVerdict(metric, published, value, low, high, difference, None)
    rounding = printed_half_unit(published)
    if value is None:
        verdict.why = f"the run has no value of {metric} (missing or undefined)"
    elif estimate is not None and not math.isclose(estimate, value, rel_tol=1e-6, abs_tol=1e-9):
        # the report's overview refuses such an interval too (human_report.interval_text)
        verdict.low = verdict.high = None
        verdict.why = f"the run's interval of {metric} is around {estimate}, not its value {value}: not used"
    elif low is None or high is None:
        verdict.why = f"the run recorded no interval for {metric}"
    elif high - low <= 0:
        if abs(value - published) <= rounding + 1e-9 * max(1.0, abs(published)):
            verdict.within_sampling = True
        else:
            verdict.why = (
                f"the run's interval of {metric} has zero width (every unit scored alike): its sampling "
                "error is not estimated"
            )
    else:
        verdict.within_sampling = low - rounding <= published <= high + rounding
    return verdict


def is_setting_difference(reason: str, paper_model: str | None) -> bool:
    """Whether a known reason is a difference of the run's setting (not a caveat, ``_CAVEAT_PREFIXES``)."""
    caveats = [prefix.format(paper_model=paper_model) for prefix in _CAVEAT_PREFIXES]
    return not any(reason.startswith(caveat) for caveat in caveats)


def model_args_reasons(model_args: str, published_model: str) -> list[str]:
    """Model arguments that change the model from the published one: quantization, and a dtype other than
    the published model's recorded one (``PAPER_DTYPES``; ``auto`` keeps the checkpoint's own)."""
    arguments = _model_arguments(model_args)
    reasons = []
    for key in _QUANTIZING_ARGS:
        value = arguments.get(key)
        if value is not None and value.lower() not in ("", "false", "0", "none", "no"):
            reasons.append(f"model quantized: {key}={value} (the published model ran unquantized)")
    paper_dtype = PAPER_DTYPES.get(published_model)
    for key in ("dtype", "torch_dtype"):
        value = arguments.get(key)
        if value is None or value.lower() == "auto":
            continue
        dtype = _DTYPE_NAMES.get(value.lower(), value)
        if paper_dtype and dtype != paper_dtype:
            reasons.append(f"model dtype: {key}={value}, not the published model's {paper_dtype}")
    return reasons


def judge_repeats_reason(judge: Mapping[str, Any], module: Any) -> list[str]:
    """Fewer judge repeats than the paper's protocol (``PAPER_JUDGE_REPEATS`` of the benchmark's
    published module): an LLM judge's verdict is then the majority of fewer draws than the paper's."""
    paper = getattr(module, "PAPER_JUDGE_REPEATS", None)
    repeats = judge.get("repeats")
    if judge.get("kind") == "rule" or not isinstance(paper, int) or not isinstance(repeats, int):
        return []  # a rule judge is deterministic: repeats change nothing
    if repeats >= paper:
        return []
    return [f"judge repeats: {repeats}, fewer than the paper's protocol's {paper} per item"]


def known_reasons(report: Mapping[str, Any], row: PublishedRow, task_reasons: Sequence[str]) -> list[str]:
    """Every recorded reason this run's setting differs from the published row's, most specific first (task,
    judge, subset, data, substitution, model args, corruption, variant, benchmark, deviations, unchecked)."""
    from lmms_eval_tasks.framework.registry import benchmarks

    provenance = report.get("provenance") or {}
    reasons = list(task_reasons)
    source = row.source
    paper_judge = getattr(source, "judge", "")
    judge = provenance.get("judge")
    benchmark = benchmarks().get(str(report.get("benchmark")))
    module = published_module(str(report.get("benchmark")))
    if isinstance(judge, Mapping):
        model = str(judge.get("model"))
        paper_model = getattr(benchmark, "paper_judge_model", None)
        if paper_model and model == paper_model:
            reasons.append(
                f"judge: {model}, the paper's model name; the snapshot behind that name may differ from the "
                f"paper's ({paper_judge})"
            )
        else:
            reasons.append(f"judge: {model} ({judge.get('kind')}); the published value: {paper_judge}")
        reasons += judge_repeats_reason(judge, module)
    elif getattr(benchmark, "paper_judge_model", None):
        reasons.append(f"judge: not recorded in the run's report; the published value: {paper_judge}")
    limit = provenance.get("limit")
    if limit is not None:  # the host records --limit 4 as 4.0
        shown = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
        reasons.append(f"subset: --limit {shown} (the published value is over the whole question set)")
    task = str(report.get("task"))
    if benchmark is not None and (task in benchmark.sample_tasks or task.endswith("_sample")):
        reasons.append("sample data: the run scored the bundled sample, not the benchmark's dataset")
    substitution = provenance.get("model_substitution")
    if substitution:
        reasons.append(f"model substitution: {substitution}")
    reasons += model_args_reasons(str(provenance.get("model_args") or ""), row.label)
    corruption = provenance.get("corruption")
    if corruption:
        reasons.append(f"corruption profile: {corruption}")
    settings = provenance.get("settings") or {}
    if settings.get("variant") not in (None, "", "official"):
        reasons.append(f"prompt/protocol variant: {settings['variant']}")
    if module is not None and hasattr(module, "setting_reasons") and isinstance(settings, Mapping):
        reasons += module.setting_reasons(settings)
    reasons += [f"recorded deviation: {line}" for line in provenance.get("deviations") or []]
    if not getattr(source, "checked_against", ""):
        reason = getattr(source, "unchecked_reason", "")
        note = "the published value was not checked against its source text in this pack"
        reasons.append(f"{note} ({reason})" if reason else note)
    return list(dict.fromkeys(reasons))


def verdict_for_report(report: Mapping[str, Any], published_as: str | None = None) -> Verdict:
    """The reproduction verdict of one pack report (a ``*_report.json`` dict)."""
    benchmark, task = str(report.get("benchmark")), str(report.get("task"))
    match = match_model(report.get("provenance") or {}, published_as)
    verdict = Verdict(task, benchmark, match)
    module = published_module(benchmark)
    if module is None:
        verdict.note = f"no published numbers are entered for {benchmark}"
        return verdict
    rows, task_reasons = published_for_task(module, task)
    if match.name is None:
        verdict.note = match.how
        return verdict
    row = next((row for row in rows if row.label == match.name), None)
    if row is None:
        names = ", ".join(dict.fromkeys(row.label for row in rows))
        verdict.note = f"{match.name} has no published row for {task} (published: {names})"
        return verdict
    verdict.published_row = row
    verdict.metrics = [compare_metric(report, metric, row.values[metric]) for metric in row.compared]
    verdict.reasons = known_reasons(report, row, task_reasons)
    from lmms_eval_tasks.framework.registry import benchmarks

    paper_model = getattr(benchmarks().get(benchmark), "paper_judge_model", None)
    verdict.setting_differences = [r for r in verdict.reasons if is_setting_difference(r, paper_model)]
    return verdict
