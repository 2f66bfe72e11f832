"""TDIUC (Revisiting MLLM Evaluation): 12 question types, WordNet synonym matching, MPT metrics."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="tdiuc",
    title="TDIUC (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="VQA over 12 question types incl. absurd ones; exact or WordNet-synonym match; "
    "micro/macro (arithmetic MPT), harmonic and normalized MPT",
    scorer="lmms_eval_tasks.tasks.tdiuc.scoring:score_records",
    record_fields=("question_id", "question_type", "labeled_answer"),
    headline_metrics=(
        "micro_accuracy",
        "macro_accuracy",
        "harmonic_mpt",
        "normalized_arithmetic_mpt",
        "normalized_harmonic_mpt",
        "accuracy_absurd",
        "accuracy_counting",
        "accuracy_color",
    ),
    per_question="lmms_eval_tasks.tasks.tdiuc.scoring:per_question_correct",
    random_answer="lmms_eval_tasks.tasks.tdiuc.hooks:random_answer",
    sample_tasks=("tdiuc_sample",),
    generated_files=("lmms_eval_tasks.tasks.tdiuc.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.tdiuc.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.tdiuc.report_section:render",
    docs="docs/revisiting.md",
)
