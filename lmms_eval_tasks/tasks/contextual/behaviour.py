"""The behaviour of contextual: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.contextual.config import judge_needed, score_options
from lmms_eval_tasks.tasks.contextual.generate import generated_files
from lmms_eval_tasks.tasks.contextual.hooks import HOOKS
from lmms_eval_tasks.tasks.contextual.judge_integrity import SCREENING
from lmms_eval_tasks.tasks.contextual.parsers import PARSERS
from lmms_eval_tasks.tasks.contextual.report_section import render
from lmms_eval_tasks.tasks.contextual.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    per_question=per_question_correct,
    generated_files=generated_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    judge_needed=judge_needed,
    hooks=HOOKS,
)
