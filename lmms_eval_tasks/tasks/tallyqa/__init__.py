"""TallyQA (Revisiting MLLM Evaluation): counting, simple vs complex questions, accuracy and RMSE."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="tallyqa",
    title="TallyQA (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="counting questions, simple and complex: micro/macro accuracy (count buckets 0-3, 4+), RMSE",
    scorer="lmms_eval_tasks.tasks.tallyqa.scoring:score_records",
    record_fields=("question_id", "answer", "issimple"),
    headline_metrics=(
        "simple_micro_accuracy",
        "simple_macro_accuracy",
        "simple_rmse",
        "complex_micro_accuracy",
        "complex_macro_accuracy",
        "complex_rmse",
        "micro_accuracy",
        "unparsed",
    ),
    per_question="lmms_eval_tasks.tasks.tallyqa.scoring:per_question_correct",
    random_answer="lmms_eval_tasks.tasks.tallyqa.hooks:random_answer",
    sample_tasks=("tallyqa_sample",),
    generated_files=("lmms_eval_tasks.tasks.tallyqa.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.tallyqa.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.tallyqa.report_section:render",
    docs="docs/revisiting.md",
)
