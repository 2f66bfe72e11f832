"""Scoring options: the protocol from the environment (``revisiting/shared_tasks.score_options_for``)."""

from lmms_eval_tasks.tasks.revisiting.shared_tasks import score_options_for

score_options = score_options_for("dvqa")
