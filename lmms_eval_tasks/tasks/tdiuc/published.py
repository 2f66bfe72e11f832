"""TDIUC's published numbers (Revisiting Multi-Modal LLM Evaluation, Lu et al., arXiv 2408.05334) as data."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# From the specification's transcription of the paper; the authors' released results corroborate each value.
SOURCE = Source(
    paper="Revisiting Multi-Modal LLM Evaluation (Lu et al., arXiv 2408.05334)",
    table="the paper's TDIUC results table, LLaVA-1.5-7B row (table number not checked)",
    benchmark_version="TDIUC slim test subset (27,336 of 538,868 questions)",
    unchecked_reason="the paper's text (arXiv 2408.05334) was not available in the sources searched for this "
    "repository; the authors' repository (github.com/KevinLuJian/MLLM_supplemental) prints no results table",
    corroboration="recomputed from the authors' per-question correctness, hypo_testing/tdiuc.csv "
    "(github.com/KevinLuJian/MLLM_supplemental, commit 9292b07), column LLaVA1.57b, 27,336 questions: "
    "micro 73.8623, macro (mean of the 12 types) 70.4209, absurd 51.4784, counting 51.9471, color 77.3688; "
    "each rounds to the entered value",
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
