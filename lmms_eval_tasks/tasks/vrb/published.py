"""VRB's published numbers (Ishmam et al., WACV 2025) as data."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# Transcribed from the paper by the project's specification; the paper's text was not found in the
# sources searched for this repository, so these values are NOT checked against a source text
# (``Source.checked_against`` is empty and reports say so).
SOURCE = Source(
    paper="Visual Robustness Benchmark for VQA (Ishmam et al., WACV 2025)",
    table="clean VQA accuracy per model (fractions)",
    benchmark_version="the paper's unpublished random 3,000-image / ~16,000-question VQAv2 subset",
)
PUBLISHED = tuple(
    PublishedRow(model, {"accuracy_clean": value}, SOURCE, "vrb")
    for model, value in (
        ("ViLT", 0.713),
        ("BLIP", 0.782),
        ("VLE", 0.771),
        ("PNP", 0.648),
        ("LLaVA-1.5-7B", 0.783),
        ("LLaVA-1.5-13B", 0.798),
    )
)


def published_for_task(task: str) -> tuple[tuple[PublishedRow, ...], list[str]]:
    """The published rows a run of ``task`` compares with, and why its setting differs from theirs."""
    return PUBLISHED, [
        "question set: the paper's subset was never published; the pack draws its own seeded subset"
    ]
