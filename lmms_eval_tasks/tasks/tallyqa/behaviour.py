"""The behaviour of tallyqa: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.revisiting.generate import tallyqa_files
from lmms_eval_tasks.tasks.tallyqa.config import score_options
from lmms_eval_tasks.tasks.tallyqa.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.tallyqa.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.tallyqa.report_section import render
from lmms_eval_tasks.tasks.tallyqa.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    per_question=per_question_correct,
    random_answer=random_answer,
    generated_files=tallyqa_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    hooks=HOOKS,
)
