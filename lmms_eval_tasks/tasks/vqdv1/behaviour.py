"""The behaviour of vqdv1: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.revisiting.generate import vqdv1_files
from lmms_eval_tasks.tasks.vqdv1.config import score_options
from lmms_eval_tasks.tasks.vqdv1.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.vqdv1.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.vqdv1.report_section import render
from lmms_eval_tasks.tasks.vqdv1.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    per_question=per_question_correct,
    random_answer=random_answer,
    generated_files=vqdv1_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    hooks=HOOKS,
)
