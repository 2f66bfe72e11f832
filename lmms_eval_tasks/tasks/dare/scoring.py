"""DARE (Sterz et al., 2024): linear-time answer extraction per output format and the paper's metrics along
its four robustness axes, free of any harness import (docs/dare.md has every rule).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, check_option, require_field
from lmms_eval_tasks.framework.registry import scorer

LETTERS = "ABCD"
SETUPS = ("single", "single_var", "multi")
# Output formats; "binary" is the paper's per-option yes/no variant of the multi-correct setup.
FORMATS = ("gen", "log", "json", "inv", "csv", "word", "binary")
# When a setup was run in several formats, its headline numbers use the first of these that is present.
PRIMARY_FORMAT_ORDER = ("gen", "log", "json", "csv", "word", "inv", "binary")
PROMPTS = (1, 2, 3)
# Option-set variants per instance in the 1_correct_var config (the spec: "three different sets").
VARIANTS_PER_INSTANCE = 3
GOLD_COUNTS = (0, 1, 2, 3, 4)

# Canonical category name -> the words put into the prompt's {subject}.
CATEGORY_SUBJECTS: dict[str, str] = {
    "count": "conditional counting",
    "order": "ordering",
    "vcr": "visual commonsense reasoning",
    "culture": "culture",
    "trick": "trick questions",
}
# Spellings accepted for each category (after lowercasing and turning "_" / "-" into spaces).
_CATEGORY_ALIASES: dict[str, str] = {
    **dict.fromkeys(["count", "counting", "conditional counting", "conditional count"], "count"),
    **dict.fromkeys(["order", "ordering", "spatial", "spatial ordering", "spatial reasoning"], "order"),
    **dict.fromkeys(["vcr", "visual commonsense reasoning", "visual commonsense", "commonsense"], "vcr"),
    **dict.fromkeys(["culture", "cultural", "cultural knowledge"], "culture"),
    **dict.fromkeys(["trick", "tricky", "trick question", "trick questions", "tricky questions"], "trick"),
}

# Extra options of the multi-correct "+all" / "+none" variants: variant -> {letter: meaning}.
EXTRA_OPTIONS: dict[str, dict[str, str]] = {
    "all": {"E": "all"},
    "none": {"E": "none"},
    "all_none": {"E": "all", "F": "none"},
}
EXTRA_OPTION_TEXTS = {"all": "All of the above", "none": "None of the above"}
MULTI_VARIANTS = ("standard", "binary", "plus_all", "plus_none", "plus_all_none")

# Headline metrics that also get one key per category (``<key>__<category>``) and form the
# robustness summary table (category x axis).
TABLE_COLUMNS: dict[str, str] = {
    "single_accuracy": "single_acc",
    "single_accuracy_std_over_prompts": "prompt_std",
    "single_format_range": "format_range",
    "single_var_accuracy": "var_worst",
    "single_var_drop": "var_drop",
    **{f"multi_exact_k{k}": f"multi_k{k}" for k in GOLD_COUNTS},
    "multi_f1": "multi_f1",
}

_NAN = float("nan")
# The token-based rules read at most this many characters of an output: a longer one is read as its first
# and last half of this, cut at whitespace. DARE generates at most 64 tokens (~300 characters); the
# window only bounds what a runaway or hostile output can cost (docs/dare.md).
MAX_PARSE_CHARS = 8192
_WHITESPACE = re.compile(r"\s")


@dataclass(frozen=True)
class Options:
    """DARE's scorer options, each checked here (one-line OptionError: a typo must not change numbers)."""

    primary_format: str = "gen"  # the format of the headline numbers (else the first of PRIMARY_FORMAT_ORDER)
    std_ddof: int = 0  # 0 = population std over prompts

    def __post_init__(self) -> None:
        check_option("primary_format", self.primary_format, str, choices=FORMATS)
        check_option("std_ddof", self.std_ddof, int, choices=(0, 1))


@scorer(Options)
def score(records: Iterable[dict[str, Any]], options: Options) -> tuple[dict[str, Any], dict[str, Any]]:
    """The paper's metrics in percent (keys in docs/dare.md) and the robustness summary table; test-split
    records (answers withheld) are exported unscored, their unparsed outputs counted."""
    records = list(records)
    verdicts = [
        score_record(record, index) for index, record in enumerate(records) if record.get("split") != "test"
    ]
    metrics = score_verdicts(verdicts, primary_format=options.primary_format, std_ddof=options.std_ddof)
    exported = [(index, record) for index, record in enumerate(records) if record.get("split") == "test"]
    if exported:
        metrics["exported"] = len(exported)
        unparsed = sum(parse_record(record, index).status == "unparsed" for index, record in exported)
        metrics["unparsed"] = int(metrics.get("unparsed", 0)) + unparsed
    table = summary_table(metrics)
    sample_data = any("_sample" in str(record.get("task", "")) for record in records)
    details = {
        "summary_table": table,
        "summary_table_markdown": format_table(table),
        "deviations": ["bundled generated sample data, not the DARE dataset"] if sample_data else [],
        "resampling": resampling_of(records, verdicts, options.primary_format, options.std_ddof),
    }
    return metrics, details


@scorer(Options)
def per_question_correct(records: Iterable[dict[str, Any]], options: Options) -> dict[str, bool]:
    """Correctness per question (``setup/format/p<prompt>/variant/category/id``) for ``compare``; a binary
    question's four yes/no records are one question, right as in ``multi_exact``."""
    from lmms_eval_tasks.framework.comparison import correctness_by_id

    keys: list[str] = []
    values: list[bool] = []
    indices: list[int | str] = []
    binary: dict[str, list[Verdict]] = defaultdict(list)
    for index, record in enumerate(records):
        verdict = score_record(record, index)
        parts = (verdict.answer_format, f"p{verdict.prompt}", verdict.variant, verdict.category)
        key = "/".join((verdict.setup, *parts, verdict.question_id))
        if verdict.variant == "binary":  # duplicates were refused by the record contract
            binary[key].append(verdict)
            continue
        keys.append(key)
        values.append(verdict.correct)
        indices.append(index)
    for key, decisions in binary.items():
        predicted, answered = _binary_answer(decisions)
        keys.append(key)
        values.append(answered and predicted == decisions[0].gold)
        indices.append(decisions[0].index)
    return correctness_by_id(keys, values, id_field="id", indices=indices)


