"""DVQA's report section: accuracy per question template (structure, data retrieval, reasoning)."""

from __future__ import annotations

from lmms_eval_tasks.reporting.sections import (
    Block,
    PublishedRow,
    SectionContext,
    Text,
    grouped_bars,
    interval_errors,
    metrics_table,
)

SOURCE = "Revisiting Multi-Modal LLM Evaluation (Lu et al.), LLaVA-1.5-7B"
TYPES = (("structure", "structural"), ("data", "data retrieval"), ("reasoning", "reasoning"))
PUBLISHED = (
    PublishedRow(
        "LLaVA-1.5-7B",
        {
            "accuracy_reasoning": 17.76,
            "accuracy_data": 20.22,
            "accuracy_structure": 51.40,
            "micro_accuracy": 23.10,
            "macro_accuracy": 29.79,
        },
        SOURCE,
    ),
)
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
