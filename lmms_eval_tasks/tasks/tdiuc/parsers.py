"""Parsers of model output and screening: the Revisiting family's table (``revisiting/datasets.py``)."""

from lmms_eval_tasks.tasks.revisiting.datasets import TDIUC

PARSERS = list(TDIUC.parsers)
SCREENING = TDIUC.screening
