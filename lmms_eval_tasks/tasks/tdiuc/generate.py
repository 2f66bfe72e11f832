"""Every generated file of TDIUC: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate`` (``python -m lmms_eval_tasks.taskgen``); a test fails when a file drifts.
"""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.taskgen import Function, TaskYaml, render_task, task_docs_module
from lmms_eval_tasks.tasks.revisiting import common
from lmms_eval_tasks.tasks.tdiuc import BENCHMARK, make_sample

FOLDER = "lmms_eval_tasks/tasks/tdiuc"
HOOKS = "lmms_eval_tasks.tasks.tdiuc.hooks"
SOURCE = "lmms_eval_tasks/tasks/tdiuc/generate.py"

DESCRIPTIONS = {
    "tdiuc": "TDIUC slim subset (27,336 questions, 12 types) from the folder prepared by "
    "`lmms-eval-tasks prepare tdiuc` ($LMMS_EVAL_TASKS_DATA_TDIUC); exact or WordNet-synonym match",
    "tdiuc_sample": "TDIUC bundled sample (15 generated questions incl. absurd ones and synonyms), scored "
    "like tdiuc",
}


def _settings(task: str) -> dict[str, Any]:
    # Both tasks name the bundled parquet: `tdiuc`'s process_docs swaps in the prepared dataset (the host
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
            docs_module="lmms_eval_tasks.tasks.tdiuc.task_docs",
            description=description,
        )
        for task, description in DESCRIPTIONS.items()
    ]


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated TDIUC file."""
    files: dict[str, str | bytes] = {
        f"{FOLDER}/{spec.task}.yaml": render_task(spec, SOURCE) for spec in task_specs()
    }
    files[f"{FOLDER}/task_docs.py"] = task_docs_module(HOOKS, list(DESCRIPTIONS), SOURCE)
    for name, content in make_sample.sample_files().items():
        files[f"{FOLDER}/sample/{name}"] = content
    return files
