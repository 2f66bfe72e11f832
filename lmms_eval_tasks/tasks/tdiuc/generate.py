"""Every generated file of TDIUC: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate``; a test fails when a file drifts.
"""

from __future__ import annotations

from lmms_eval_tasks.tasks.revisiting import shared_tasks
from lmms_eval_tasks.tasks.tdiuc import BENCHMARK, make_sample

DESCRIPTIONS = {
    "tdiuc": "TDIUC slim subset (27,336 questions, 12 types) from the folder prepared by "
    "`lmms-eval-tasks prepare tdiuc` ($LMMS_EVAL_TASKS_DATA_TDIUC); exact or WordNet-synonym match",
    "tdiuc_sample": "TDIUC bundled sample (15 generated questions incl. absurd ones and synonyms), scored "
    "like tdiuc",
}


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated TDIUC file."""
    return shared_tasks.generated_files(BENCHMARK, DESCRIPTIONS, make_sample)
