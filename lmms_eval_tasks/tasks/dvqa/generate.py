"""Every generated file of DVQA: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate`` (``python -m lmms_eval_tasks.taskgen``); a test fails when a file drifts.
"""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.taskgen import Function, TaskYaml, render_task, task_docs_module
from lmms_eval_tasks.tasks.dvqa import BENCHMARK, make_sample
from lmms_eval_tasks.tasks.revisiting import common

FOLDER = "lmms_eval_tasks/tasks/dvqa"
HOOKS = "lmms_eval_tasks.tasks.dvqa.hooks"
SOURCE = "lmms_eval_tasks/tasks/dvqa/generate.py"

DESCRIPTIONS = {
    "dvqa": "DVQA slim subset (29,025 bar-chart questions) from the folder prepared by "
    "`lmms-eval-tasks prepare dvqa` ($LMMS_EVAL_TASKS_DATA_DVQA); exact match, decimals kept",
    "dvqa_sample": "DVQA bundled sample (19 questions on 3 generated bar charts), scored like dvqa",
}


def _settings(task: str) -> dict[str, Any]:
    # Both tasks name the bundled parquet: `dvqa`'s process_docs swaps in the prepared dataset (the host
    # cannot read a folder from an environment variable), so there the file is only a placeholder.
    return {
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {"test": f"sample/{make_sample.SAMPLE_FILE}"}},
        "test_split": "test",
        "output_type": "generate_until",
        "doc_to_visual": Function(f"{HOOKS}.doc_to_visual"),
        "doc_to_text": Function(f"{HOOKS}.doc_to_text"),
        "doc_to_target": Function(f"{HOOKS}.doc_to_target"),
        "process_results": Function(f"{HOOKS}.process_results"),
        "lmms_eval_specific_kwargs": common.SPECIFIC_KWARGS,
        "generation_kwargs": common.GENERATION_KWARGS,
    }


def task_specs() -> list[TaskYaml]:
    """One TaskYaml per task: the headline metric keys, the data source and the shared hooks."""
    return [
        TaskYaml(
            task=task,
            hooks=HOOKS,
            metrics=[(key, True) for key in BENCHMARK.headline_metrics],
            settings=_settings(task),
            docs_module="lmms_eval_tasks.tasks.dvqa.task_docs",
            description=description,
        )
        for task, description in DESCRIPTIONS.items()
    ]


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated DVQA file."""
    files: dict[str, str | bytes] = {
        f"{FOLDER}/{spec.task}.yaml": render_task(spec, SOURCE) for spec in task_specs()
    }
    files[f"{FOLDER}/task_docs.py"] = task_docs_module(HOOKS, list(DESCRIPTIONS), SOURCE)
    for name, content in make_sample.sample_files().items():
        files[f"{FOLDER}/sample/{name}"] = content
    return files
