"""Every generated file of TallyQA: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate`` (``python -m lmms_eval_tasks.taskgen``); a test fails when a file drifts.
"""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.taskgen import Function, TaskYaml, render_task, task_docs_module
from lmms_eval_tasks.tasks.revisiting import common
from lmms_eval_tasks.tasks.tallyqa import BENCHMARK, make_sample

FOLDER = "lmms_eval_tasks/tasks/tallyqa"
HOOKS = "lmms_eval_tasks.tasks.tallyqa.hooks"
SOURCE = "lmms_eval_tasks/tasks/tallyqa/generate.py"

DESCRIPTIONS = {
    "tallyqa": "TallyQA test set (38,589 counting questions, simple and complex) from the folder prepared by "
    "`lmms-eval-tasks prepare tallyqa` ($LMMS_EVAL_TASKS_DATA_TALLYQA); accuracy and RMSE per split",
    "tallyqa_sample": "TallyQA bundled sample (15 counting questions on generated shape scenes), scored like "
    "tallyqa",
}
LOWER_IS_BETTER = {"simple_rmse", "complex_rmse", "unparsed"}


def _settings(task: str) -> dict[str, Any]:
    # Both tasks name the bundled parquet: `tallyqa`'s process_docs swaps in the prepared dataset (the host
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
            metrics=[(key, key not in LOWER_IS_BETTER) for key in BENCHMARK.headline_metrics],
            settings=_settings(task),
            docs_module="lmms_eval_tasks.tasks.tallyqa.task_docs",
            description=description,
        )
        for task, description in DESCRIPTIONS.items()
    ]


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated TallyQA file."""
    files: dict[str, str | bytes] = {
        f"{FOLDER}/{spec.task}.yaml": render_task(spec, SOURCE) for spec in task_specs()
    }
    files[f"{FOLDER}/task_docs.py"] = task_docs_module(HOOKS, list(DESCRIPTIONS), SOURCE)
    for name, content in make_sample.sample_files().items():
        files[f"{FOLDER}/sample/{name}"] = content
    return files
