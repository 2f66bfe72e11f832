"""HallusionBench's report section: paper layout (aAcc/fAcc/qAcc, easy/hard, yes/no bias, LH/VI/Mixed)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from lmms_eval_tasks.reporting.sections import (
    Block,
    SectionContext,
    Table,
    Text,
    fmt,
    grouped_bars,
    interval_errors,
    metrics_table,
)
from lmms_eval_tasks.tasks.hallusionbench.published import PUBLISHED


def _paper_layout_rows() -> tuple:
    """The published rows, the paper's GPT-4V diagnosis (Pct Diff, FP Ratio, LH/VI/Mixed) on the GPT-4V row
    as in the paper's layout."""
    diagnosis = next(row for row in PUBLISHED if row.label == "GPT-4V (diagnosis)")
    return tuple(
        replace(row, values={**row.values, **diagnosis.values}) if row.label == "GPT-4V" else row
        for row in PUBLISHED
        if row is not diagnosis
    )


MAIN_COLUMNS = (
    ("qAcc", "qAcc"),
    ("fAcc", "fAcc"),
    ("easy_aAcc", "easy aAcc"),
    ("hard_aAcc", "hard aAcc"),
    ("aAcc", "aAcc"),
    ("pct_diff", "Pct Diff"),
    ("fp_ratio", "FP Ratio"),
    ("LH", "LH"),
    ("VI", "VI"),
    ("Mixed", "Mixed"),
)
CATEGORY_COLUMNS = ("aAcc", "fAcc", "qAcc", "easy_aAcc", "hard_aAcc", "pct_diff", "fp_ratio")
DIAGNOSIS = ("LH", "VI", "Mixed")


def categories(metrics: dict[str, Any]) -> list[str]:
    """Category and subcategory prefixes with an aAcc (``VD``, ``VD_illusion``, ``VS_chart``...), VD first."""
    prefixes = [key[: -len("_aAcc")] for key in metrics if key.endswith("_aAcc") and key[:2] in ("VD", "VS")]
    prefixes = [prefix for prefix in prefixes if not prefix.endswith(("_easy", "_hard"))]
    return sorted(dict.fromkeys(prefixes), key=lambda name: (name[:2], "_" in name, name))


def render(context: SectionContext) -> list[Block]:
    """The across-runs table with the paper's rows, per-category tables, the diagnosis chart, yes/no bias."""
    entries = context.entries
    blocks: list[Block] = [
        Text(
            "Percent, except Pct Diff and FP Ratio (fractions). qAcc: question pairs answered fully right; "
            "fAcc: figures with all questions right; aAcc: all questions. LH/VI/Mixed: share of wrong "
            "answers diagnosed as Language Hallucination, Visual Illusion or both."
        ),
        metrics_table(
            "Main results (paper layout), a row per run", entries, MAIN_COLUMNS, _paper_layout_rows()
        ),
    ]
    for entry in entries:
        rows = [
            [
                prefix.replace("_", " / ", 1),
                *(entry.metrics.get(f"{prefix}_{key}") for key in CATEGORY_COLUMNS),
            ]
            for prefix in categories(entry.metrics)
        ]
        if rows:
            blocks.append(
                Table(f"Per category and subcategory: {entry.label}", ["category", *CATEGORY_COLUMNS], rows)
            )
    diagnosed = [entry for entry in entries if any(entry.metrics.get(key) is not None for key in DIAGNOSIS)]
    if diagnosed:
        blocks.append(
            grouped_bars(
                "Failure diagnosis: Language Hallucination / Visual Illusion / Mixed",
                context.plot_name("diagnosis"),
                list(DIAGNOSIS),
                {entry.label: [entry.metrics.get(key) for key in DIAGNOSIS] for entry in diagnosed},
                "% of wrong answers",
                errors=interval_errors(diagnosed, list(DIAGNOSIS)),
            )
        )
    bias_columns = (
        ("pct_diff", "Pct Diff (yes-bias)"),
        ("fp_ratio", "FP Ratio"),
        ("consistency_correct", "consistent, correct"),
        ("consistency_wrong", "consistent, wrong"),
        ("consistency_inconsistent", "inconsistent"),
    )
    blocks.append(
        metrics_table(
            "Yes/no bias and figure consistency",
            entries,
            bias_columns,
            note="Pct Diff: share of 'yes' answers minus share of 'yes' ground truths (about 0 is unbiased); "
            "FP Ratio: among wrong answers, the share that said yes to a 'no' question (about 0.5 is "
            "robust). Consistency: share of figures with all / none / some of their questions correct.",
        )
    )
    for entry in entries:
        counts = entry.details.get("counts") or {}
        if counts:
            blocks.append(
                Text(f"{entry.label}: " + ", ".join(f"{key} {fmt(value)}" for key, value in counts.items()))
            )
    return blocks