def score_verdicts(
    verdicts: list[Verdict], *, primary_format: str = "gen", std_ddof: int = 0
) -> dict[str, float | int]:
    """Every DARE metric from scored records (duplicates were refused by the record contract)."""
    metrics: dict[str, float | int] = dict(_setup_metrics(verdicts, primary_format, std_ddof, detailed=True))
    for category in CATEGORY_SUBJECTS:
        subset = [verdict for verdict in verdicts if verdict.category == category]
        table = _setup_metrics(subset, primary_format, std_ddof, detailed=False) if subset else {}
        for key, value in table.items():
            if key in TABLE_COLUMNS:
                metrics[f"{key}__{category}"] = value
    metrics["records"] = len(verdicts)
    metrics["unparsed"] = sum(verdict.parsed.status == "unparsed" for verdict in verdicts)
    metrics["single_multiple_letters"] = sum(
        verdict.setup != "multi" and verdict.answer_format != "inv" and len(verdict.parsed.letters) > 1
        for verdict in verdicts
    )
    metrics["multi_contradictory"] = sum(verdict.contradictory for verdict in verdicts)
    cells: dict[tuple[str, str, int], int] = defaultdict(int)
    for verdict in verdicts:
        variant = "" if verdict.variant in ("standard", "binary") else f"_{verdict.variant}"
        cells[(verdict.setup + variant, verdict.answer_format, verdict.prompt)] += (
            verdict.parsed.status == "unparsed"
        )
    for (setup, answer_format, prompt), count in sorted(cells.items()):
        metrics[f"unparsed_{setup}_{answer_format}_p{prompt}"] = count
    return metrics


