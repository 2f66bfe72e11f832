"""VRB: VQA accuracy under 14 image corruptions x 5 severities, the robustness sub-metrics and VRE."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="vrb",
    title="Visual Robustness Benchmark, VRB (WACV 2025, arXiv 2407.03386)",
    description="VQAv2 under 14 corruptions x 5 severities: accuracy per level, First-Drop, Range of Error, "
    "Error Rate, Average Error, Average Difference, VRE",
    scorer="lmms_eval_tasks.tasks.vrb.scoring:score_records",
    record_fields=(
        "question_id",
        "answers",
        "multiple_choice_answer",
        "question_type",
        "answer_type",
        "corruption",
        "severity",
    ),
    headline_metrics=(
        "accuracy",
        "accuracy_clean",
        "relative_accuracy_drop",
        "first_drop",
        "range_of_error",
        "error_rate",
        "average_error",
        "average_difference",
    ),
    random_answer="lmms_eval_tasks.tasks.vrb.hooks:random_answer",
    sample_tasks=("vrb_sample",),
    generated_files=("lmms_eval_tasks.tasks.vrb.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.vrb.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.vrb.report_section:render",
    docs="docs/vrb.md",
)
