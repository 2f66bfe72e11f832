"""ConTextual's defences against a model that plays its judge: its markers, its length bound (the paper's
models answer in about 1,500 characters), the rule judge's hedges (docs/judges.md, "Judge integrity").
"""

from __future__ import annotations

import re

from lmms_eval_tasks.framework.screening import Screening
from lmms_eval_tasks.judges.integrity import fold_text

MODEL_TEXT_LIMIT = 4000  # characters of the model's answer sent to the judge (counted when cut)
JUDGE_MARKERS = (r"judg(?:e)?ment[*_]*[ \t]*:", r"ground[- ]truth response\s*:", r"predicted response\s*:")
_MARKER = re.compile("|".join(JUDGE_MARKERS), re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|isn't|aren't|wasn't|doesn't|don't|cannot|can't)\b")
_TIME_OR_NUMBER = re.compile(r"\d+(?:[:.,]\d+)*")
_LIST_SEPARATOR = re.compile(r"[,;\n/|]|\bor\b|\band\b")
LIST_HEDGE_ITEMS = 4  # a prediction listing this many candidates or more is a hedge for the rule judge

SCREENING = Screening(judge_markers=JUDGE_MARKERS, yes_no=True)


def carries_markers(prediction: str) -> bool:
    """True when the model's answer holds the judge's own markers ("Judgement:", the prompt's field
    labels): a reply without a clean verdict of the judge's own is then the model's failure."""
    return bool(_MARKER.search(fold_text(prediction or "")))  # disguised markers too


def rule_hedge(prediction: str, reference: str, words: str, reference_words: str) -> str | None:
    """Why the rule judge refuses credit to a prediction containing the reference (negated, among other
    numbers, in a list of candidates), or None; ``words``/``reference_words``: both texts normalised."""
    padded, target = f" {words} ", f" {reference_words} "
    before = padded[: padded.find(target)].split()[-3:]
    if any(_NEGATION.fullmatch(word) for word in before):
        return "negated reference"
    if _TIME_OR_NUMBER.fullmatch(reference.strip().lstrip("$").rstrip(".")):
        values = set(_TIME_OR_NUMBER.findall(prediction))
        if len(values) > 1:
            return f"{len(values)} different numbers for a one-number reference"
    parts = [part for part in _LIST_SEPARATOR.split(prediction) if part.strip()]
    if len(parts) >= LIST_HEDGE_ITEMS:
        return f"a list of {len(parts)} candidates"
    return None
