"""DVQA's report section: accuracy per question template (structure, data retrieval, reasoning)."""

from __future__ import annotations

from lmms_eval_tasks.reporting.sections import (
    Block,
    SectionContext,
    Text,
    grouped_bars,
    interval_errors,
    metrics_table,
)
from lmms_eval_tasks.tasks.dvqa.published import PUBLISHED

TYPES = (("structure", "structural"), ("data", "data retrieval"), ("reasoning", "reasoning"))
MAIN_COLUMNS = (
    *((f"accuracy_{name}", header) for name, header in TYPES),
    ("micro_accuracy", "micro"),
    ("macro_accuracy", "macro"),
    *((f"questions_{name}", f"questions {header}") for name, header in TYPES),
)


def render(context: SectionContext) -> list[Block]:
    """The per-type table with the paper's row and a bar chart per type."""
    entries = context.entries
    return [
        Text(
            "Accuracy in percent (exact match after normalisation; "
            "decimals kept, unlike the official script)."
        ),
        metrics_table("Per question type, a row per run", entries, MAIN_COLUMNS, PUBLISHED),
        grouped_bars(
            "DVQA accuracy per question type",
            context.plot_name("per_type"),
            [header for _, header in TYPES],
            {entry.label: [entry.metrics.get(f"accuracy_{name}") for name, _ in TYPES] for entry in entries},
            "accuracy %",
            caption="Error bars: 95% intervals (bootstrap by question), where the run has them.",
            errors=interval_errors(entries, [f"accuracy_{name}" for name, _ in TYPES]),
        ),
    ]
