"""``lmms-eval-tasks prepare vqdv1``: the authors' ``VQDv1_sampling.json`` + COCO val2014 images."""

from __future__ import annotations

from collections import Counter
from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.preparing import DatasetKind
from lmms_eval_tasks.tasks.vqdv1.scoring import gt_boxes

REQUIRED_FIELDS = (
    "question_id",
    "question",
    "gtbox",
    "question_type",
    "image_id",
    "width",
    "height",
    "file_name",
)


def image_candidates(entry: dict[str, Any]) -> list[str]:
    """``<file_name>`` directly in --images, or under ``val2014/`` (the authors' LAVIS layout)."""
    name = str(entry.get("file_name") or "")
    return [name, f"val2014/{name}"]


def _boxes(entry: dict[str, Any], index: int) -> list[list[float]]:
    value = require_field(entry, "gtbox", index, list)
    gt_boxes(value, index)  # validates: RecordError naming the entry and 'gtbox'
    return [[float(v) for v in box] for box in value] if value not in ([], [[]]) else [[]]


def _size(entry: dict[str, Any], name: str, index: int) -> int:
    value = require_field(entry, name, index, int)
    if isinstance(value, bool) or value <= 0:
        raise RecordError(index, name, f"expected a positive image size, got {value!r}")
    return value


def convert(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One dataset row in the official schema (``gtbox`` as float lists, ``[[]]`` for none), typed, plus
    ``row``: its position in the annotation file, the record identity (queries repeat on purpose)."""
    return {
        "row": index,
        "question_id": require_field(entry, "question_id", index, (int, str)),
        "question": require_field(entry, "question", index, str),
        "gtbox": _boxes(entry, index),
        "question_type": require_field(entry, "question_type", index, str),
        "image_id": require_field(entry, "image_id", index, (int, str)),
        "width": _size(entry, "width", index),
        "height": _size(entry, "height", index),
        "file_name": require_field(entry, "file_name", index, str),
    }


def repeats(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """How many queries the subset repeats: the authors sampled with replacement, so a repeated query is a
    second row (its own record, identity ``(question_id, row)``), not a duplicate."""
    counts = Counter(str(row["question_id"]) for row in rows)
    repeated = {key: count for key, count in counts.items() if count > 1}
    note = (
        f"{len(repeated)} queries repeat ({sum(repeated.values()) - len(repeated)} extra rows; sampled with "
        "replacement as in the authors' subset): each row is its own record, identified by 'row'"
    )
    return {
        "repeated_queries": len(repeated),
        "repeated_rows": sum(repeated.values()) - len(repeated),
        "note": note,
    }


PREPARERS = [
    DatasetKind(
        name="vqdv1",
        help="VQDv1: VQDv1_sampling.json (the paper's slim subset) + the COCO val2014 image folder",
        required_fields=REQUIRED_FIELDS,
        image_candidates=image_candidates,
        convert=convert,
        summarize=repeats,
    )
]
