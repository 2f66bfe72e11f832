"""Every generated file of TallyQA: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate``; a test fails when a file drifts.
"""

from __future__ import annotations

from lmms_eval_tasks.tasks.revisiting import shared_tasks
from lmms_eval_tasks.tasks.tallyqa import BENCHMARK, make_sample

DESCRIPTIONS = {
    "tallyqa": "TallyQA test set (38,589 counting questions, simple and complex) from the folder prepared by "
    "`lmms-eval-tasks prepare tallyqa` ($LMMS_EVAL_TASKS_DATA_TALLYQA); accuracy and RMSE per split",
    "tallyqa_sample": "TallyQA bundled sample (15 counting questions on generated shape scenes), scored like "
    "tallyqa",
}
LOWER_IS_BETTER = {"simple_rmse", "complex_rmse", "unparsed"}


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated TallyQA file."""
    return shared_tasks.generated_files(BENCHMARK, DESCRIPTIONS, make_sample, lower_is_better=LOWER_IS_BETTER)
