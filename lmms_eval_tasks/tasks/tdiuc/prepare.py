"""``lmms-eval-tasks prepare tdiuc``: the authors' ``TDIUC_sampling.json`` + COCO val2014 images."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.preparing import DatasetKind
from lmms_eval_tasks.tasks.tdiuc.scoring import QUESTION_TYPES


def coco_file(image_id: int) -> str:
    """COCO val2014 file name of an image id: ``COCO_val2014_000000000042.jpg``."""
    return f"COCO_val2014_{image_id:012d}.jpg"


def _image_id(entry: dict[str, Any], index: int) -> int:
    value = require_field(entry, "image_id", index, (int, str))
    if isinstance(value, bool) or (isinstance(value, str) and not value.isdigit()):
        raise RecordError(index, "image_id", f"expected a COCO image id, got {value!r}")
    return int(value)


def image_candidates(entry: dict[str, Any]) -> list[str]:
    """``val2014/COCO_val2014_<id>.jpg`` (the authors' layout) or the file directly in --images."""
    name = coco_file(_image_id(entry, entry.get("question_id", "?")))
    return [name, f"val2014/{name}"]


def convert(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One dataset row: the slim annotation's fields, typed, plus ``image_file``."""
    question_type = require_field(entry, "question_type", index, str)
    if question_type not in QUESTION_TYPES:
        raise RecordError(index, "question_type", f"unknown TDIUC question type {question_type!r}")
    image_id = _image_id(entry, index)
    return {
        "question_id": require_field(entry, "question_id", index, (int, str)),
        "question": require_field(entry, "question", index, str),
        "image_id": image_id,
        "labeled_answer": require_field(entry, "labeled_answer", index, str),
        "question_type": question_type,
        "image_file": coco_file(image_id),
    }


PREPARERS = [
    DatasetKind(
        name="tdiuc",
        help="TDIUC: TDIUC_sampling.json (the paper's slim subset) + the COCO val2014 image folder",
        required_fields=("question_id", "question", "image_id", "labeled_answer", "question_type"),
        image_candidates=image_candidates,
        convert=convert,
    )
]