def summary_table(metrics: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The robustness summary (row per category plus "all", column per axis) from ``score`` keys."""
    rows: dict[str, dict[str, float]] = {}
    for category in [*CATEGORY_SUBJECTS, "all"]:
        suffix = "" if category == "all" else f"__{category}"
        row = {
            column: metrics[f"{key}{suffix}"]
            for key, column in TABLE_COLUMNS.items()
            if f"{key}{suffix}" in metrics
        }
        if row:
            rows[category] = row
    return rows


def format_table(table: dict[str, dict[str, float]]) -> str:
    """Render the summary table as Markdown (NaN shown as "-")."""
    columns = [column for column in TABLE_COLUMNS.values() if any(column in row for row in table.values())]
    lines = ["| category | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for category, row in table.items():
        values = [row.get(column, _NAN) for column in columns]
        cells = ["-" if value is None or math.isnan(value) else f"{value:.1f}" for value in values]
        lines.append(f"| {category} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def record_identity(record: dict[str, Any]) -> tuple[Any, ...]:
    """What a record answers, in ``RECORD_SCHEMA.identity`` order (prompt, variant, category canonical)."""
    setup, answer_format = record.get("setup"), record.get("format")
    prompt = str(record.get("prompt")).strip().lower().removeprefix("p")
    category = canonical_category(record.get("category")) or record.get("category")
    variant = multi_variant(record) if setup == "multi" else "standard"
    option = str(record.get("option") or "").strip().upper() if answer_format == "binary" else ""
    return (setup, answer_format, prompt, variant, category, str(record.get("id")).strip(), option)


def _mean(values: Iterable[float]) -> float:
    finite = [value for value in values if not math.isnan(value)]
    return sum(finite) / len(finite) if finite else _NAN


def _std(values: Sequence[float], ddof: int) -> float:
    finite = [value for value in values if not math.isnan(value)]
    if len(finite) < 2 or len(finite) - ddof <= 0:
        return _NAN
    mean = sum(finite) / len(finite)
    return math.sqrt(sum((value - mean) ** 2 for value in finite) / (len(finite) - ddof))


def _percent(hits: int, total: int) -> float:
    return 100.0 * hits / total if total else _NAN


def _formats(keys: Iterable[tuple[Any, ...]]) -> list[str]:
    """The formats present in (format, ...) keys, in FORMATS order."""
    present = {key[0] for key in keys}
    return [answer_format for answer_format in FORMATS if answer_format in present]


def _primary_format(formats: Iterable[str], preferred: str) -> str | None:
    present = set(formats)
    if preferred in present:
        return preferred
    return next((candidate for candidate in PRIMARY_FORMAT_ORDER if candidate in present), None)


# Accuracy-like values per (format, prompt) cell of one setup and one category filter.
_Cells = dict[tuple[str, int], float]


def _prompt_values(cells: dict[tuple[str, int], Any], answer_format: str) -> list[Any]:
    return [cells[(answer_format, prompt)] for prompt in PROMPTS if (answer_format, prompt) in cells]


def _single_cells(verdicts: list[Verdict]) -> _Cells:
    hits: dict[tuple[str, int], list[int]] = defaultdict(list)
    for verdict in verdicts:
        hits[(verdict.answer_format, verdict.prompt)].append(int(verdict.correct))
    return {key: _percent(sum(values), len(values)) for key, values in hits.items()}


def _worst_case_cells(
    verdicts: list[Verdict],
) -> tuple[_Cells, dict[tuple[str, int], int], dict[tuple[str, int], int]]:
    """Per cell: % of instances (category, instance_id) with every option set right, instance counts, and
    counts of instances with fewer than VARIANTS_PER_INSTANCE variants (scored on those present)."""
    instances: dict[tuple[str, int], dict[tuple[str, str], bool]] = defaultdict(dict)
    variants: dict[tuple[str, int], dict[tuple[str, str], set[str]]] = defaultdict(lambda: defaultdict(set))
    for verdict in verdicts:
        key = (verdict.answer_format, verdict.prompt)
        instance = (verdict.category, verdict.instance_id)
        cell = instances[key]
        cell[instance] = cell.get(instance, True) and verdict.correct
        variants[key][instance].add(verdict.question_id)
    values = {key: _percent(sum(cell.values()), len(cell)) for key, cell in instances.items()}
    incomplete = {
        key: sum(len(ids) < VARIANTS_PER_INSTANCE for ids in cell.values()) for key, cell in variants.items()
    }
    return values, {key: len(cell) for key, cell in instances.items()}, incomplete


@dataclass
class _MultiQuestion:
    """One multi-correct question; ``answered`` is False for unparsed or contradictory answers."""

    gold: frozenset[str]
    predicted: frozenset[str]
    exact: bool
    answered: bool

    @property
    def f1(self) -> float:
        # An unanswered question scores 0 even when its gold set is empty (NONE must be said).
        return _f1(self.predicted, self.gold) if self.answered else 0.0


def _multi_questions(verdicts: list[Verdict]) -> dict[tuple[str, int, str], list[_MultiQuestion]]:
    """Per (format, prompt, variant): one entry per question (binary records combined per question)."""
    grouped: dict[tuple[str, int, str], list[_MultiQuestion]] = defaultdict(list)
    binary: dict[tuple[str, int, str, str], list[Verdict]] = defaultdict(list)
    for verdict in verdicts:
        if verdict.variant == "binary":
            binary[(verdict.answer_format, verdict.prompt, verdict.variant, verdict.question_id)].append(
                verdict
            )
        else:
            grouped[(verdict.answer_format, verdict.prompt, verdict.variant)].append(
                _MultiQuestion(
                    verdict.gold,
                    verdict.predicted,
                    verdict.correct,
                    answered=verdict.parsed.status != "unparsed" and not verdict.contradictory,
                )
            )
    for (answer_format, prompt, variant, _), decisions in binary.items():
        gold = decisions[0].gold
        predicted, answered = _binary_answer(decisions)
        grouped[(answer_format, prompt, variant)].append(
            _MultiQuestion(gold, predicted, answered and predicted == gold, answered)
        )
    return grouped


def _binary_answer(decisions: list[Verdict]) -> tuple[frozenset[str], bool]:
    """A binary question's yes-set, and whether every option A-D got a yes or a no (else unanswered)."""
    predicted = frozenset(verdict.option for verdict in decisions if verdict.decision)
    answered = {verdict.option for verdict in decisions} == set(LETTERS) and all(
        verdict.decision is not None for verdict in decisions
    )
    return predicted, answered


def _cell_means(prefix: str, cells: list[dict[str, float]]) -> dict[str, float]:
    """``<prefix>_f1`` and ``<prefix>_exact_k<k>``: each cell metric's mean over ``cells``."""
    means = {f"{prefix}_f1": _mean(cell["f1"] for cell in cells)}
    for count in GOLD_COUNTS:
        means[f"{prefix}_exact_k{count}"] = _mean(cell[f"exact_k{count}"] for cell in cells)
    return means


def _multi_cell_metrics(questions: list[_MultiQuestion]) -> dict[str, float]:
    result: dict[str, float] = {}
    for count in GOLD_COUNTS:
        subset = [question for question in questions if len(question.gold) == count]
        result[f"exact_k{count}"] = _percent(sum(question.exact for question in subset), len(subset))
    result["f1"] = 100.0 * _mean(question.f1 for question in questions) if questions else _NAN
    return result


def _setup_metrics(
    verdicts: list[Verdict], primary_format: str, std_ddof: int, detailed: bool
) -> dict[str, float]:
    """All metrics of one category filter (all categories, or one)."""
    metrics: dict[str, float] = {}
    single = [verdict for verdict in verdicts if verdict.setup == "single"]
    single_var = [verdict for verdict in verdicts if verdict.setup == "single_var"]
    multi = [verdict for verdict in verdicts if verdict.setup == "multi"]

    # The headline numbers are the statistic the bootstrap resamples (one definition, resampling_of).
    headline = _resampling(verdicts, primary_format, std_ddof).estimate()
    single_cells = _single_cells(single)
    if single:
        metrics["single_accuracy"] = headline["single_accuracy"]
        metrics["single_accuracy_std_over_prompts"] = headline["single_accuracy_std_over_prompts"]
        # Format axis: every format's accuracy on the prompts all formats share (prompt 1 in the paper grid).
        formats = _formats(single_cells)
        shared = [
            prompt
            for prompt in PROMPTS
            if all((answer_format, prompt) in single_cells for answer_format in formats)
        ]
        format_values = [
            _mean(single_cells[(answer_format, prompt)] for prompt in shared) for answer_format in formats
        ]
        metrics["single_format_range"] = (
            (max(format_values) - min(format_values)) if len(format_values) >= 2 and shared else _NAN
        )
        if detailed:
            for answer_format in formats:
                values = _prompt_values(single_cells, answer_format)
                metrics[f"single_{answer_format}_accuracy"] = _mean(values)
                metrics[f"single_{answer_format}_std_over_prompts"] = _std(values, std_ddof)
            for (answer_format, prompt), value in sorted(single_cells.items()):
                metrics[f"single_{answer_format}_p{prompt}_accuracy"] = value

    if single_var:
        var_cells, instance_counts, incomplete_counts = _worst_case_cells(single_var)
        primary = _primary_format(_formats(var_cells), primary_format)
        metrics["single_var_accuracy"] = headline["single_var_accuracy"]
        # The drop compares like with like: single-correct accuracy on the categories that have
        # variations (VCR has none), same format and prompt.
        var_categories = {verdict.category for verdict in single_var}
        comparable = _single_cells([verdict for verdict in single if verdict.category in var_categories])
        drops = {key: comparable[key] - value for key, value in var_cells.items() if key in comparable}
        metrics["single_var_drop"] = _mean(_prompt_values(drops, primary))
        if detailed:
            metrics["single_var_instances"] = float(max(instance_counts.values(), default=0))
            metrics["single_var_incomplete_instances"] = max(incomplete_counts.values(), default=0)
            for answer_format in _formats(var_cells):
                metrics[f"single_var_{answer_format}_accuracy"] = _mean(
                    _prompt_values(var_cells, answer_format)
                )
            for (answer_format, prompt), value in sorted(var_cells.items()):
                metrics[f"single_var_{answer_format}_p{prompt}_accuracy"] = value
                if (answer_format, prompt) in drops:
                    metrics[f"single_var_{answer_format}_p{prompt}_drop"] = drops[(answer_format, prompt)]

    if multi:
        per_cell = {key: _multi_cell_metrics(questions) for key, questions in _multi_questions(multi).items()}
        standard = {
            (answer_format, prompt): values
            for (answer_format, prompt, variant), values in per_cell.items()
            if variant == "standard"
        }
        standard_formats = _formats(standard)
        primary = _primary_format(standard_formats, primary_format)
        if primary is not None:
            for key in (*(f"multi_exact_k{count}" for count in GOLD_COUNTS), "multi_f1"):
                metrics[key] = headline[key]
            f1_values = [cell["f1"] for cell in _prompt_values(standard, primary)]
            metrics["multi_f1_std_over_prompts"] = _std(f1_values, std_ddof)
        if detailed:
            for answer_format in standard_formats:
                metrics.update(_cell_means(f"multi_{answer_format}", _prompt_values(standard, answer_format)))
            for (answer_format, prompt), cell in sorted(standard.items()):
                for name, value in cell.items():
                    metrics[f"multi_{answer_format}_p{prompt}_{name}"] = value
            for variant in MULTI_VARIANTS[1:]:
                cells = [values for key, values in per_cell.items() if key[2] == variant]
                if cells:
                    metrics.update(_cell_means(f"multi_{variant}", cells))
    return metrics


UNIT = "question"  # the resampling unit: a question's records under every prompt and format
# cells: single prompts 0-2, single_var prompts 3-5, multi (prompt, #gold) 6-20, every record's unparsed 21,
# multi F1 per prompt 22-24 (summed in record order, as a prompt's questions are averaged)
_SINGLE, _VAR, _MULTI, _UNPARSED = 0, 3, 6, 6 + 3 * len(GOLD_COUNTS)
_F1 = _UNPARSED + 1
N_CELLS = _F1 + len(PROMPTS)
# value columns: hit, counted, F1, unparsed
_COLUMNS = 4


def _prompt_mean_std(values: Any, ddof: int) -> tuple[Any, Any]:
    """Mean and std over the prompts present (finite) per resample, as ``_mean``/``_std``."""
    import numpy as np

    finite = np.isfinite(values)
    n = finite.sum(axis=1)
    filled = np.where(finite, values, 0.0)
    mean = np.where(n > 0, filled.sum(axis=1) / np.maximum(n, 1), np.nan)
    squares = np.where(finite, (values - mean[:, None]) ** 2, 0.0).sum(axis=1)
    std = np.where((n >= 2) & (n - ddof > 0), np.sqrt(squares / np.maximum(n - ddof, 1)), np.nan)
    return mean, std


def resampling_of(
    records: list[dict[str, Any]], verdicts: list[Verdict], primary_format: str, std_ddof: int
) -> Any:
    """The headline metrics' bootstrap input (``_resampling``), its rows named by their records."""
    import dataclasses

    identity = ["|".join(str(part) for part in record_identity(record)) for record in records]
    return dataclasses.replace(_resampling(verdicts, primary_format, std_ddof), identity=identity)


def _resampling(verdicts: list[Verdict], primary_format: str, std_ddof: int) -> Any:
    """The headline metrics as a statistic of row totals (``_setup_metrics`` reports its ``estimate()``,
    the bootstrap resamples it); unit: the question, whose records under every prompt and format enter a
    resample whole (docs/dare.md, "Standard errors and intervals")."""
    import numpy as np

    from lmms_eval_tasks.uncertainty.resampling import Resampling

    def question(verdict: Any) -> str:
        name = verdict.instance_id if verdict.setup == "single_var" else verdict.question_id
        return f"{verdict.setup}/{verdict.category}/{name}"

    def primary(setup: str) -> str | None:  # the single setups have only the standard variant
        formats = {v.answer_format for v in verdicts if v.setup == setup and v.variant == "standard"}
        return _primary_format(formats, primary_format)

    single_format, var_format, multi_format = primary("single"), primary("single_var"), primary("multi")
    rows: list[tuple[str, int, tuple[float, float, float, float]]] = []  # (unit, cell, value columns)
    instances: dict[tuple[str, int], bool] = {}
    for verdict in verdicts:
        unit = question(verdict)
        rows.append((unit, _UNPARSED, (0.0, 0.0, 0.0, float(verdict.parsed.status == "unparsed"))))
        if verdict.setup == "single" and verdict.answer_format == single_format:
            rows.append((unit, _SINGLE + verdict.prompt - 1, (float(verdict.correct), 1.0, 0.0, 0.0)))
        elif verdict.setup == "single_var" and verdict.answer_format == var_format:
            instances[(unit, verdict.prompt)] = (
                instances.get((unit, verdict.prompt), True) and verdict.correct
            )
        elif (
            verdict.setup == "multi"
            and verdict.variant == "standard"
            and verdict.answer_format == multi_format
        ):
            # a standard multi record is one whole question (binary records are the "binary" variant)
            answered = verdict.parsed.status != "unparsed" and not verdict.contradictory
            f1 = _f1(verdict.predicted, verdict.gold) if answered else 0.0  # unanswered: 0, even for NONE
            cell = _MULTI + (verdict.prompt - 1) * len(GOLD_COUNTS) + len(verdict.gold)
            rows.append((unit, cell, (float(verdict.correct), 1.0, 0.0, 0.0)))
            rows.append((unit, _F1 + verdict.prompt - 1, (0.0, 1.0, f1, 0.0)))
    for (unit, prompt), correct in instances.items():
        rows.append((unit, _VAR + prompt - 1, (float(correct), 1.0, 0.0, 0.0)))

    def statistic(totals: np.ndarray) -> dict[str, np.ndarray]:  # totals [R, cells, columns]
        hits, counted, f1 = totals[..., 0], totals[..., 1], totals[..., 2]
        with np.errstate(all="ignore"):
            out: dict[str, np.ndarray] = {}
            if single_format is not None:
                by_prompt = 100 * hits[:, _SINGLE:_VAR] / counted[:, _SINGLE:_VAR]
                out["single_accuracy"], out["single_accuracy_std_over_prompts"] = _prompt_mean_std(
                    by_prompt, std_ddof
                )
            if var_format is not None:
                out["single_var_accuracy"] = _prompt_mean_std(
                    100 * hits[:, _VAR:_MULTI] / counted[:, _VAR:_MULTI], std_ddof
                )[0]
            if multi_format is not None:
                shape = (totals.shape[0], len(PROMPTS), len(GOLD_COUNTS))
                m_hits = hits[:, _MULTI:_UNPARSED].reshape(shape)
                m_counted = counted[:, _MULTI:_UNPARSED].reshape(shape)
                for count in GOLD_COUNTS:
                    exact = 100 * m_hits[..., count] / m_counted[..., count]
                    out[f"multi_exact_k{count}"] = _prompt_mean_std(exact, std_ddof)[0]
                # a prompt's F1: 100 x the mean over its questions (as percent of a mean, not of a sum)
                f1_by_prompt = 100.0 * (f1[:, _F1:] / counted[:, _F1:])
                out["multi_f1"] = _prompt_mean_std(f1_by_prompt, std_ddof)[0]
            out["unparsed"] = totals[:, _UNPARSED, 3]
        return out

    values = np.asarray([row[2] for row in rows], dtype=np.float64).reshape(-1, _COLUMNS)
    cells = np.asarray([row[1] for row in rows], dtype=np.int64)
    return Resampling([row[0] for row in rows], values, statistic, UNIT, cells, N_CELLS)


def gold_letters(record: dict[str, Any], index: int | str) -> frozenset[str]:
    """The gold letters of a record; ``answer`` may hold letters or option texts (matched to A-D)."""
    answer = require_field(record, "answer", index)
    if isinstance(answer, str):
        answer = [answer]
    if not isinstance(answer, (list, tuple)) and hasattr(answer, "tolist"):
        answer = answer.tolist()
    if not isinstance(answer, (list, tuple)):
        raise RecordError(
            index, "answer", f"expected a list of letters or option texts, got {type(answer).__name__}"
        )
    texts = {letter: record[letter] for letter in LETTERS if isinstance(record.get(letter), str)}

    def by_text(text: str, normalise: Any) -> list[str]:
        return [letter for letter, option in texts.items() if normalise(option) == normalise(text)]

    found: set[str] = set()
    for element in answer:
        if not isinstance(element, str):
            raise RecordError(index, "answer", f"element {element!r} is not a string")
        stripped = element.strip()
        # an option's exact text first, then a letter, then an option's text up to case and punctuation
        letter = [stripped.upper()] if len(stripped) == 1 else []
        for matches in (by_text(stripped, str.strip), letter, by_text(stripped, _normalise_text)):
            if len(matches) == 1 and matches[0] in LETTERS:
                found.add(matches[0])
                break
        else:
            message = f"{element!r} is neither a letter A-D nor the text of exactly one option"
            raise RecordError(index, "answer", message)
    return frozenset(found)


def _prompt_number(record: dict[str, Any], index: int | str) -> int:
    value = require_field(record, "prompt", index, (int, str))
    text = str(value).strip().lower().removeprefix("p")
    if text not in ("1", "2", "3"):
        raise RecordError(index, "prompt", f"expected 1, 2 or 3, got {value!r}")
    return int(text)


def multi_variant(record: dict[str, Any]) -> str:
    """The multi-correct variant of a record: standard, binary, plus_all, plus_none or plus_all_none."""
    if record.get("format") == "binary":
        return "binary"
    extra = record.get("extra_options")
    return f"plus_{extra}" if extra else "standard"


def _f1(predicted: frozenset[str], gold: frozenset[str]) -> float:
    """Option-level F1 of one question; both empty = 1 (a correct NONE), one empty = 0."""
    if not predicted and not gold:
        return 1.0
    overlap = len(predicted & gold)
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted)
    recall = overlap / len(gold)
    return 2 * precision * recall / (precision + recall)


