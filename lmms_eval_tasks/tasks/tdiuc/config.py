"""Scoring options (the protocol, ``revisiting/shared_tasks.py``) and the launch check (WordNet is ready)."""

from lmms_eval_tasks.tasks.revisiting.datasets import wordnet_problem
from lmms_eval_tasks.tasks.revisiting.shared_tasks import score_options_for

score_options = score_options_for("tdiuc")
__all__ = ["score_options", "wordnet_problem"]
