"""The paper's "slim" stratified sampling (Revisiting MLLM Evaluation, section 3), seeded: groups by
(question type, answer), ratio r and minimum k per group (docs/revisiting.md, "The slim subsets")."""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError


def group_quota(size: int, ratio: float, minimum: int) -> int:
    """How many of a group of ``size`` are kept: size if size <= k; k if size*r < k; else ceil(size*r)."""
    if size <= minimum:
        return size
    scaled = size * ratio
    if scaled < minimum:
        return minimum
    return min(size, math.ceil(scaled - 1e-9))


ROUNDINGS = ("paper", "official")


def official_group_quota(size: int, total: int, ratio: float, minimum: int) -> int:
    """The authors' ``dataset_sampling`` quota, in floating point as their pandas code: ``int(int(r * total) *
    size / total)``, at least k (the whole group when smaller); r = 1 keeps everything."""
    if ratio >= 1:
        return size
    share = size / total
    if total * share < minimum:
        return min(size, int(total * share))
    required = int(int(ratio * total) * share)
    return minimum if required < minimum else min(size, required)


@dataclass(frozen=True)
class SlimKind:
    """How one dataset is stratified: its question type and answer per entry, defaults, keep-all rule."""

    name: str
    question_type: Callable[[dict[str, Any]], Any]
    answer: Callable[[dict[str, Any]], Any]
    ratio: float
    minimum: int = 200
    keep_all: Callable[[dict[str, Any]], bool] | None = None


def vqdv1_boxes(entry: dict[str, Any]) -> int:
    """Number of ground-truth boxes of a VQDv1 query (``[[]]`` is zero boxes)."""
    boxes = entry["gtbox"]
    return sum(1 for box in boxes if box)


KINDS: dict[str, SlimKind] = {
    "tdiuc": SlimKind("tdiuc", itemgetter("question_type"), itemgetter("labeled_answer"), ratio=0.05),
    "dvqa": SlimKind("dvqa", itemgetter("template_id"), itemgetter("answer"), ratio=0.025),
    "tallyqa": SlimKind("tallyqa", itemgetter("issimple"), itemgetter("answer"), ratio=1.0),
    "vqdv1": SlimKind(
        "vqdv1",
        itemgetter("question_type"),
        vqdv1_boxes,
        ratio=0.1,
        keep_all=lambda entry: vqdv1_boxes(entry) > 1,
    ),
}


@dataclass
class SlimResult:
    """The kept entries (original order) and per-question-type counts (total, kept)."""

    entries: list[dict[str, Any]]
    counts: dict[str, tuple[int, int]]


def slim(
    entries: Sequence[dict[str, Any]],
    kind: SlimKind,
    *,
    ratio: float | None = None,
    minimum: int | None = None,
    seed: int = 0,
    group_by: str = "type+answer",
    rounding: str = "paper",
) -> SlimResult:
    """The stratified rule on ``entries``: ``rounding`` "paper" ``ceil(m * r)`` per group, "official" the
    authors' ``int(int(r * N) * m / N)`` (``official_group_quota``); RecordError on a missing field."""
    ratio = kind.ratio if ratio is None else ratio
    minimum = kind.minimum if minimum is None else minimum
    if not 0 < ratio <= 1:
        raise ValueError(f"ratio must be in (0, 1], got {ratio}")
    if minimum < 0:
        raise ValueError(f"minimum must be >= 0, got {minimum}")
    if group_by not in ("type+answer", "type"):
        raise ValueError(f"group_by must be 'type+answer' or 'type', got {group_by!r}")
    if rounding not in ROUNDINGS:
        raise ValueError(f"rounding must be 'paper' or 'official', got {rounding!r}")
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    kept: list[int] = []
    types: list[str] = []
    for index, entry in enumerate(entries):
        try:
            question_type = str(kind.question_type(entry))
            answer = "" if group_by == "type" else str(kind.answer(entry))
            keep = kind.keep_all(entry) if kind.keep_all else False
        except (KeyError, TypeError) as error:
            raise RecordError(
                index, str(error).strip("'"), "missing or malformed (needed for stratification)"
            ) from None
        types.append(question_type)
        if keep:
            kept.append(index)
        else:
            groups[(question_type, answer)].append(index)
    rng = random.Random(seed)
    sampled = sum(len(members) for members in groups.values())
    for key in sorted(groups):
        members = groups[key]
        if rounding == "official":
            quota = official_group_quota(len(members), sampled, ratio, minimum)
        else:
            quota = group_quota(len(members), ratio, minimum)
        kept.extend(rng.sample(members, quota))
    kept.sort()
    totals, kept_counts = Counter(types), Counter(types[index] for index in kept)
    counts = {name: (totals[name], kept_counts[name]) for name in sorted(totals)}
    return SlimResult([entries[index] for index in kept], counts)


def merge_tdiuc(questions: dict[str, Any], annotations: dict[str, Any]) -> list[dict[str, Any]]:
    """TDIUC's question and annotation files joined by question_id into the slim schema (as the authors')."""
    by_id = {item["question_id"]: item for item in annotations["annotations"]}
    merged = []
    for index, question in enumerate(questions["questions"]):
        annotation = by_id.get(question["question_id"])
        if annotation is None:
            raise RecordError(index, "question_id", f"no annotation for question {question['question_id']}")
        merged.append(
            {
                "index": index,
                "question_id": question["question_id"],
                "question": question["question"],
                "image_id": question["image_id"],
                "labeled_answer": annotation["answers"][0]["answer"],
                "question_type": annotation["question_type"],
            }
        )
    return merged


def format_counts(counts: dict[str, tuple[int, int]]) -> str:
    """A Markdown table of per-type counts (the paper's Tables 7-9), with a total row."""
    lines = ["| question type | full | slim |", "|---|---:|---:|"]
    for name, (total, kept) in counts.items():
        lines.append(f"| {name} | {total} | {kept} |")
    lines.append(
        f"| **total** | {sum(t for t, _ in counts.values())} | {sum(k for _, k in counts.values())} |"
    )
    return "\n".join(lines)
