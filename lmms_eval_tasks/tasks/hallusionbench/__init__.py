"""HallusionBench: yes/no image-context reasoning, figure consistency and the hallucination diagnosis."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="hallusionbench",
    title="HallusionBench (CVPR 2024)",
    description="yes/no image-context reasoning: aAcc/fAcc/qAcc, yes/no bias, figure consistency, "
    "Language Hallucination vs Visual Illusion diagnosis",
    scorer="lmms_eval_tasks.tasks.hallusionbench.scoring:score_records",
    record_fields=(
        "category",
        "subcategory",
        "visual_input",
        "set_id",
        "figure_id",
        "question_id",
        "question",
        "gt_answer",
        "gt_answer_details",
    ),
    headline_metrics=("aAcc", "fAcc", "qAcc", "overall", "LH", "VI", "Mixed", "unjudged_verdicts"),
    per_question="lmms_eval_tasks.tasks.hallusionbench.scoring:per_question_correct",
    random_answer="lmms_eval_tasks.tasks.hallusionbench.hooks:random_answer",
    sample_tasks=(
        "hallusionbench_sample",
        "hallusionbench_offline_sample",
        "hallusionbench_vlmevalkit_sample",
    ),
    generated_files=("lmms_eval_tasks.tasks.hallusionbench.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.hallusionbench.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.hallusionbench.report_section:render",
    docs="docs/hallusionbench.md",
)
