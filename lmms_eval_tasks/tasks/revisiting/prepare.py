"""``lmms-eval-tasks prepare tdiuc|tallyqa|dvqa``: each dataset's ``preparer`` (``datasets.py``)."""

from lmms_eval_tasks.tasks.revisiting.datasets import DATASETS

PREPARERS = [dataset.preparer for dataset in DATASETS.values()]
