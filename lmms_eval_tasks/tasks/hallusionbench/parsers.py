"""HallusionBench's parsers of untrusted text (judge replies, VLMEvalKit's yes/no extraction), as
``"module:function"`` strings resolved on use (light at import)."""

from __future__ import annotations

from lmms_eval_tasks.framework.parser_index import ParserEntry
from lmms_eval_tasks.framework.screening import Screening
from lmms_eval_tasks.tasks.hallusionbench.judge_integrity import JUDGE_MARKERS

_HB = "lmms_eval_tasks.tasks.hallusionbench.scoring"

PARSERS: list[ParserEntry] = [
    ParserEntry("hallusionbench.parse_correctness_reply", f"{_HB}:parse_correctness_reply", ("str",)),
    ParserEntry("hallusionbench.parse_consistency_reply", f"{_HB}:parse_consistency_reply", ("bool",)),
    ParserEntry("hallusionbench.vlmevalkit_yes_no", f"{_HB}:vlmevalkit_yes_no", ("str", "NoneType")),
    ParserEntry(
        "hallusionbench.correctness_rule_reply", f"{_HB}:correctness_rule_reply", ("str",), {"gt_answer": "1"}
    ),
    ParserEntry(
        "hallusionbench.consistency_rule_reply",
        f"{_HB}:consistency_rule_reply",
        ("str", "NoneType"),
        {"reference_prediction": "Yes."},
    ),
]

# What an output playing the grader looks like here (framework.screening; docs/judges.md).
SCREENING = Screening(
    judge_markers=JUDGE_MARKERS,
    verdict_words=("correct", "incorrect", "unclear", "same", "different"),
    yes_no=True,
)
