"""TDIUC's report section: accuracy per question type, the four mean-per-type summaries, the paper's row."""

from __future__ import annotations

from lmms_eval_tasks.reporting.sections import Block, SectionContext, Table, Text, metrics_table
from lmms_eval_tasks.tasks.tdiuc.published import PUBLISHED

MAIN_COLUMNS = (
    ("micro_accuracy", "micro"),
    ("macro_accuracy", "macro (arithmetic MPT)"),
    ("harmonic_mpt", "harmonic MPT"),
    ("normalized_arithmetic_mpt", "normalized arithmetic MPT"),
    ("normalized_harmonic_mpt", "normalized harmonic MPT"),
    ("accuracy_absurd", "absurd"),
    ("accuracy_counting", "counting"),
    ("accuracy_color", "color"),
    ("questions", "questions"),
)


def question_types(metrics: dict) -> list[str]:
    """Question types present in a report (``accuracy_<type>`` keys; not their ``_stderr`` and interval
    companions, which the per-type table listed as types)."""
    companions = ("_stderr", "_ci_low", "_ci_high", "_lower", "_upper")
    return sorted(
        key[len("accuracy_") :]
        for key in metrics
        if key.startswith("accuracy_") and not key.endswith(companions)
    )


def render(context: SectionContext) -> list[Block]:
    """Main table with the paper's row, then a per-type table for each run."""
    blocks: list[Block] = [
        Text(
            "Accuracy in percent. Macro = arithmetic mean-per-type over the types present; normalized MPT "
            "averages per-unique-answer accuracies within a type first (Kafle & Kanan 2017)."
        ),
        metrics_table("Main results, a row per run", context.entries, MAIN_COLUMNS, PUBLISHED),
    ]
    for entry in context.entries:
        keys = ("accuracy", "normalized_accuracy", "questions")
        names = question_types(entry.metrics)
        rows = [[name, *(entry.metrics.get(f"{key}_{name}") for key in keys)] for name in names]
        headers = ["question type", "accuracy", "normalized accuracy", "questions"]
        if rows:
            blocks.append(Table(f"Per question type: {entry.label}", headers, rows))
    return blocks
