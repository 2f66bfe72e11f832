"""The behaviour of tdiuc: scorer, hooks, parsers and checks by direct reference (named by its entry)."""

from lmms_eval_tasks.framework.registry import Behaviour
from lmms_eval_tasks.tasks.revisiting.generate import tdiuc_files
from lmms_eval_tasks.tasks.tdiuc.config import score_options, wordnet_problem
from lmms_eval_tasks.tasks.tdiuc.hooks import HOOKS, random_answer
from lmms_eval_tasks.tasks.tdiuc.parsers import PARSERS, SCREENING
from lmms_eval_tasks.tasks.tdiuc.report_section import render
from lmms_eval_tasks.tasks.tdiuc.scoring import per_question_correct, score

BEHAVIOUR = Behaviour(
    score=score,
    task_options=score_options,
    per_question=per_question_correct,
    random_answer=random_answer,
    generated_files=tdiuc_files,
    parsers=PARSERS,
    screening=SCREENING,
    report_section=render,
    launch_check=wordnet_problem,
    hooks=HOOKS,
)
