"""DVQA's behaviour: its scorer and report section, the Revisiting family's hooks, parsers and options."""

from lmms_eval_tasks.tasks.dvqa.hooks import SHARED
from lmms_eval_tasks.tasks.dvqa.report_section import render
from lmms_eval_tasks.tasks.dvqa.scoring import per_question_correct, score

BEHAVIOUR = SHARED.behaviour(score, per_question_correct, render)
