"""DVQA (Revisiting MLLM Evaluation): bar-chart QA by template (structure, data retrieval, reasoning)."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="dvqa",
    title="DVQA (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="bar-chart QA: structural understanding, data retrieval, reasoning; exact match, decimals "
    "kept",
    scorer="lmms_eval_tasks.tasks.dvqa.scoring:score_records",
    record_fields=("question_id", "template_id", "answer"),
    headline_metrics=(
        "micro_accuracy",
        "macro_accuracy",
        "accuracy_structure",
        "accuracy_data",
        "accuracy_reasoning",
    ),
    per_question="lmms_eval_tasks.tasks.dvqa.scoring:per_question_correct",
    random_answer="lmms_eval_tasks.tasks.dvqa.hooks:random_answer",
    sample_tasks=("dvqa_sample",),
    generated_files=("lmms_eval_tasks.tasks.dvqa.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.dvqa.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.dvqa.report_section:render",
    docs="docs/revisiting.md",
)
