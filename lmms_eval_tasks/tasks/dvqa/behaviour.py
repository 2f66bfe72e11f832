"""The behaviour of dvqa: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.dvqa.config import score_options
from lmms_eval_tasks.tasks.dvqa.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.dvqa.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.dvqa.report_section import render
from lmms_eval_tasks.tasks.dvqa.scoring import per_question_correct, score
from lmms_eval_tasks.tasks.revisiting.generate import dvqa_files

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    per_question=per_question_correct,
    random_answer=random_answer,
    generated_files=dvqa_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    hooks=HOOKS,
)
