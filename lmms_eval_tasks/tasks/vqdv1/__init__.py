"""VQDv1 (Revisiting MLLM Evaluation): visual query detection, 0..N boxes per query, F1 by box count."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="vqdv1",
    title="VQDv1 (Revisiting Multi-Modal LLM Evaluation, Lu et al.)",
    description="visual query detection: every box answering a query (0..N), per-query F1, micro/macro F1 "
    "over box counts 0, 1, 2, 3, 4+",
    scorer="lmms_eval_tasks.tasks.vqdv1.scoring:score_records",
    record_fields=("question_id", "gtbox", "width", "height"),
    headline_metrics=("micro_f1", "macro_f1", "f1_0", "f1_1", "f1_2", "f1_3", "unparsed"),
    per_question="lmms_eval_tasks.tasks.vqdv1.scoring:per_question_correct",
    random_answer="lmms_eval_tasks.tasks.vqdv1.hooks:random_answer",
    sample_tasks=("vqdv1_sample",),
    generated_files=("lmms_eval_tasks.tasks.vqdv1.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.vqdv1.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.vqdv1.report_section:render",
    docs="docs/vqdv1.md",
)
