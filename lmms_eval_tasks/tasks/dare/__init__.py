"""DARE: multiple-choice VQA along four robustness axes (prompts, output formats, option sets, #correct)."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="dare",
    title="DARE (arXiv 2409.18023)",
    description="multiple-choice VQA along four robustness axes: prompts, output formats, option sets, "
    "number of correct answers",
    scorer="lmms_eval_tasks.tasks.dare.scoring:score_records",
    record_fields=("id", "setup", "format", "prompt", "category", "A", "B", "C", "D", "answer"),
    headline_metrics=(
        "single_accuracy",
        "single_accuracy_std_over_prompts",
        "single_var_accuracy",
        "multi_exact_k0",
        "multi_exact_k2",
        "multi_exact_k4",
        "multi_f1",
        "unparsed",
    ),
    per_question="lmms_eval_tasks.tasks.dare.scoring:per_question_correct",
    random_answer="lmms_eval_tasks.tasks.dare.hooks:random_answer",
    sample_tasks=("dare_sample",),
    generated_files=("lmms_eval_tasks.tasks.dare.grid:generated_files",),
    report_section="lmms_eval_tasks.tasks.dare.report_section:render",
    docs="docs/dare.md",
)
