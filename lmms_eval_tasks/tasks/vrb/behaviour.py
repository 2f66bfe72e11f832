"""The behaviour of vrb: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.vrb.config import score_options
from lmms_eval_tasks.tasks.vrb.generate import generated_files
from lmms_eval_tasks.tasks.vrb.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.vrb.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.vrb.report_section import render
from lmms_eval_tasks.tasks.vrb.scoring import score

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    random_answer=random_answer,
    generated_files=generated_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    hooks=HOOKS,
)
