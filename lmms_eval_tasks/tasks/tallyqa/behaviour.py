"""TallyQA's behaviour: its scorer and report section, the Revisiting family's hooks, parsers and options."""

from lmms_eval_tasks.tasks.tallyqa.hooks import SHARED
from lmms_eval_tasks.tasks.tallyqa.report_section import render
from lmms_eval_tasks.tasks.tallyqa.scoring import per_question_correct, score

BEHAVIOUR = SHARED.behaviour(score, per_question_correct, render)
