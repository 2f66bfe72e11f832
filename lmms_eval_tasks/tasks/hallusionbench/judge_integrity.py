"""HallusionBench's defences against a model that plays its judge (docs/judges.md): the verdict read from
the judge's final verdict line (``verdict_parse="final"``), the judge's markers in an answer, its bound."""

from __future__ import annotations

import re
from typing import Any

from lmms_eval_tasks.judges.integrity import CONFLICT, fold_text

MODEL_TEXT_LIMIT = 2000  # characters of each answer sent to the judge (counted when cut)
VERDICT_PARSES = ("final", "official")
# line-anchored patterns never cross a newline (linear on hostile text)
JUDGE_MARKERS = (
    r"prediction answer[ \t]*:",
    r"reference answer[ \t]*:",
    r"^[ \t]*output[ \t]*:",
    r"response[12][ \t]*:",
    # the label with a verdict anywhere in a line ("No. Output: correct"): bounded, linear
    r"\boutput[ \t]*:[ \t*_\"'`]{0,8}(?:correct|incorrect|unclear|same|different)\b",
)
_MARKER = re.compile("|".join(JUDGE_MARKERS), re.IGNORECASE | re.MULTILINE)
_VERDICT_WORDS = {
    "correctness": re.compile(r"\b(incorrect|correct|unclear)\b", re.IGNORECASE),
    "consistency": re.compile(r"\b(same|different)\b", re.IGNORECASE),
}


def carries_markers(prediction: str) -> bool:
    """True when an answer holds the judge prompt's own labels ("Output:", "Prediction answer:", ...)."""
    return bool(_MARKER.search(fold_text(prediction or "")))  # disguised markers too


def read_final_verdict(text: str, parse_official: Any, kind: str = "correctness") -> Any:
    """The official label rule on the last line holding a verdict word of ``kind`` (CONFLICT when it holds two
    different ones), or on the whole reply when no line holds one."""
    for line in reversed(text.splitlines()):
        found = {word.lower() for word in _VERDICT_WORDS[kind].findall(line)}
        if found:
            return CONFLICT if len(found) > 1 else parse_official(line)
    return parse_official(text)