def _resolve_extra_options(parsed: Parsed, extra: str | None) -> tuple[frozenset[str], bool]:
    """Map "All/None of the above" letters to their meaning; returns (letters A-D, contradictory)."""
    if not extra or parsed.status != "ok":
        return parsed.letters, False
    meanings = EXTRA_OPTIONS[extra]
    core = frozenset(letter for letter in parsed.letters if letter in LETTERS)
    chosen = {meanings[letter] for letter in parsed.letters if letter in meanings}
    if "none" in chosen and (core or "all" in chosen):
        return frozenset(), True
    if "all" in chosen:
        # "All of the above" subsumes any option letters listed with it.
        return frozenset(LETTERS), False
    return core, False


def _letters_for(record: dict[str, Any], index: int | str) -> str:
    extra = record.get("extra_options")
    if extra in (None, ""):
        return LETTERS
    if extra not in EXTRA_OPTIONS:
        raise RecordError(
            index, "extra_options", f"expected one of {sorted(EXTRA_OPTIONS)} or null, got {extra!r}"
        )
    return LETTERS + "".join(EXTRA_OPTIONS[extra])


@dataclass
class Verdict:
    """One scored record (a binary record is one option's yes/no decision)."""

    index: int | str
    setup: str
    answer_format: str
    prompt: int
    variant: str
    category: str
    instance_id: str
    question_id: str
    gold: frozenset[str]
    parsed: Parsed
    predicted: frozenset[str]
    correct: bool
    option: str | None = None
    decision: bool | None = None
    contradictory: bool = False


