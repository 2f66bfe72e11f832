"""VQDv1's published numbers (Revisiting Multi-Modal LLM Evaluation, Lu et al.) as data."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# Transcribed from the paper by the project's specification; the paper's text was not found in the
# sources searched for this repository, so these values are NOT checked against a source text
# (``Source.checked_against`` is empty and reports say so).
SOURCE = Source(
    paper="Revisiting Multi-Modal LLM Evaluation (Lu et al.)",
    table="Table 2, the official script's micro F1 (capped F1, swapped labels: compare with "
    "protocol=official)",
    benchmark_version="VQDv1 slim subset (37,057 of 190,174 queries)",
)
PUBLISHED = tuple(
    PublishedRow(model, {"micro_f1": value}, SOURCE, "vqdv1")
    for model, value in (("LLaVA-1.5-7B", 25.06), ("GPT-4o", 25.33), ("LLaVA-NeXT", 27.01))
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs."""
    return PUBLISHED, []
