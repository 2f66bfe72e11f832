"""The behaviour of hallusionbench: scorer, hooks, parsers and checks by reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.hallusionbench.config import judge_needed, score_options
from lmms_eval_tasks.tasks.hallusionbench.generate import generated_files
from lmms_eval_tasks.tasks.hallusionbench.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.hallusionbench.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.hallusionbench.report_section import render
from lmms_eval_tasks.tasks.hallusionbench.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    per_question=per_question_correct,
    random_answer=random_answer,
    generated_files=generated_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    judge_needed=judge_needed,
    hooks=HOOKS,
)
