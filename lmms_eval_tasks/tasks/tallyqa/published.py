"""TallyQA's published numbers (Revisiting Multi-Modal LLM Evaluation, Lu et al., arXiv 2408.05334)."""

from __future__ import annotations

from lmms_eval_tasks.reporting.published import PublishedRow, Source

# From the specification's transcription of the paper; the released results corroborate the micro accuracies.
SOURCE = Source(
    paper="Revisiting Multi-Modal LLM Evaluation (Lu et al., arXiv 2408.05334)",
    table="the paper's TallyQA results table, LLaVA-1.5-7B row (table number not checked); its 'RMSE' "
    "column is the official script's MSE",
    benchmark_version="TallyQA test, all 38,589 questions (simple and complex)",
    unchecked_reason="the paper's text (arXiv 2408.05334) was not available in the sources searched for this "
    "repository; the authors' repository (github.com/KevinLuJian/MLLM_supplemental) prints no results table",
    corroboration="micro accuracies recomputed from the authors' per-question correctness, "
    "hypo_testing/tallyqa.csv (github.com/KevinLuJian/MLLM_supplemental, commit 9292b07), column "
    "llava-v1.5-7b: simple 75.530 (22,991 questions), complex 64.130 (15,598); each rounds to the entered "
    "value. Macro accuracies and MSEs not corroborated (the file has no answers or predictions)",
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