def _binary_option(record: dict[str, Any], index: int | str) -> str:
    option = require_field(record, "option", index, str).strip().upper()
    if option not in LETTERS:
        raise RecordError(index, "option", f"expected one of A-D, got {option!r}")
    return option


def parse_record(record: dict[str, Any], index: int | str = 0) -> Parsed:
    """Parse one record's ``prediction`` as its ``format`` asks: the one parse path of the hooks, the test
    export and ``score``; a binary record's yes/no becomes its ``option`` letter, NONE or unparsed."""
    answer_format = require_field(record, "format", index, str)
    if answer_format not in FORMATS:
        raise RecordError(index, "format", f"expected one of {FORMATS}, got {answer_format!r}")
    prediction = require_field(record, "prediction", index, (str, type(None)))
    for letter in LETTERS:
        require_field(record, letter, index, (str, type(None)))
    letters = _letters_for(record, index)
    if answer_format == "binary":
        option = _binary_option(record, index)
        decision = parse_yes_no(prediction)
        if decision is None:
            return _unparsed("no yes/no")
        return _ok([option], "yes") if decision else _none("no")
    options = {letter: record[letter] for letter in LETTERS if isinstance(record.get(letter), str)}
    return parse_prediction(answer_format, prediction, letters=letters, options=options)


def score_record(record: dict[str, Any], index: int | str = 0) -> Verdict:
    """Parse one record's prediction and judge it against its gold answer (RecordError on bad fields)."""
    setup = require_field(record, "setup", index, str)
    if setup not in SETUPS:
        raise RecordError(index, "setup", f"expected one of {SETUPS}, got {setup!r}")
    answer_format = require_field(record, "format", index, str)
    if answer_format not in FORMATS:
        raise RecordError(index, "format", f"expected one of {FORMATS}, got {answer_format!r}")
    if answer_format == "binary" and setup != "multi":
        raise RecordError(index, "format", "the binary format exists only for the multi setup")
    if answer_format in ("inv", "csv", "word") and setup == "multi":
        raise RecordError(index, "format", f"{answer_format!r} exists only for single-correct setups")
    category_value = require_field(record, "category", index, str)
    category = canonical_category(category_value)
    if category is None:
        raise RecordError(
            index, "category", f"unknown category {category_value!r}; known: {sorted(CATEGORY_SUBJECTS)}"
        )
    question_id = str(require_field(record, "id", index, (str, int)))
    instance_id = record.get("instance_id")
    if setup == "single_var":
        instance_id = require_field(record, "instance_id", index, (str, int))
    prompt = _prompt_number(record, index)
    parsed = parse_record(record, index)  # checks the prediction and the option texts
    gold = gold_letters(record, index)
    if setup != "multi" and len(gold) != 1:
        raise RecordError(
            index, "answer", f"the {setup} setup needs exactly one correct option, got {sorted(gold)}"
        )
    option, decision = None, None
    predicted, contradictory = _resolve_extra_options(parsed, record.get("extra_options"))
    if answer_format == "binary":
        option = _binary_option(record, index)
        decision = None if parsed.status == "unparsed" else parsed.status == "ok"
        correct = decision == (option in gold)
    elif answer_format == "inv":  # Out-Inv names the three incorrect options; the answer is the remaining one
        named_three = parsed.status == "ok" and len(parsed.letters) == 3
        predicted = frozenset(LETTERS) - parsed.letters if named_three else frozenset()
        correct = named_three and predicted == gold
    elif setup == "multi":
        correct = parsed.status != "unparsed" and not contradictory and predicted == gold
    else:
        correct = parsed.status == "ok" and predicted == gold
    return Verdict(
        index=index,
        setup=setup,
        answer_format=answer_format,
        prompt=prompt,
        variant=multi_variant(record) if setup == "multi" else "standard",
        category=category,
        instance_id=str(instance_id if instance_id is not None else question_id),
        question_id=question_id,
        gold=gold,
        parsed=parsed,
        predicted=predicted,
        correct=correct,
        option=option,
        decision=decision,
        contradictory=contradictory,
    )


def canonical_category(value: Any) -> str | None:
    """Map a dataset category string to its canonical short name, or None if unknown."""
    if not isinstance(value, str):
        return None
    return _CATEGORY_ALIASES.get(" ".join(value.lower().replace("-", " ").replace("_", " ").split()))


@dataclass(frozen=True)
class Parsed:
    """The letters chosen, ``status`` ("ok", "none": an explicit NONE, "unparsed") and the rule that fired."""

    letters: frozenset[str]
    status: str
    rule: str

    @property
    def text(self) -> str:
        """The letters as "A, C", "NONE" for an empty answer, "" when unparsed."""
        if self.status == "unparsed":
            return ""
        return ", ".join(sorted(self.letters)) if self.letters else "NONE"


def _ok(letters: Iterable[str], rule: str) -> Parsed:
    return Parsed(frozenset(letters), "ok", rule)


def _none(rule: str) -> Parsed:
    return Parsed(frozenset(), "none", rule)


def _unparsed(rule: str = "no answer found") -> Parsed:
    return Parsed(frozenset(), "unparsed", rule)


