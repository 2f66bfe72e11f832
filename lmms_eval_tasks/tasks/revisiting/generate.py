"""Every generated file of the four Revisiting datasets (TDIUC, TallyQA, DVQA, VQDv1): one generator.

Each dataset has a prepared-data task (named like the benchmark, reading the folder from
``lmms-eval-tasks prepare``) and a bundled sample task (``taskgen.prepared_dataset_files``); TDIUC, TallyQA
and DVQA share the paper's prompts per model and generation settings (``shared_tasks``), VQDv1 has its
own (``vqdv1/prompts.py``). Run through ``make generate``; a test fails when a file drifts.
"""

from __future__ import annotations

from lmms_eval_tasks.framework.taskgen import greedy_generation, prepared_dataset_files
from lmms_eval_tasks.tasks import dvqa, tallyqa, tdiuc, vqdv1
from lmms_eval_tasks.tasks.dvqa import make_sample as dvqa_sample
from lmms_eval_tasks.tasks.revisiting.shared_tasks import GENERATION_KWARGS, SPECIFIC_KWARGS
from lmms_eval_tasks.tasks.tallyqa import make_sample as tallyqa_sample
from lmms_eval_tasks.tasks.tdiuc import make_sample as tdiuc_sample
from lmms_eval_tasks.tasks.vqdv1 import make_sample as vqdv1_sample
from lmms_eval_tasks.tasks.vqdv1.prompts import SPECIFIC_KWARGS as VQDV1_SPECIFIC_KWARGS

SOURCE = "lmms_eval_tasks/tasks/revisiting/generate.py"
DESCRIPTIONS = {
    "tdiuc": {
        "tdiuc": "TDIUC slim subset (27,336 questions, 12 types) from the folder prepared by "
        "`lmms-eval-tasks prepare tdiuc` ($LMMS_EVAL_TASKS_DATA_TDIUC); exact or WordNet-synonym match",
        "tdiuc_sample": "TDIUC bundled sample (15 generated questions incl. absurd ones and synonyms), "
        "scored like tdiuc",
    },
    "tallyqa": {
        "tallyqa": "TallyQA test set (38,589 counting questions, simple and complex) from the folder "
        "prepared by `lmms-eval-tasks prepare tallyqa` ($LMMS_EVAL_TASKS_DATA_TALLYQA); accuracy and RMSE "
        "per split",
        "tallyqa_sample": "TallyQA bundled sample (15 counting questions on generated shape scenes), "
        "scored like tallyqa",
    },
    "dvqa": {
        "dvqa": "DVQA slim subset (29,043 bar-chart questions) from the folder prepared by "
        "`lmms-eval-tasks prepare dvqa` ($LMMS_EVAL_TASKS_DATA_DVQA); exact match, decimals kept",
        "dvqa_sample": "DVQA bundled sample (19 questions on 3 generated bar charts), scored like dvqa",
    },
    "vqdv1": {
        "vqdv1": "VQDv1 slim subset (37,057 queries, 0-N boxes each) from the folder prepared by "
        "`lmms-eval-tasks prepare vqdv1` ($LMMS_EVAL_TASKS_DATA_VQDV1); per-query F1, micro/macro F1 by "
        "count",
        "vqdv1_sample": "VQDv1 bundled sample (19 generated queries with 0-7 boxes), scored like vqdv1",
    },
}


def tdiuc_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated TDIUC file."""
    return prepared_dataset_files(
        tdiuc.BENCHMARK,
        DESCRIPTIONS["tdiuc"],
        tdiuc_sample,
        source=SOURCE,
        lmms_eval_specific_kwargs=SPECIFIC_KWARGS,
        generation_kwargs=GENERATION_KWARGS,
    )


def tallyqa_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated TallyQA file (its RMSEs are lower-is-better)."""
    return prepared_dataset_files(
        tallyqa.BENCHMARK,
        DESCRIPTIONS["tallyqa"],
        tallyqa_sample,
        source=SOURCE,
        lower_is_better={"simple_rmse", "complex_rmse", "unparsed"},
        lmms_eval_specific_kwargs=SPECIFIC_KWARGS,
        generation_kwargs=GENERATION_KWARGS,
    )


def dvqa_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated DVQA file."""
    return prepared_dataset_files(
        dvqa.BENCHMARK,
        DESCRIPTIONS["dvqa"],
        dvqa_sample,
        source=SOURCE,
        lmms_eval_specific_kwargs=SPECIFIC_KWARGS,
        generation_kwargs=GENERATION_KWARGS,
    )


def vqdv1_files() -> dict[str, str | bytes]:
    """{repository path: content} for every generated VQDv1 file (its own prompts per model)."""
    return prepared_dataset_files(
        vqdv1.BENCHMARK,
        DESCRIPTIONS["vqdv1"],
        vqdv1_sample,
        source=SOURCE,
        lower_is_better={"unparsed"},
        lmms_eval_specific_kwargs=VQDV1_SPECIFIC_KWARGS,
        generation_kwargs=greedy_generation(200),
    )
