"""DARE: one parser per output format, plus the record-level path that `score` and the hooks use."""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

_DARE = "lmms_eval_tasks.tasks.dare.scoring"
_OPTIONS = {"A": "a red apple", "B": "two dogs", "C": "None of the above", "D": "blue"}

PARSERS: list[ParserEntry] = [
    ParserEntry("dare.parse_generated", f"{_DARE}:parse_generated", ("Parsed",), {"options": _OPTIONS}),
    ParserEntry("dare.parse_generated[A-F]", f"{_DARE}:parse_generated", ("Parsed",), {"letters": "ABCDEF"}),
    ParserEntry("dare.parse_letter_list", f"{_DARE}:parse_letter_list", ("Parsed",)),
    ParserEntry("dare.parse_json_answer", f"{_DARE}:parse_json_answer", ("Parsed",)),
    ParserEntry("dare.parse_csv_answer", f"{_DARE}:parse_csv_answer", ("Parsed",)),
    ParserEntry("dare.parse_inverse_answer", f"{_DARE}:parse_inverse_answer", ("Parsed",)),
    ParserEntry("dare.parse_word_answer", f"{_DARE}:parse_word_answer", ("Parsed",)),
    ParserEntry("dare.parse_yes_no", f"{_DARE}:parse_yes_no", ("bool", "NoneType")),
    ParserEntry("dare.hooks._loss_of", "lmms_eval_tasks.tasks.dare.hooks:_loss_of", ("float", "ValueError")),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(
    option_letters="lmms_eval_tasks.tasks.dare.scoring:_letters_for",
    yes_no=True,
    hedges_rewarded=(
        "DARE's multi-correct F1 (the paper's metric) gives partial credit to an answer listing every "
        "option; the metric is kept as defined and such answers are counted here ('hedge')."
    ),
)
