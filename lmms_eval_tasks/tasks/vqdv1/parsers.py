"""VQDv1's parsers of predicted boxes (default rule, the official script's extraction, Qwen-VL's <box>
syntax), as ``"module:function"`` targets resolved on use."""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

_VQD = "lmms_eval_tasks.tasks.vqdv1.scoring"

PARSERS: list[ParserEntry] = [
    ParserEntry("vqdv1.parse_boxes", f"{_VQD}:parse_boxes", ("list",), {"width": 640, "height": 480}),
    ParserEntry(
        "vqdv1.parse_boxes[official]",
        f"{_VQD}:parse_boxes",
        ("list",),
        {"width": 640, "height": 480, "official": True},
    ),
    ParserEntry(
        "vqdv1.parse_boxes[qwen]",
        f"{_VQD}:parse_boxes",
        ("list",),
        {"width": 640, "height": 480, "syntax": "qwen"},
    ),
    ParserEntry("vqdv1.is_explicit_empty", f"{_VQD}:is_explicit_empty", ("bool",)),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(
    yes_no=True,
    explicit_empty=f"{_VQD}:is_explicit_empty",  # "[[]]" is the answer syntax for no box, not a master key
    hedges_rewarded=(
        "VQDv1's metric (the paper's) scores an answer with no box as 'no box', which is right on zero-box "
        "queries: kept as defined; answers without boxes are counted by the scorer ('unparsed')."
    ),
)
