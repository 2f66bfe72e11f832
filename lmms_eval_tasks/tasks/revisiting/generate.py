"""Every generated file of the four Revisiting datasets (TDIUC, TallyQA, DVQA, VQDv1): a prepared-data task
and a bundled sample task each (``taskgen.prepared_dataset_files``); ``make generate``, a test on drift."""

from __future__ import annotations

from lmms_eval_tasks.framework.taskgen import greedy_generation, prepared_dataset_files
from lmms_eval_tasks.tasks import dvqa, tallyqa, tdiuc, vqdv1
from lmms_eval_tasks.tasks.dvqa import make_sample as dvqa_sample
from lmms_eval_tasks.tasks.revisiting.datasets import DATASETS, GENERATION_KWARGS, SPECIFIC_KWARGS
from lmms_eval_tasks.tasks.tallyqa import make_sample as tallyqa_sample
from lmms_eval_tasks.tasks.tdiuc import make_sample as tdiuc_sample
from lmms_eval_tasks.tasks.vqdv1 import make_sample as vqdv1_sample
from lmms_eval_tasks.tasks.vqdv1.prompts import SPECIFIC_KWARGS as VQDV1_SPECIFIC_KWARGS

SOURCE = "lmms_eval_tasks/tasks/revisiting/generate.py"
PACKAGES = {"tdiuc": (tdiuc, tdiuc_sample), "tallyqa": (tallyqa, tallyqa_sample), "dvqa": (dvqa, dvqa_sample)}


def dataset_files(name: str) -> dict[str, str | bytes]:
    """{repository path: content} for every generated file of TDIUC, TallyQA or DVQA."""
    package, make_sample = PACKAGES[name]
    dataset = DATASETS[name]
    return prepared_dataset_files(
        package.BENCHMARK,
        dataset.descriptions,
        make_sample,
        source=SOURCE,
        lower_is_better=dataset.lower_is_better,
        lmms_eval_specific_kwargs=SPECIFIC_KWARGS,
        generation_kwargs=GENERATION_KWARGS,
    )


def vqdv1_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated VQDv1 file (its own prompts per model)."""
    return prepared_dataset_files(
        vqdv1.BENCHMARK,
        {
            "vqdv1": "VQDv1 slim subset (37,057 queries, 0-N boxes each) from the folder prepared by "
            "`lmms-eval-tasks prepare vqdv1` ($LMMS_EVAL_TASKS_DATA_VQDV1); per-query F1, micro/macro F1 "
            "by count",
            "vqdv1_sample": "VQDv1 bundled sample (19 generated queries with 0-7 boxes), scored like vqdv1",
        },
        vqdv1_sample,
        source=SOURCE,
        lower_is_better={"unparsed"},
        lmms_eval_specific_kwargs=VQDV1_SPECIFIC_KWARGS,
        generation_kwargs=greedy_generation(200),
    )
