"""TDIUC: the match rule, and the digits-to-words rule it shares with TallyQA and DVQA.

Light at import: targets are ``"module:function"`` strings, resolved on use; ``framework.parser_index.
all_parsers`` collects this list through ``Benchmark.parsers``.
"""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

PARSERS: list[ParserEntry] = [
    ParserEntry(
        "tdiuc.is_correct", "lmms_eval_tasks.tasks.tdiuc.scoring:is_correct", ("bool",), {"label": "dog"}
    ),
    ParserEntry(
        "tdiuc.is_correct[official]",
        "lmms_eval_tasks.tasks.tdiuc.scoring:is_correct",
        ("bool",),
        {"label": "3", "protocol": "official"},
    ),
    ParserEntry(
        "revisiting.digits_to_words", "lmms_eval_tasks.tasks.revisiting.scoring:digits_to_words", ("str",)
    ),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(yes_no=True, numbers=True)
