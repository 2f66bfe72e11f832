"""TDIUC's published numbers (Revisiting Multi-Modal LLM Evaluation, Lu et al.) as data."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# Transcribed from the paper by the project's specification; the paper's text was not found in the
# sources searched for this repository, so these values are NOT checked against a source text
# (``Source.checked_against`` is empty and reports say so).
SOURCE = Source(
    paper="Revisiting Multi-Modal LLM Evaluation (Lu et al.)",
    table="TDIUC results (LLaVA-1.5-7B)",
    benchmark_version="TDIUC slim test subset (27,336 of 538,868 questions)",
)
PUBLISHED = (
    PublishedRow(
        "LLaVA-1.5-7B",
        {
            "micro_accuracy": 73.86,
            "macro_accuracy": 70.42,
            "accuracy_absurd": 51.48,
            "accuracy_counting": 51.95,
            "accuracy_color": 77.37,
        },
        SOURCE,
        "tdiuc",
        headline=("micro_accuracy", "macro_accuracy"),
    ),
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs."""
    return PUBLISHED, []