_TOKEN = re.compile(r"[A-Za-z]+|\S")
_TOKEN_AND_NEXT = re.compile(r"([A-Za-z]+|\S)(?=(.?))", re.DOTALL)
_MARKDOWN = re.compile(r"\*\*|__|`+|^#+ ", re.MULTILINE)
_FENCE = re.compile(r"```[A-Za-z]*")
# Punctuation allowed around a bare letter answer like "**(B).**".
_WRAPPING = set("*\"'`()[]{}<>.:,;!_-#")
# Words and marks skipped between an answer marker and its letter.
_FILLERS = set(": - = is are would be should will correct the option options choice choices".split())
_FILLERS |= set("letter letters final my here ( [ \" ' * # of".split())
_RUN_SEPARATORS = {",", ";", "&", "/", "+", "and"}
# Words that cannot follow the article "A", so "A is correct" names option A.
_VERBS_AFTER_LETTER = {"is", "was", "seems", "appears", "would", "should"}
_NONE_PHRASE = re.compile(
    r"\bnone of the (?:options|answers|above|choices|answer options)\b"
    r"|\bno (?:correct |right )?(?:answer|option|choice)s? (?:is |are )?(?:correct|right)\b"
    r"|\bthere (?:is|are) no correct\b",
    re.IGNORECASE,
)
_NONE_WORD = re.compile(r"(?<![A-Za-z])NONE(?![A-Za-z])")


# A token is (text, the character right after it in the source or ""): words (letters only) and single
# non-space characters; ``_tokens(text)`` builds the pairs in one C pass.
_Token = tuple[str, str]
_tokens = _TOKEN_AND_NEXT.findall


def _clean(text: Any) -> str:
    """The output's parse window (``_window``) without markdown emphasis, code fences and outer whitespace."""
    if not isinstance(text, str):
        return ""
    return _MARKDOWN.sub(" ", _FENCE.sub(" ", _window(text))).strip()


def _window(text: str) -> str:
    """``text``, or for a text longer than MAX_PARSE_CHARS its head and tail (cut at whitespace, so no
    word is split into a stray letter) joined by a line break."""
    if len(text) <= MAX_PARSE_CHARS:
        return text
    half = MAX_PARSE_CHARS // 2
    head, tail = text[:half], text[-half:]
    head_cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    head = head[:head_cut] if head_cut > 0 else head
    tail_cut = _WHITESPACE.search(tail)
    tail = tail[tail_cut.start() :] if tail_cut is not None else tail
    return f"{head}\n{tail}"


