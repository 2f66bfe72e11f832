"""TallyQA's published numbers (Revisiting Multi-Modal LLM Evaluation, Lu et al.) as data."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# Transcribed from the paper by the project's specification; the paper's text was not found in the
# sources searched for this repository, so these values are NOT checked against a source text
# (``Source.checked_against`` is empty and reports say so).
SOURCE = Source(
    paper="Revisiting Multi-Modal LLM Evaluation (Lu et al.)",
    table="TallyQA results (LLaVA-1.5-7B); its 'RMSE' column is the official script's MSE",
    benchmark_version="TallyQA test, all 38,589 questions (simple and complex)",
)
PUBLISHED = (
    PublishedRow(
        "LLaVA-1.5-7B",
        {
            "simple_micro_accuracy": 75.5,
            "simple_macro_accuracy": 66.5,
            "simple_mse": 1.20,
            "complex_micro_accuracy": 64.1,
            "complex_macro_accuracy": 45.5,
            "complex_mse": 2.21,
        },
        SOURCE,
        "tallyqa",
        headline=("simple_micro_accuracy", "complex_micro_accuracy"),
    ),
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs."""
    return PUBLISHED, []
