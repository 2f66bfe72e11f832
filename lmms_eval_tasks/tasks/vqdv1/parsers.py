"""VQDv1's parsers of predicted boxes (default rule, the official script's extraction, Qwen-VL's <box>
syntax), as ``"module:function"`` targets resolved on use."""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening

_VQD = "lmms_eval_tasks.tasks.vqdv1.scoring"
SIZE = {"width": 640, "height": 480}

PARSERS: list[ParserEntry] = [
    *(
        ParserEntry(f"vqdv1.parse_boxes{label}", f"{_VQD}:parse_boxes", ("list",), {**SIZE, **how})
        for label, how in (("", {}), ("[official]", {"official": True}), ("[qwen]", {"syntax": "qwen"}))
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
