"""DARE's report section: per category x prompt x format, the robustness table, multi-correct by k."""

from __future__ import annotations

import re
from typing import Any

from lmms_eval_tasks.reporting.sections import (
    Block,
    SectionContext,
    Table,
    Text,
    grouped_bars,
    interval_errors,
    metrics_table,
)
from lmms_eval_tasks.tasks.dare.published import CATEGORIES, PUBLISHED_CATEGORY, PUBLISHED_MAIN
from lmms_eval_tasks.tasks.dare.scoring import TABLE_COLUMNS

MAIN_COLUMNS = (
    ("single_accuracy", "single acc"),
    ("single_accuracy_std_over_prompts", "std over prompts"),
    ("single_format_range", "format range"),
    ("single_var_accuracy", "option-variation worst case"),
    ("single_var_drop", "drop"),
    ("multi_f1", "multi F1"),
    *((f"multi_exact_k{k}", f"exact k={k}") for k in range(5)),
    ("unparsed", "unparsed"),
)
SUMMARY_COLUMNS = tuple(TABLE_COLUMNS.values())
_SETUP = re.compile(r"^unparsed_(?P<setup>[a-z_]+_p\d+)$")


def member_setup(metrics: dict[str, Any]) -> str | None:
    """A member task's setup (``single_gen_p1``...) from its ``unparsed_<setup>`` counter."""
    for key in metrics:
        match = _SETUP.match(key)
        if match:
            return match.group("setup")
    return None


def _member_row(setup: str, metrics: dict[str, Any], categories: list[str]) -> list[Any]:
    """A member task's row: its setup, main metric (accuracy, else F1), the metric per category, overall."""
    main = ("single_var_accuracy", "single_accuracy", "multi_f1")
    key = next((key for key in main if key in metrics), None)
    key = key or next((key for key in metrics if re.fullmatch(r"multi_[a-z_]+_f1", key)), None)
    overall = metrics.get(key) if key else None
    return [setup, key, *(metrics.get(f"{key}__{name}") for name in categories), overall]


def _categories(entry: Any) -> list[str]:
    """The categories of an entry: its summary table's rows, else the ``<metric>__<category>`` suffixes of its
    own and its members' metrics, in the paper's order."""
    table = entry.details.get("summary_table") or {}
    names = [name for name in table if name != "all"]
    if names:
        return names
    found: set[str] = set()
    for metrics in (entry.metrics, *(report.get("metrics", {}) for report in entry.members.values())):
        found.update(key.rsplit("__", 1)[1] for key in metrics if "__" in key)
    return [name for name in CATEGORIES if name in found] + sorted(found - set(CATEGORIES))


def render(context: SectionContext) -> list[Block]:
    """Tables in the paper's layout for every DARE run, and the multi-correct chart."""
    entries = context.entries
    blocks: list[Block] = [
        Text(
            "Accuracy and F1 in percent. Format range: best minus worst single-correct format; "
            "option-variation "
            "worst case: a question counts only when every option variant is answered right."
        ),
        metrics_table("Main results, a row per run", entries, MAIN_COLUMNS, PUBLISHED_MAIN),
    ]
    categories = list(dict.fromkeys(name for entry in entries for name in _categories(entry)))
    if categories:
        blocks.append(
            metrics_table(
                "Single-correct accuracy per category",
                entries,
                [*((f"single_accuracy__{name}", name) for name in categories), ("single_accuracy", "all")],
                PUBLISHED_CATEGORY,
            )
        )
    for entry in entries:
        summary = entry.details.get("summary_table") or {}
        if summary:
            rows = [
                [name, *(values.get(column) for column in SUMMARY_COLUMNS)]
                for name, values in summary.items()
            ]
            blocks.append(
                Table(f"Robustness table (per category): {entry.label}", ["category", *SUMMARY_COLUMNS], rows)
            )
        members = sorted(
            (member_setup(report["metrics"]) or task, report["metrics"])
            for task, report in entry.members.items()
        )
        if members:
            names = _categories(entry)
            blocks.append(
                Table(
                    f"Per category x prompt x format: {entry.label}",
                    ["setup", "metric", *names, "all"],
                    [_member_row(setup, metrics, names) for setup, metrics in members],
                    "setup = <kind>_<format>_<prompt>; single/var: accuracy, multi: F1.",
                )
            )
    with_multi = [
        entry
        for entry in entries
        if any(entry.metrics.get(f"multi_exact_k{k}") is not None for k in range(5))
    ]
    if with_multi:
        blocks.append(
            grouped_bars(
                "Multi-correct exact match by number of correct options k",
                context.plot_name("multi_by_k"),
                [f"k={k}" for k in range(5)],
                {
                    entry.label: [entry.metrics.get(f"multi_exact_k{k}") for k in range(5)]
                    for entry in with_multi
                },
                "exact match %",
                caption="Random guessing: 6.25% for every k (one of 16 answer sets). Error bars: 95% "
                "intervals (bootstrap by question), where the run has them.",
                errors=interval_errors(with_multi, [f"multi_exact_k{k}" for k in range(5)]),
            )
        )
        variants = (
            ("multi_f1", "standard"),
            ("multi_binary_f1", "binary"),
            ("multi_plus_all_f1", "+all"),
            ("multi_plus_none_f1", "+none"),
            ("multi_plus_all_none_f1", "+all+none"),
        )
        blocks.append(metrics_table("Multi-correct F1 by option set", with_multi, variants))
    return blocks
