"""Every generated file of DVQA: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate`` (``python -m lmms_eval_tasks.taskgen``); a test fails when a file drifts.
"""

from __future__ import annotations

from lmms_eval_tasks.taskgen import prepared_dataset_files
from lmms_eval_tasks.tasks.dvqa import BENCHMARK, make_sample
from lmms_eval_tasks.tasks.revisiting import common

DESCRIPTIONS = {
    "dvqa": "DVQA slim subset (29,025 bar-chart questions) from the folder prepared by "
    "`lmms-eval-tasks prepare dvqa` ($LMMS_EVAL_TASKS_DATA_DVQA); exact match, decimals kept",
    "dvqa_sample": "DVQA bundled sample (19 questions on 3 generated bar charts), scored like dvqa",
}


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated DVQA file."""
    return prepared_dataset_files(
        "dvqa",
        DESCRIPTIONS,
        [(key, True) for key in BENCHMARK.headline_metrics],
        make_sample.SAMPLE_FILE,
        make_sample.sample_files(),
        lmms_eval_specific_kwargs=common.SPECIFIC_KWARGS,
        generation_kwargs=common.GENERATION_KWARGS,
    )
