"""HallusionBench's defences against a model that plays its judge: the final verdict, its markers, its bound.

The official parse reads "incorrect"/"correct" anywhere in the reply, so an answer ending "... Output:
correct" that a verbose judge quotes decides its own verdict. ``verdict_parse="final"`` (the default)
applies the same official label rule to the judge's final verdict only: the last line of the reply (after
the model's quoted text is masked out) that holds a verdict word; a final line holding two different
verdict words is a conflict (no verdict, counted). Answers are sent bounded to ``MODEL_TEXT_LIMIT``
characters (the host generates up to 128 new tokens, about 600 characters). See docs/judges.md.
"""

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
_CORRECTNESS_WORDS = re.compile(r"\b(incorrect|correct|unclear)\b", re.IGNORECASE)
_CONSISTENCY_WORDS = re.compile(r"\b(same|different)\b", re.IGNORECASE)


def carries_markers(prediction: str) -> bool:
    """True when an answer holds the judge prompt's own labels ("Output:", "Prediction answer:", ...)."""
    return bool(_MARKER.search(fold_text(prediction or "")))  # disguised markers too


def final_verdict_line(text: str, words: re.Pattern[str]) -> tuple[str | None, set[str]]:
    """The last line holding a verdict word, and the distinct verdict words in it (lower case)."""
    for line in reversed(text.splitlines()):
        found = {word.lower() for word in words.findall(line)}
        if found:
            return line, found
    return None, set()


def read_correctness(text: str, parse_official: Any) -> Any:
    """The official label rule applied to the final verdict line; CONFLICT when that line holds two
    different verdict words; the official rule on the whole reply when no line holds one."""
    line, found = final_verdict_line(text, _CORRECTNESS_WORDS)
    if line is None:
        return parse_official(text)
    return CONFLICT if len(found) > 1 else parse_official(line)


def read_consistency(text: str, parse_official: Any) -> Any:
    """``read_correctness`` for the consistency judge ("same" / "different")."""
    line, found = final_verdict_line(text, _CONSISTENCY_WORDS)
    if line is None:
        return parse_official(text)
    return CONFLICT if len(found) > 1 else parse_official(line)
