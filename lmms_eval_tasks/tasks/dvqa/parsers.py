"""DVQA: the match rule, and the official digits-to-words rule (powers of ten).

Light at import: targets are ``"module:function"`` strings, resolved on use; ``framework.parser_index.
all_parsers`` collects this list through ``Benchmark.parsers``.
"""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

PARSERS: list[ParserEntry] = [
    ParserEntry(
        "dvqa.is_correct", "lmms_eval_tasks.tasks.dvqa.scoring:is_correct", ("bool",), {"answer": "10"}
    ),
    ParserEntry(
        "dvqa.is_correct[official]",
        "lmms_eval_tasks.tasks.dvqa.scoring:is_correct",
        ("bool",),
        {"answer": "10", "protocol": "official"},
    ),
    ParserEntry(
        "revisiting.official_digits_to_words",
        "lmms_eval_tasks.tasks.revisiting.scoring:official_digits_to_words",
        ("str",),
        {"powers_of_ten": True},
    ),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(yes_no=True, numbers=True)
