"""DARE's published reference rows (Sterz, Pfeiffer, Vulić; arXiv 2409.18023): human and random guessing
only (no per-model table was read from a source text, so no model can be matched).
"""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# Transcribed from the paper by the project's specification and NOT checked against the paper's text
# (``unchecked_reason``). The random-guessing values are arithmetic (1 of 4 options; 1 of the 16 subsets of
# 4 options), not read from a table.
SOURCE = Source(
    paper="DARE (Sterz, Pfeiffer, Vulić; arXiv 2409.18023)",
    table="human accuracy per category; random guessing (table number not checked)",
    benchmark_version="DARE test (single-correct and multi-correct questions)",
    unchecked_reason="the paper's text (arXiv 2409.18023) was not available in the sources searched for this "
    "repository (only its abstract); the dataset card (huggingface.co/datasets/cambridgeltl/DARE) has no "
    "tables and no official evaluation code is public",
)
CATEGORIES = ("count", "order", "vcr", "culture", "trick")
HUMAN_ACCURACY = (92.0, 96.0, 70.0, 82.0, 92.0)  # in CATEGORIES' order
# Human accuracy (single-correct) per category, and random guessing (25% single, 1/16 per multi question).
PUBLISHED_CATEGORY = (
    PublishedRow(
        "Human",
        {f"single_accuracy__{name}": value for name, value in zip(CATEGORIES, HUMAN_ACCURACY, strict=True)},
        SOURCE,
        "dare",
    ),
    PublishedRow(
        "Random guessing",
        {"single_accuracy": 25.0, **{f"single_accuracy__{name}": 25.0 for name in CATEGORIES}},
        SOURCE,
        "dare",
    ),
)
PUBLISHED_MAIN = (
    PublishedRow(
        "Random guessing",
        {"single_accuracy": 25.0, **{f"multi_exact_k{k}": 6.25 for k in range(5)}},
        SOURCE,
        "dare",
        headline=("single_accuracy",),
    ),
)
PUBLISHED = (*PUBLISHED_MAIN, *PUBLISHED_CATEGORY[:1])
