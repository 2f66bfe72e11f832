"""`python -m lmms_eval_tasks.cli`: the utility CLI."""

from lmms_eval_tasks.cli import run

run()
