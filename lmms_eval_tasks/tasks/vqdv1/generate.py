"""Every generated file of VQDv1: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate`` (``python -m lmms_eval_tasks.taskgen``); a test fails when a file drifts.
"""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.taskgen import Function, TaskYaml, render_task, task_docs_module
from lmms_eval_tasks.tasks.vqdv1 import BENCHMARK, make_sample

FOLDER = "lmms_eval_tasks/tasks/vqdv1"
HOOKS = "lmms_eval_tasks.tasks.vqdv1.hooks"
SOURCE = "lmms_eval_tasks/tasks/vqdv1/generate.py"
LOWER_IS_BETTER = {"unparsed"}

DESCRIPTIONS = {
    "vqdv1": "VQDv1 slim subset (37,057 queries, 0-N boxes each) from the folder prepared by "
    "`lmms-eval-tasks prepare vqdv1` ($LMMS_EVAL_TASKS_DATA_VQDV1); per-query F1, micro/macro F1 by count",
    "vqdv1_sample": "VQDv1 bundled sample (19 generated queries with 0-7 boxes), scored like vqdv1",
}
# Prompt per model (paper Table 11): the host picks the entry named like the --model, else "default".
# llava_hf serves LLaVA-1.5 and LLaVA-NeXT alike: LLaVA-NeXT users set LMMS_EVAL_TASKS_VQDV1_PROMPT.
SPECIFIC_KWARGS = {
    "default": {"prompt": "api"},
    "llava_hf": {"prompt": "llava15"},
    "llava": {"prompt": "llava15"},
    "llava_onevision": {"prompt": "llava_next"},
}


def _settings(task: str) -> dict[str, Any]:
    # Both tasks name the bundled parquet: `vqdv1`'s process_docs swaps in the prepared dataset (the host
    # cannot read a folder from an environment variable), so the file is only a placeholder there.
    data: dict[str, Any] = {
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {"test": f"sample/{make_sample.SAMPLE_FILE}"}},
    }
    return {
        **data,
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_visual": Function(f"{HOOKS}.doc_to_visual"),
        "doc_to_text": Function(f"{HOOKS}.doc_to_text"),
        "doc_to_target": Function(f"{HOOKS}.doc_to_target"),
        "process_results": Function(f"{HOOKS}.process_results"),
        "lmms_eval_specific_kwargs": SPECIFIC_KWARGS,
        "generation_kwargs": {
            "max_new_tokens": 200,
            "temperature": 0,
            "top_p": 1.0,
            "num_beams": 1,
            "do_sample": False,
        },
    }


def task_specs() -> list[TaskYaml]:
    """One TaskYaml per task: the headline metric keys, the data source and the shared hooks."""
    metrics = [(key, key not in LOWER_IS_BETTER) for key in BENCHMARK.headline_metrics]
    return [
        TaskYaml(
            task=task,
            hooks=HOOKS,
            metrics=metrics,
            settings=_settings(task),
            docs_module="lmms_eval_tasks.tasks.vqdv1.task_docs",
            description=description,
        )
        for task, description in DESCRIPTIONS.items()
    ]


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated VQDv1 file."""
    files: dict[str, str | bytes] = {
        f"{FOLDER}/{spec.task}.yaml": render_task(spec, SOURCE) for spec in task_specs()
    }
    files[f"{FOLDER}/task_docs.py"] = task_docs_module(HOOKS, list(DESCRIPTIONS), SOURCE)
    for name, content in make_sample.sample_files().items():
        files[f"{FOLDER}/sample/{name}"] = content
    return files
