"""The behaviour of dare: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.dare.grid import generated_files
from lmms_eval_tasks.tasks.dare.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.dare.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.dare.report_section import render
from lmms_eval_tasks.tasks.dare.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    per_question=per_question_correct,
    random_answer=random_answer,
    generated_files=generated_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    hooks=HOOKS,
)
