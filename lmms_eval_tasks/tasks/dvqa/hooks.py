"""lmms-eval hooks: the Revisiting family's (``revisiting/shared_tasks.py``), told this dataset's settings."""

from lmms_eval_tasks.tasks.revisiting.datasets import DVQA
from lmms_eval_tasks.tasks.revisiting.shared_tasks import DatasetHooks

SHARED = DatasetHooks(DVQA)
HOOKS = SHARED.hooks
doc_to_visual = SHARED.doc_to_visual
doc_to_text = SHARED.doc_to_text
doc_to_target = SHARED.doc_to_target
process_results = HOOKS.process_results
