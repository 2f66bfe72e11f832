"""ConTextual: context-sensitive text-rich visual reasoning, GPT-4 judged acceptance rate (ICML 2024)."""

from lmms_eval_tasks.framework.registry import Benchmark

BENCHMARK = Benchmark(
    name="contextual",
    title="ConTextual (ICML 2024)",
    description="context-sensitive text-rich visual reasoning: GPT-4 judged acceptance rate over 8 visual "
    "scenarios, natural vs digital scenes, 95% interval, ROUGE-L",
    scorer="lmms_eval_tasks.tasks.contextual.scoring:score_records",
    record_fields=("image_url", "instruction", "response", "category"),
    headline_metrics=(
        "acceptance_rate",
        "acceptance_rate_ci95_low",
        "acceptance_rate_ci95_high",
        "acceptance_rate_natural",
        "acceptance_rate_digital",
        "acceptance_rate_misc_natural_scenes",
        "rouge_l",
        "unjudged",
    ),
    per_question="lmms_eval_tasks.tasks.contextual.scoring:per_question_correct",
    sample_tasks=("contextual_sample",),
    generated_files=("lmms_eval_tasks.tasks.contextual.generate:generated_files",),
    uncertainty="lmms_eval_tasks.tasks.contextual.uncertainty:uncertainty_rows",
    report_section="lmms_eval_tasks.tasks.contextual.report_section:render",
    docs="docs/contextual.md",
)
