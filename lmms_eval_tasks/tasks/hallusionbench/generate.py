"""Every generated file of HallusionBench: the six task YAML files, `task_docs.py` and the bundled sample;
`make generate` writes them, a test fails on drift."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.framework.taskgen import (
    EMPTY_PROMPT_KWARGS,
    TaskYaml,
    benchmark_files,
    greedy_generation,
    hook_fields,
)
from lmms_eval_tasks.tasks.hallusionbench import make_sample
from lmms_eval_tasks.tasks.hallusionbench.hooks import HF_DATASET, HIGHER_IS_BETTER, RESULT_KEYS, TASKS

FOLDER = "lmms_eval_tasks/tasks/hallusionbench"
HOOKS = "lmms_eval_tasks.tasks.hallusionbench.hooks"
SOURCE = "lmms_eval_tasks/tasks/hallusionbench/generate.py"

DESCRIPTIONS = {
    "hallusionbench": "HallusionBench, all 1129 questions (image + non_image splits), official LLM judge "
    "(correctness + consistency) x3 repeats, all metrics + LH/VI diagnosis",
    "hallusionbench_offline": "HallusionBench, all 1129 questions, offline rule-based judge (an "
    "approximation of the official judge; results carry judge_is_rule_based)",
    "hallusionbench_vlmevalkit": "HallusionBench as VLMEvalKit scores it (951 image questions, yes/no rules "
    "+ an LLM for unclear answers; overall = mean of aAcc, fAcc, qAcc)",
    "hallusionbench_sample": "HallusionBench bundled sample (29 generated questions), scored like "
    "hallusionbench",
    "hallusionbench_offline_sample": "HallusionBench bundled sample scored by the offline rule-based judge",
    "hallusionbench_vlmevalkit_sample": "HallusionBench bundled sample, image questions only, scored like "
    "hallusionbench_vlmevalkit",
}


def _fields(task: str) -> dict[str, Any]:
    data: dict[str, Any]
    if task.endswith("_sample"):
        data = {
            "dataset_path": "parquet",
            "dataset_kwargs": {
                "data_files": {
                    "image": f"sample/{make_sample.IMAGE_FILE}",
                    "non_image": f"sample/{make_sample.NON_IMAGE_FILE}",
                }
            },
        }
    else:
        data = {"dataset_path": HF_DATASET}
    return {
        **data,
        "test_split": "image",
        **hook_fields(
            HOOKS,
            doc_to_target="gt_answer_details",
            lmms_eval_specific_kwargs=EMPTY_PROMPT_KWARGS,
            generation_kwargs=greedy_generation(128),
        ),
    }


def task_specs() -> list[TaskYaml]:
    """One TaskYaml per task: the variant's headline metric keys, the data source and the shared hooks."""
    return [
        TaskYaml(
            task=task,
            hooks=HOOKS,
            metrics=[(key, key in HIGHER_IS_BETTER) for key in RESULT_KEYS[variant.variant]],
            fields=_fields(task),
            docs_module="lmms_eval_tasks.tasks.hallusionbench.task_docs",
            description=DESCRIPTIONS[task],
        )
        for task, variant in TASKS.items()
    ]


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated HallusionBench file."""
    return benchmark_files(FOLDER, SOURCE, HOOKS, task_specs(), samples=make_sample.sample_files())
