"""DVQA's published numbers (Revisiting Multi-Modal LLM Evaluation, Lu et al.) as data."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# Transcribed from the paper by the project's specification; the paper's text was not found in the
# sources searched for this repository, so these values are NOT checked against a source text
# (``Source.checked_against`` is empty and reports say so).
SOURCE = Source(
    paper="Revisiting Multi-Modal LLM Evaluation (Lu et al.)",
    table="DVQA results (LLaVA-1.5-7B)",
    benchmark_version="DVQA slim subset (29,043 released; the paper's Table 1 prints 29,025)",
)
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
        "dvqa",
        headline=("micro_accuracy", "macro_accuracy"),
    ),
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs."""
    return PUBLISHED, []
