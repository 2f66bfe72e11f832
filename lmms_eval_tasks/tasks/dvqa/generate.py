"""Every generated file of DVQA: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate``; a test fails when a file drifts.
"""

from __future__ import annotations

from lmms_eval_tasks.tasks.dvqa import BENCHMARK, make_sample
from lmms_eval_tasks.tasks.revisiting import shared_tasks

DESCRIPTIONS = {
    "dvqa": "DVQA slim subset (29,043 bar-chart questions) from the folder prepared by "
    "`lmms-eval-tasks prepare dvqa` ($LMMS_EVAL_TASKS_DATA_DVQA); exact match, decimals kept",
    "dvqa_sample": "DVQA bundled sample (19 questions on 3 generated bar charts), scored like dvqa",
}


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated DVQA file."""
    return shared_tasks.generated_files(BENCHMARK, DESCRIPTIONS, make_sample)
