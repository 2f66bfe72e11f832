"""``lmms-eval-tasks prepare dvqa``: the authors' ``DVQA_sampling.json`` + DVQA's bar-chart images."""

from __future__ import annotations

from typing import Any

from lmms_eval_tasks.framework.input_checks import RecordError, require_field
from lmms_eval_tasks.framework.preparing import DatasetKind
from lmms_eval_tasks.tasks.dvqa.scoring import TEMPLATES


def image_candidates(entry: dict[str, Any]) -> list[str]:
    """``<image>`` directly in --images, or under ``images/`` (DVQA's archive layout)."""
    image = str(entry.get("image", ""))
    return [image, f"images/{image}"]


def convert(entry: dict[str, Any], index: int) -> dict[str, Any]:
    """One dataset row: typed fields; the file's ``image`` name becomes ``image_file``."""
    template = require_field(entry, "template_id", index, str)
    if template not in TEMPLATES:
        raise RecordError(index, "template_id", f"unknown DVQA template {template!r}; known: {TEMPLATES}")
    answer = require_field(entry, "answer", index, (str, int, float))
    bbox = entry.get("answer_bbox") or []
    if not isinstance(bbox, list) or not all(isinstance(v, int | float) for v in bbox):
        raise RecordError(index, "answer_bbox", f"expected a list of numbers, got {bbox!r:.80}")
    return {
        "question_id": require_field(entry, "question_id", index, (int, str)),
        "question": require_field(entry, "question", index, str),
        "template_id": template,
        "answer": answer if isinstance(answer, str) else str(answer),
        "answer_bbox": [float(v) for v in bbox],
        "image_file": require_field(entry, "image", index, str),
    }


PREPARERS = [
    DatasetKind(
        name="dvqa",
        help="DVQA: DVQA_sampling.json (the paper's slim subset) + DVQA's image folder",
        required_fields=("question", "question_id", "template_id", "answer", "image"),
        image_candidates=image_candidates,
        convert=convert,
    )
]
