"""VRB: the VQAv2 answer normalisation and accuracy, as lazily resolved ``"module:function"`` targets."""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

PARSERS: list[ParserEntry] = [
    ParserEntry("vrb.normalize_answer", "lmms_eval_tasks.tasks.vrb.scoring:normalize_answer", ("str",)),
    ParserEntry(
        "vrb.vqa_accuracy",
        "lmms_eval_tasks.tasks.vrb.scoring:vqa_accuracy",
        ("float",),
        {"answers": ["two", "2", "2 dogs", "two", "2", "2", "two dogs", "2", "2", "2"]},
    ),
    ParserEntry(
        "vrb.vqa_accuracy[official]",
        "lmms_eval_tasks.tasks.vrb.scoring:vqa_accuracy",
        ("float",),
        {"answers": ["yes"] * 10, "multiple_choice_answer": "yes", "protocol": "official"},
    ),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(yes_no=True, numbers=True)
