"""ConTextual: judge replies and the rule judge."""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry

PARSERS: list[ParserEntry] = [
    ParserEntry(
        "contextual.parse_judge_reply",
        "lmms_eval_tasks.tasks.contextual.scoring:parse_judge_reply",
        ("bool", "NoneType"),
    ),
    ParserEntry(
        "contextual.parse_judge_reply[official]",
        "lmms_eval_tasks.tasks.contextual.scoring:parse_judge_reply",
        ("bool", "NoneType"),
        {"protocol": "official"},
    ),
    ParserEntry(
        "contextual.rule_reply",
        "lmms_eval_tasks.tasks.contextual.scoring:rule_reply",
        ("str", "NoneType"),
        {"reference": "the stop sign"},
    ),
]
