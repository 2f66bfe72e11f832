"""TallyQA: the count parser.

Light at import: targets are ``"module:function"`` strings, resolved on use; ``framework.parser_index.
all_parsers`` collects this list through ``Benchmark.parsers``.
"""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

PARSERS: list[ParserEntry] = [
    ParserEntry(
        "tallyqa.parse_count", "lmms_eval_tasks.tasks.tallyqa.scoring:parse_count", ("float", "NoneType")
    ),
    ParserEntry(
        "tallyqa.parse_count[official]",
        "lmms_eval_tasks.tasks.tallyqa.scoring:parse_count",
        ("float", "NoneType"),
        {"protocol": "official"},
    ),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(numbers=True)
