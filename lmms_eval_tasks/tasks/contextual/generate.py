"""Every generated file of ConTextual (`make generate`): task YAML, `task_docs.py`, the sample and ``data/``:
the official CSVs (tests/data/contextual, MIT) as parquet, strings as the CSV module reads them plus each
row's number (images: ``lmms-eval-tasks prepare contextual``).
"""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.framework.taskgen import (
    EMPTY_PROMPT_KWARGS,
    REPOSITORY_ROOT,
    TaskYaml,
    benchmark_files,
    greedy_generation,
    hook_fields,
)
from lmms_eval_tasks.tasks.contextual import make_sample
from lmms_eval_tasks.tasks.contextual.config import TASKS
from lmms_eval_tasks.tasks.contextual.hooks import LOWER_IS_BETTER, metric_keys

FOLDER = "lmms_eval_tasks/tasks/contextual"
HOOKS = "lmms_eval_tasks.tasks.contextual.hooks"
SOURCE = "lmms_eval_tasks/tasks/contextual/generate.py"
CSV_FOLDER = REPOSITORY_ROOT / "tests" / "data" / "contextual"
DATA = {
    "contextual": ("validation", "contextual_val"),
    "contextual_offline": ("validation", "contextual_val"),
    "contextual_test": ("test", "contextual_test"),
}
IMAGES_COMMENT = (
    "Data: the instructions (and references) come from the data/ parquet named here; the images from the\n"
    "folder written by `lmms-eval-tasks prepare contextual` ($LMMS_EVAL_TASKS_DATA_CONTEXTUAL, or\n"
    "$LMMS_EVAL_TASKS_DATA/contextual), which process_docs reads and fails naming when it is missing."
)
MAX_NEW_TOKENS = 300  # the authors' GPT-4V runs (max_tokens=300)

DESCRIPTIONS = {
    "contextual": "ConTextual validation (100 instructions with references), GPT-4 judged acceptance "
    "rate per visual scenario (images: lmms-eval-tasks prepare contextual)",
    "contextual_offline": "ConTextual validation scored by the offline RULE judge (short-reference "
    "containment), not the paper's GPT-4 judge: an approximation, labelled in the report (images: "
    "lmms-eval-tasks prepare contextual)",
    "contextual_test": "ConTextual test (506 instructions), generation only: writes the leaderboard "
    "predictions file (images: lmms-eval-tasks prepare contextual)",
    "contextual_sample": "ConTextual bundled sample (10 generated text-rich images), judged like contextual "
    "(LLM judge if configured, else the offline rule judge)",
    "contextual_sample_submission": "ConTextual bundled sample, generation only: writes a predictions file "
    "in the leaderboard format",
}


def _fields(task: str) -> dict[str, Any]:
    if task.startswith("contextual_sample"):
        split, path = "test", f"sample/{make_sample.SAMPLE_FILE}"
    else:
        split, path = DATA[task][0], f"data/{DATA[task][1]}.parquet"
    return {
        "dataset_path": "parquet",
        "dataset_kwargs": {"data_files": {split: path}},
        "test_split": split,
        **hook_fields(
            HOOKS,
            doc_to_target="response" if TASKS[task].judged else "instruction",
            lmms_eval_specific_kwargs=EMPTY_PROMPT_KWARGS,
            generation_kwargs=greedy_generation(MAX_NEW_TOKENS),
        ),
    }


def task_specs() -> list[TaskYaml]:
    """One TaskYaml per task."""
    return [
        TaskYaml(
            task=task,
            hooks=HOOKS,
            metrics=[(key, key not in LOWER_IS_BETTER) for key in metric_keys(task)],
            fields=_fields(task),
            docs_module="lmms_eval_tasks.tasks.contextual.task_docs",
            description=DESCRIPTIONS[task],
            comment="" if task.startswith("contextual_sample") else IMAGES_COMMENT,
        )
        for task in TASKS
    ]


def data_files() -> dict[str, bytes]:
    """{file name in data/: parquet bytes} from the official CSVs."""
    import datasets

    from lmms_eval_tasks.framework.sample_data import parquet_bytes
    from lmms_eval_tasks.tasks.contextual.prepare import read_csv

    files = {}
    for _split, stem in DATA.values():
        rows = read_csv(CSV_FOLDER / f"{stem}.csv")
        columns = list(rows[0].fields)
        features = datasets.Features(
            {**{name: datasets.Value("string") for name in columns}, "csv_row": datasets.Value("int32")}
        )
        table = [{**row.fields, "csv_row": row.row} for row in rows]
        files[f"{stem}.parquet"] = parquet_bytes(table, features)
    return files


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated ConTextual file."""
    files = benchmark_files(FOLDER, SOURCE, HOOKS, task_specs(), samples=make_sample.sample_files())
    files.update({f"{FOLDER}/data/{name}": content for name, content in data_files().items()})
    return files