@lru_cache(maxsize=16)
def _paper_patterns(letters: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The paper's two regexes for ``letters``: a list of letters, a single letter."""
    klass = f"[{letters}]"
    # Paper: (^|\s)[ABCD](, [ABCD])+($|\n|,|\.|\s)
    list_pattern = re.compile(rf"(?:^|\s)({klass}(?:, {klass})+)(?:$|\n|,|\.|\s)")
    # Paper: X(: )|X(\.)|X(\n)|X($), plus a left word boundary so "DVD." does not answer D.
    single_pattern = re.compile(rf"(?<![A-Za-z])({klass})(?=: |\.|\n|$)")
    return list_pattern, single_pattern


def _letter_of(token: str, letters: str) -> str | None:
    if len(token) == 1 and token.upper() in letters:
        return token.upper()
    return None


# Characters right after an uppercase letter that make it an option letter ("A," "A." "A)" ...); the
# empty string (end of text) is included, as ``"" in str`` is true and a last token is accepted anyway.
_CLOSING_AFTER_UPPER = ".):,;]*\"'\n!?/&+"


def _letter_accepted(text: str, tokens: list[_Token], index: int, letters: str, *, lenient: bool) -> bool:
    """Is tokens[index] an option letter rather than a word (the article "A", "a")? Rules in docs/dare.md;
    ``lenient`` (after an explicit "Answer:") accepts an uppercase letter before any word."""
    token = tokens[index]
    if _letter_of(token[0], letters) is None:
        return False
    previous = tokens[index - 1][0] if index > 0 else ""
    following = tokens[index + 1] if index + 1 < len(tokens) else None
    after = token[1]
    if previous in ("(", "[") and following is not None and following[0] in (")", "]"):
        return True
    if token[0].isupper():
        if following is None or after in _CLOSING_AFTER_UPPER or lenient:
            return True
        # "A dog": before a lowercase word, "A" is the article, unless a verb ("A is correct") or a
        # list ("A and C") follows.
        if token[0] != "A" or not following[0][:1].islower() or following[0] in _VERBS_AFTER_LETTER:
            return True
        after_next = tokens[index + 2] if index + 2 < len(tokens) else None
        return (
            following[0].lower() in _RUN_SEPARATORS
            and after_next is not None
            and _letter_of(after_next[0], letters) is not None
            and after_next[0].isupper()
        )
    return following is None or after in ".):\n" or (after == "," and following[0] == ",")


def _upper_letter_accepted(text: str, tokens: list[_Token], index: int, letters: str) -> bool:
    """``_letter_accepted`` (not lenient) for an uppercase option letter, with its cheap cases inlined:
    any letter but "A" is accepted, and so is "A" before punctuation; only "A " needs the full rule."""
    word, after = tokens[index]
    if word != "A" or after in _CLOSING_AFTER_UPPER:
        return True
    return _letter_accepted(text, tokens, index, letters, lenient=False)


def _read_run(text: str, tokens: list[_Token], index: int, letters: str) -> tuple[list[str], int]:
    """Read a list of letters starting at tokens[index] ("A, C and D", "(A) (C)"); returns letters, end."""
    found: list[str] = []
    position = index
    count = len(tokens)
    first_case_upper = tokens[index][0].isupper()
    while position < count:
        word = tokens[position][0]
        if word == "(" or word == "[":
            position += 1
            continue
        upper = word.upper()
        if len(word) != 1 or upper not in letters:
            break
        is_upper = word.isupper()
        if found:
            if is_upper != first_case_upper:
                break
            if not is_upper and tokens[position - 1][0] != ",":
                break
            # An uppercase letter is accepted when it is not "A" or when punctuation follows it
            # (the first checks of _letter_accepted, inlined: runs can be thousands of letters long).
            if not (
                _upper_letter_accepted(text, tokens, position, letters)
                if is_upper
                else _letter_accepted(text, tokens, position, letters, lenient=False)
            ):
                break
        found.append(upper)
        position += 1
        # Skip closing brackets, then at most one separator (or none: "A C D").
        while position < count and tokens[position][0] in (")", "]"):
            position += 1
        if position >= count:
            break
        following = tokens[position][0]
        if following.lower() in _RUN_SEPARATORS:
            position += 1
            # Oxford comma: "A, B, and D".
            if following == "," and position < count and tokens[position][0] in ("and", "&"):
                position += 1
        elif following not in ("(", "[") and (len(following) != 1 or following.upper() not in letters):
            break
    return found, position


def _whole_answer(tokens: list[_Token], letters: str) -> Parsed | None:
    """The whole output is one letter or NONE, possibly wrapped in punctuation ("**(b).**")."""
    words = [token for token in tokens if token[0][:1].isalpha()]
    if len(words) != 1 or any(token[0] not in _WRAPPING for token in tokens if not token[0][:1].isalpha()):
        return None
    word = words[0][0]
    letter = _letter_of(word, letters)
    if letter is not None:
        return _ok([letter], "whole output is a letter")
    if word.lower() == "none":
        return _none("whole output is NONE")
    return None


def _leading_answer(text: str, tokens: list[_Token], letters: str) -> Parsed | None:
    """The output starts with a letter or a list of letters ("B. red", "A, C", "(b) ...", "NONE of")."""
    index = 0
    while index < len(tokens) and tokens[index][0] in _WRAPPING and tokens[index][0] not in (")", "]"):
        index += 1
    if index >= len(tokens):
        return None
    if tokens[index][0] in ("NONE", "None", "none") and (
        index + 1 >= len(tokens)
        or not tokens[index + 1][0][:1].isalpha()
        or tokens[index + 1][0].lower() in ("of", "is", "are")
    ):
        return _none("output starts with NONE")
    if not _letter_accepted(text, tokens, index, letters, lenient=False):
        return None
    found, _ = _read_run(text, tokens, index, letters)
    return _ok(found, "output starts with a letter") if found else None


def _marked_answer(text: str, tokens: list[_Token], letters: str) -> Parsed | None:
    """A letter after an explicit marker: "Answer: (b)", "the answer is C", "correct options are A and D"."""
    for index, token in enumerate(tokens):
        word = token[0].lower()
        is_marker = word in ("answer", "answers") or (
            word in ("option", "options", "choice", "choices")
            and index > 0
            and tokens[index - 1][0].lower() == "correct"
        )
        if not is_marker:
            continue
        position = index + 1
        skipped = 0
        while position < len(tokens) and tokens[position][0].lower() in _FILLERS and skipped < 8:
            # "the answer is A" vs "the answer is a dog": a lowercase "a" here is an article, not a filler.
            position += 1
            skipped += 1
        if position >= len(tokens):
            continue
        if tokens[position][0].lower() == "none":
            return _none("NONE after an answer marker")
        # Directly after "Answer:", an uppercase "A" is the letter even before a word ("Answer: A because").
        after_colon = index + 1 < len(tokens) and tokens[index + 1][0] == ":" and position == index + 2
        if _letter_accepted(text, tokens, position, letters, lenient=after_colon):
            found, _ = _read_run(text, tokens, position, letters)
            if found:
                return _ok(found, "letter after an answer marker")
    return None


def _letter_runs(text: str, tokens: list[_Token], letters: str) -> list[tuple[int, int, list[str]]]:
    """Lists of two or more distinct uppercase letters: (start offset, end offset, distinct letters)."""
    spans: list[tuple[int, int, list[str]]] = []
    offsets = _TOKEN.finditer(text)  # advanced lazily, in increasing token order: one pass in all
    consumed = 0
    offset_at = 0

    def offset(index: int) -> int:
        nonlocal consumed, offset_at
        if index >= len(tokens):
            return len(text)
        if index >= consumed:
            offset_at = next(itertools.islice(offsets, index - consumed, None)).start()
            consumed = index + 1
        return offset_at

    index = 0
    count = len(tokens)
    while index < count:
        word = tokens[index][0]
        # An uppercase option letter (letters are uppercase) that is not the article "A".
        if len(word) == 1 and word in letters and _upper_letter_accepted(text, tokens, index, letters):
            found, end = _read_run(text, tokens, index, letters)
            if len(set(found)) >= 2:
                # Distinct letters only: a 4000-letter run must not be re-read for each of its letters.
                spans.append((offset(index), offset(end), list(dict.fromkeys(found))))
            index = max(end, index + 1)
        else:
            index += 1
    return spans


def _standalone_letters(text: str, tokens: list[_Token], letters: str) -> list[str]:
    """Uppercase option letters standing alone as words (not the article "A" before a lowercase word)."""
    found: list[str] = []
    for index, token in enumerate(tokens):
        word = token[0]
        if len(word) == 1 and word in letters and word not in found:
            if _upper_letter_accepted(text, tokens, index, letters):
                found.append(word)
                if len(found) == len(letters):
                    break
    return found


def _normalise_text(value: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", value.lower()).split())


def _explicit_answer(cleaned: str, tokens: list[_Token], letters: str) -> Parsed | None:
    """The first rule that matches: whole output, leading answer, an answer marker, the paper's list regex."""
    for rule in (_whole_answer, _leading_answer, _marked_answer):
        parsed = rule(tokens, letters) if rule is _whole_answer else rule(cleaned, tokens, letters)
        if parsed is not None:
            return parsed
    match = _paper_patterns(letters)[0].search(cleaned)
    if match is not None:
        return _ok([part.strip() for part in match.group(1).split(",")], "paper list regex")
    return None


def parse_generated(text: Any, *, letters: str = LETTERS, options: dict[str, str] | None = None) -> Parsed:
    """The chosen letters of free generation (Out-Gen), most explicit evidence first (docs/dare.md)."""
    cleaned = _clean(text)
    if not cleaned:
        return _unparsed("empty output")
    tokens = _tokens(cleaned)
    explicit = _explicit_answer(cleaned, tokens, letters)
    if explicit is not None:
        return explicit
    single_pattern = _paper_patterns(letters)[1]
    if _NONE_WORD.search(cleaned) or _NONE_PHRASE.search(cleaned):
        return _none("NONE phrase")
    singles = set(single_pattern.findall(cleaned))
    if singles:
        # A matched letter inside a list ("both A and C") stands for the whole list. The search stops two
        # characters past the list (the regex looks two ahead), so each list costs its own length.
        for start, end, run in _letter_runs(cleaned, tokens, letters):
            inside = single_pattern.search(cleaned, start, min(len(cleaned), end + 2))
            if inside is not None and inside.start(1) < end:
                singles.update(run)
    if singles:
        return _ok(singles, "paper single-letter regex")
    standalone = _standalone_letters(cleaned, tokens, letters)
    if standalone:
        return _ok(standalone, "standalone letter")
    if options:
        normalised = _normalise_text(cleaned)
        normalised = normalised[len("answer ") :] if normalised.startswith("answer ") else normalised
        matches = [
            letter for letter, option in options.items() if option and _normalise_text(option) == normalised
        ]
        if len(matches) == 1:
            return _ok(matches, "output equals an option text")
    return _unparsed()


def parse_letter_list(text: Any, *, letters: str = LETTERS) -> Parsed:
    """Parse a plain list of letters such as Out-Log choices ("B", "A, C", "NONE", "" = NONE)."""
    if text is None:
        return _unparsed("missing prediction")
    cleaned = _clean(text)
    if not cleaned or cleaned.upper() == "NONE":
        return _none("empty or NONE")
    tokens = _tokens(cleaned)
    whole = _whole_answer(tokens, letters)
    if whole is not None:
        return whole
    found, end = _read_run(cleaned, tokens, 0, letters) if tokens else ([], 0)
    if found and all(token[0] in _WRAPPING for token in tokens[end:]):
        return _ok(found, "letter list")
    return _unparsed("not a list of letters")


_JSON_START = re.compile(r"\{\s*[\"']answers?[\"']\s*:", re.IGNORECASE)
_JSON_MAX_ATTEMPTS = 8


def _json_value_letters(value: Any, letters: str) -> Parsed | None:
    """Letters from a JSON answer value: "B", "b", "B. four", "A, C", ["A", "C"], [], "NONE", null."""
    if isinstance(value, str):
        stripped = _window(value).strip()
        if not stripped or stripped.upper() == "NONE":
            return _none("JSON answer is empty or NONE")
        tokens = _tokens(stripped)
        found = _whole_answer(tokens, letters) or _leading_answer(stripped, tokens, letters)
        return None if found is None else Parsed(found.letters, found.status, "JSON answer string")
    if isinstance(value, list):
        if not value:
            return _none("JSON answer list is empty")
        found: list[str] = []
        seen: set[str] = set()  # a list of 20,000 "A"s parses one "A"
        for element in value:
            if not isinstance(element, str):
                return None
            if element in seen:
                continue
            seen.add(element)
            parsed = _json_value_letters(element, letters)
            if parsed is None or parsed.status != "ok":
                return None
            found.extend(letter for letter in sorted(parsed.letters) if letter not in found)
        return _ok(found, "JSON answer list")
    if value is None:
        return _none("JSON answer is null")
    return None


def parse_json_answer(text: Any, *, letters: str = LETTERS) -> Parsed:
    """Parse Out-JSON (``{"answer": "B"}``, ``{"answers": ["A", "C"]}``), in prose or a fence; strict JSON."""
    if not isinstance(text, str) or not text.strip():
        return _unparsed("empty output")
    cleaned = _FENCE.sub(" ", text).strip()
    decoder = json.JSONDecoder()
    candidates: list[int] = [0] if cleaned.startswith("{") else []
    for match in itertools.islice(_JSON_START.finditer(cleaned), _JSON_MAX_ATTEMPTS):
        if match.start() not in candidates:
            candidates.append(match.start())
    saw_answer_key = False
    for start in candidates:
        try:
            value, _ = decoder.raw_decode(cleaned, start)
        except (ValueError, RecursionError):
            continue
        if not isinstance(value, dict):
            continue
        for key, answer in value.items():
            if isinstance(key, str) and key.strip().lower() in ("answer", "answers"):
                saw_answer_key = True
                parsed = _json_value_letters(answer, letters)
                if parsed is not None:
                    return parsed
    return _unparsed(
        "JSON answer value is not option letters" if saw_answer_key else "no valid JSON answer object"
    )


_CSV_INLINE = re.compile(
    r"(?<![A-Za-z])answers?[\"']?[ \t]*[,;][ \t]*[\"']?([A-Za-z])[\"']?(?![A-Za-z])", re.IGNORECASE
)


@lru_cache(maxsize=16)
def _csv_more_values(letters: str) -> re.Pattern[str]:
    """Further option-letter values on the row (",B, 'C'"), matched as one span: a 50,000-value row
    costs one regex pass, not a Python step per value."""
    klass = re.escape(letters + letters.lower())
    return re.compile(rf"(?:[ \t]*+,[ \t]*+[\"']?[{klass}][\"']?(?![A-Za-z]))*")


def parse_csv_answer(text: Any, *, letters: str = LETTERS) -> Parsed:
    """Parse Out-CSV: ``answer,A`` on one line, or a header line ``answer`` followed by a value line."""
    if not isinstance(text, str) or not text.strip():
        return _unparsed("empty output")
    cleaned = _FENCE.sub(" ", text)
    match = _CSV_INLINE.search(cleaned)
    if match is not None:
        letter = _letter_of(match.group(1), letters)
        if letter is None:
            return _unparsed("csv value is not an option letter")
        # Further values on the same row ("answer,A,B") are further letters, not ignored; the row's
        # values stop at the first value that is not an option letter.
        more = _csv_more_values(letters).match(cleaned, match.end())
        found = {letter} | {char for char in set(more.group().upper()) if char in letters}
        return _ok(found, "answer,<letter>")
    lines = [line.strip().strip("\"'") for line in cleaned.splitlines() if line.strip()]
    for index, line in enumerate(lines[:-1]):
        if line.lower() in ("answer", "answers"):
            letter = _letter_of(lines[index + 1].strip("\"' ,"), letters)
            if letter is not None:
                return _ok([letter], "csv header and value")
    return _unparsed("no answer,<letter> field")


def parse_inverse_answer(text: Any, *, letters: str = LETTERS) -> Parsed:
    """Parse Out-Inv: the letters the model calls incorrect (expected three, e.g. "A, C, D")."""
    cleaned = _clean(text)
    if not cleaned:
        return _unparsed("empty output")
    tokens = _tokens(cleaned)
    explicit = _explicit_answer(cleaned, tokens, letters)
    if explicit is not None:
        return explicit if explicit.status == "ok" else _unparsed("NONE is not a list of incorrect options")
    standalone = _standalone_letters(cleaned, tokens, letters)
    return _ok(standalone, "standalone letters") if standalone else _unparsed()


_FIRST_WORD = re.compile(r"[A-Za-z]+")


def parse_word_answer(text: Any, *, letters: str = LETTERS) -> Parsed:
    """Out-Word: the first word's initial is the answer ("Banana" -> B); a leading "Answer:" is skipped."""
    cleaned = _clean(text)
    first = _FIRST_WORD.search(cleaned)
    if first is None:
        return _unparsed("no word")
    if first.group().lower() in ("answer", "answers") and cleaned[first.end() : first.end() + 1] == ":":
        following = _FIRST_WORD.search(cleaned, first.end())
        if following is None:
            return _unparsed("no word after Answer:")
        first = following
    letter = first.group()[0].upper()
    if letter in letters:
        return _ok([letter], "initial of the first word")
    return _unparsed(f"first word starts with {letter}, not an option letter")


_YES_NO = re.compile(r"(?<![A-Za-z])(yes|no|true|false|correct|incorrect)(?![A-Za-z])", re.IGNORECASE)


def parse_yes_no(text: Any) -> bool | None:
    """Parse a binary decision: the first yes/no (or true/false, correct/incorrect) word; None if absent."""
    if not isinstance(text, str):
        return None
    match = _YES_NO.search(text)
    if match is None:
        return None
    return match.group(1).lower() in ("yes", "true", "correct")


_PARSERS = {
    "log": parse_letter_list,
    "json": parse_json_answer,
    "csv": parse_csv_answer,
    "inv": parse_inverse_answer,
    "word": parse_word_answer,
}


def parse_prediction(
    answer_format: str, text: Any, *, letters: str = LETTERS, options: dict[str, str] | None = None
) -> Parsed:
    """Dispatch to the parser of ``answer_format`` (one of FORMATS except "binary")."""
    if answer_format == "gen":
        return parse_generated(text, letters=letters, options=options)
    if answer_format not in _PARSERS:
        raise ValueError(f"unknown DARE output format {answer_format!r}; expected one of {FORMATS}")
    return _PARSERS[answer_format](text, letters=letters)
