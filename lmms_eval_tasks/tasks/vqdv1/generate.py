"""Every generated file of VQDv1: the task YAML files, ``task_docs.py`` and the bundled sample.

Run through ``make generate``; a test fails when a file drifts.
"""

from __future__ import annotations

from lmms_eval_tasks.framework.taskgen import greedy_generation, prepared_dataset_files
from lmms_eval_tasks.tasks.vqdv1 import BENCHMARK, make_sample

DESCRIPTIONS = {
    "vqdv1": "VQDv1 slim subset (37,057 queries, 0-N boxes each) from the folder prepared by "
    "`lmms-eval-tasks prepare vqdv1` ($LMMS_EVAL_TASKS_DATA_VQDV1); per-query F1, micro/macro F1 by count",
    "vqdv1_sample": "VQDv1 bundled sample (19 generated queries with 0-7 boxes), scored like vqdv1",
}
LOWER_IS_BETTER = {"unparsed"}
# Prompt per model (paper Table 11): the host picks the entry named like the --model, else "default".
# llava_hf serves LLaVA-1.5 and LLaVA-NeXT alike: LLaVA-NeXT users set LMMS_EVAL_TASKS_VQDV1_PROMPT.
SPECIFIC_KWARGS = {
    "default": {"prompt": "api"},
    "llava_hf": {"prompt": "llava15"},
    "llava": {"prompt": "llava15"},
    "llava_onevision": {"prompt": "llava_next"},
}


def generated_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated VQDv1 file."""
    return prepared_dataset_files(
        BENCHMARK,
        DESCRIPTIONS,
        make_sample,
        lower_is_better=LOWER_IS_BETTER,
        lmms_eval_specific_kwargs=SPECIFIC_KWARGS,
        generation_kwargs=greedy_generation(200),
    )
